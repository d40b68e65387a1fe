#include "profile/collect.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "profile/ncu_catalog.h"
#include "profile/ncu_csv.h"
#include "profile/ncu_runner.h"
#include "profile/sass.h"
#include "profile/timeline.h"

namespace kernelpro::profile {
namespace {

std::string ReadFile(const std::string& path, std::vector<std::string>& notes) {
  if (path.empty()) return "";
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    notes.push_back("cannot read " + path);
    return "";
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Reads the ncu CSV while the view is built: what the SASS says (entry kernels, library calls)
// selects the candidate's kernels as rows stream by, and the reader's notes join the record's.
NcuReadOptions NcuSelection(const Metrics& m) {
  NcuReadOptions options;
  if (m.sass && (!m.sass->entry_points.empty() || !m.sass->library_calls.empty())) {
    options.select_candidate_kernels = true;
    options.entry_points = m.sass->entry_points;
    options.calls_libraries = !m.sass->library_calls.empty();
  }
  return options;
}

void AddNcu(Result<NcuView> parsed, Metrics& m) {
  if (!parsed.ok()) {
    m.notes.push_back("ncu: " + parsed.status().message());
    return;
  }
  for (const std::string& note : parsed->notes) m.notes.push_back("ncu: " + note);
  parsed->notes.clear();
  m.ncu = std::move(*parsed);
}

Metrics CollectSass(const ArtifactTexts& t) {
  Metrics m;
  if (!t.sass.empty() || !t.res_usage.empty() || !t.symbols.empty() || !t.nm.empty()) {
    m.sass = CombineSass(t.sass, t.res_usage, t.symbols, t.nm);
    if (!t.sass.empty() && m.sass->kernels.empty())
      m.notes.push_back("sass: no kernels found in the SASS dump");
  }
  return m;
}

// Kernels past this many are counted, not listed, in the human rendering (--json lists them all).
constexpr std::size_t kMaxRenderedKernels = 50;

std::string Fmt(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

}  // namespace

ArtifactPaths ArtifactsIn(const std::string& dir, const std::string& name) {
  namespace fs = std::filesystem;
  auto pick = [&](const std::string& suffix) {
    fs::path p = fs::path(dir) / (name + suffix);
    std::error_code ec;  // an unreadable directory holds nothing usable: no exception
    return fs::exists(p, ec) ? p.string() : std::string();
  };
  ArtifactPaths paths{pick(".ncu.csv"),     pick(".sass.txt"), pick(".resusage.txt"),
                      pick(".symbols.txt"), pick(".nm.txt"),   pick(".trace.json")};
  if (paths.trace.empty()) paths.trace = pick(".nsys.sqlite");
  return paths;
}

Metrics CollectFromTexts(const ArtifactTexts& t) {
  Metrics m = CollectSass(t);
  if (!t.ncu_csv.empty()) AddNcu(ParseNcuCsv(t.ncu_csv, NcuSelection(m)), m);
  return m;
}

Metrics CollectFromArtifacts(const ArtifactPaths& paths) {
  std::vector<std::string> notes;
  ArtifactTexts texts{"", ReadFile(paths.sass, notes), ReadFile(paths.res_usage, notes),
                      ReadFile(paths.symbols, notes), ReadFile(paths.nm, notes)};
  Metrics m = CollectSass(texts);
  // The ncu CSV is the one artifact that grows with the profiled program (a row of ~400 counters
  // per launch): it is streamed from the file, never held whole.
  if (!paths.ncu_csv.empty()) {
    std::ifstream in(paths.ncu_csv, std::ios::binary);
    if (!in) {
      notes.push_back("cannot read " + paths.ncu_csv);
    } else if (in.peek() != std::ifstream::traits_type::eof()) {
      AddNcu(ReadNcuCsv(in, NcuSelection(m)), m);
    }
  }
  if (!paths.trace.empty()) {
    Result<TimelineSummary> timeline = Status::NotFound("");
    if (paths.trace.size() > 7 && paths.trace.substr(paths.trace.size() - 7) == ".sqlite") {
      timeline = ParseNsysSqlite(paths.trace);
    } else {
      timeline = ParseTorchProfilerTrace(ReadFile(paths.trace, notes));
    }
    if (timeline.ok()) {
      m.timeline = std::move(*timeline);
    } else {
      m.notes.push_back("timeline: " + timeline.status().message());
    }
  }
  m.notes.insert(m.notes.begin(), notes.begin(), notes.end());
  return m;
}

std::string RenderMetrics(const Metrics& m) {
  std::ostringstream out;
  if (m.ncu) {
    out << "ncu: " << m.ncu->kernels.size() << " kernel launch(es)\n";
    auto show = [&](const NcuKernel& k) {
      out << "  " << DemangleKernelName(k.name) << "\n    duration "
          << Fmt("%.2f us", k.duration_ns() / 1e3);
      for (std::string_view key : {kNcuSmThroughputPct, kNcuMemoryThroughputPct, kNcuDramBytesRead,
                                   kNcuAchievedOccupancyPct, kNcuRegistersPerThread}) {
        auto it = k.values.find(std::string(key));
        if (it != k.values.end()) out << ", " << key << " " << Fmt("%.4g", it->second);
      }
      out << "\n";
    };
    for (std::size_t i = 0; i < m.ncu->kernels.size() && i < kMaxRenderedKernels; ++i) {
      show(m.ncu->kernels[i]);
    }
    if (m.ncu->kernels.size() > kMaxRenderedKernels) {
      out << "  ... and " << m.ncu->kernels.size() - kMaxRenderedKernels
          << " more launch(es) (--json lists every one)\n";
    }
    if (m.ncu->kernels.size() > 1) show(m.ncu->aggregate);
  }
  if (m.sass) {
    out << "sass: " << (m.sass->arch.empty() ? "?" : m.sass->arch) << ", " << m.sass->kernels.size()
        << " function(s)";
    if (!m.sass->library_calls.empty()) {
      out << ", library calls:";
      for (const std::string& c : m.sass->library_calls) out << " " << c;
    }
    out << "\n";
    for (const SassKernel& k : m.sass->kernels) {
      out << "  " << DemangleKernelName(k.name) << ": " << k.total_instructions << " instructions, "
          << k.registers << " registers, " << k.stack_bytes << " B stack (spills), "
          << k.local_bytes << " B local";
      for (const auto& [category, count] : k.categories) {
        if (count > 0) out << ", " << category << " " << count;
      }
      out << "\n";
    }
  }
  if (m.timeline) {
    const TimelineSummary& t = *m.timeline;
    out << "timeline (" << t.source << "): " << Fmt("%.1f us", t.end_to_end_us) << " end to end, "
        << t.kernel_count << " kernels, GPU busy " << Fmt("%.1f us", t.gpu_busy_us)
        << ", launch overhead " << Fmt("%.1f%%", 100 * t.launch_overhead_share)
        << ", launch latency " << Fmt("%.1f us", t.avg_launch_latency_us) << ", " << t.sync_calls
        << " syncs (" << Fmt("%.1f us", t.sync_time_us) << "), " << t.gaps.size() << " idle gaps > "
        << Fmt("%.1f us", t.gap_threshold_us) << "\n";
    for (const MemcpySummary& c : t.memcpy) {
      out << "  memcpy " << c.direction << ": " << c.count << " copies, " << c.bytes << " B, "
          << Fmt("%.1f us", c.time_us) << "\n";
    }
  }
  for (const std::string& note : m.notes) out << "note: " << note << "\n";
  return out.str();
}

}  // namespace kernelpro::profile
