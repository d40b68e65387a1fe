#include "serve/metrics.h"

#include <charconv>
#include <sstream>

namespace kernelpro::serve {
namespace {

// The shortest text that reads back as `v` (0.05, not 0.050000000000000003).
std::string Number(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string("NaN");
}

// A label value as the text format wants it: backslash, quote and newline escaped.
std::string Label(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

const std::vector<double>& ServeMetrics::Buckets() {
  static const std::vector<double> buckets = {0.05, 0.1, 0.25, 0.5, 1,   2.5, 5,
                                              10,   20,  30,   60,  120, 300, 600};
  return buckets;
}

void ServeMetrics::CountRequest(const std::string& route, int code) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++requests_[{route, code}];
}

void ServeMetrics::CountVerdict(const std::string& status) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++verdicts_[status];
}

void ServeMetrics::ObservePhase(const std::string& phase, double seconds) {
  if (!(seconds >= 0)) return;  // NaN or negative: not an observation
  std::lock_guard<std::mutex> lock(mutex_);
  Histogram& h = phases_[phase];
  const std::vector<double>& bounds = Buckets();
  if (h.counts.empty()) h.counts.assign(bounds.size(), 0);
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    if (seconds <= bounds[i]) {
      ++h.counts[i];
      break;
    }
  }
  ++h.count;
  h.sum += seconds;
}

std::string ServeMetrics::RenderText(const Gauges& gauges) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::ostringstream out;
  out << "# HELP kernelpro_requests_total HTTP requests answered, by route and status code.\n"
      << "# TYPE kernelpro_requests_total counter\n";
  for (const auto& [key, n] : requests_) {
    out << "kernelpro_requests_total{route=\"" << Label(key.first) << "\",code=\"" << key.second
        << "\"} " << n << "\n";
  }
  out << "# HELP kernelpro_verdicts_total Evaluations finished, by verdict status.\n"
      << "# TYPE kernelpro_verdicts_total counter\n";
  for (const auto& [status, n] : verdicts_) {
    out << "kernelpro_verdicts_total{status=\"" << Label(status) << "\"} " << n << "\n";
  }
  out << "# HELP kernelpro_queue_depth Evaluations accepted and waiting for a device.\n"
      << "# TYPE kernelpro_queue_depth gauge\n"
      << "kernelpro_queue_depth " << gauges.queued << "\n"
      << "# HELP kernelpro_running_jobs Evaluations running now.\n"
      << "# TYPE kernelpro_running_jobs gauge\n"
      << "kernelpro_running_jobs " << gauges.running << "\n"
      << "# HELP kernelpro_draining 1 while the server finishes its jobs and refuses new ones.\n"
      << "# TYPE kernelpro_draining gauge\n"
      << "kernelpro_draining " << (gauges.draining ? 1 : 0) << "\n";
  out << "# HELP kernelpro_job_phase_seconds Seconds an evaluation spent in each phase.\n"
      << "# TYPE kernelpro_job_phase_seconds histogram\n";
  const std::vector<double>& bounds = Buckets();
  for (const auto& [phase, h] : phases_) {
    long long cumulative = 0;
    for (std::size_t i = 0; i < bounds.size(); ++i) {
      cumulative += h.counts[i];
      out << "kernelpro_job_phase_seconds_bucket{phase=\"" << Label(phase) << "\",le=\""
          << Number(bounds[i]) << "\"} " << cumulative << "\n";
    }
    out << "kernelpro_job_phase_seconds_bucket{phase=\"" << Label(phase) << "\",le=\"+Inf\"} "
        << h.count << "\n"
        << "kernelpro_job_phase_seconds_sum{phase=\"" << Label(phase) << "\"} " << Number(h.sum)
        << "\n"
        << "kernelpro_job_phase_seconds_count{phase=\"" << Label(phase) << "\"} " << h.count
        << "\n";
  }
  return out.str();
}

}  // namespace kernelpro::serve
