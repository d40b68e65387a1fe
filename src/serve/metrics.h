// The evaluation server's metrics, rendered in Prometheus' text format (version 0.0.4) for
// `GET /v1/metrics`: counters of requests (by route and answer code) and verdicts (by status),
// the jobs queued and running, and histograms of each job's latency by phase (queue, build,
// check, time, total: seconds).
//
// Thread-safe: the HTTP handlers and the job threads record into one ServeMetrics at once.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace kernelpro::serve {

class ServeMetrics {
 public:
  void CountRequest(const std::string& route, int code);
  void CountVerdict(const std::string& status);
  // One observation of `phase` (queue, build, check, time, total), in seconds.
  void ObservePhase(const std::string& phase, double seconds);
  // The gauges' values now: given when rendering, so they are never stale.
  struct Gauges {
    int queued = 0;
    int running = 0;
    bool draining = false;
  };
  std::string RenderText(const Gauges& gauges) const;

  // The upper bounds of the latency buckets, seconds (the last bucket, +Inf, is implicit).
  static const std::vector<double>& Buckets();

 private:
  struct Histogram {
    std::vector<long long> counts;  // one per bucket, not cumulative
    long long count = 0;
    double sum = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, long long> requests_;
  std::map<std::string, long long> verdicts_;
  std::map<std::string, Histogram> phases_;
};

}  // namespace kernelpro::serve
