// The metrics page as Prometheus reads it: counters by label, gauges, cumulative buckets.
#include "serve/metrics.h"

#include <gtest/gtest.h>

namespace kernelpro::serve {
namespace serve_metrics_test {

bool Has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST(ServeMetricsTest, RendersCountersGaugesAndCumulativeHistogramBuckets) {
  ServeMetrics metrics;
  metrics.CountRequest("eval", 200);
  metrics.CountRequest("eval", 200);
  metrics.CountRequest("eval", 400);
  metrics.CountVerdict("correct");
  metrics.CountVerdict("runtime_error");
  metrics.ObservePhase("total", 0.2);
  metrics.ObservePhase("total", 3);
  metrics.ObservePhase("total", 1000);  // past the last bound: only +Inf
  metrics.ObservePhase("total", -1);    // not an observation
  const std::string text = metrics.RenderText({4, 1, false});
  EXPECT_TRUE(Has(text, "kernelpro_requests_total{route=\"eval\",code=\"200\"} 2")) << text;
  EXPECT_TRUE(Has(text, "kernelpro_requests_total{route=\"eval\",code=\"400\"} 1"));
  EXPECT_TRUE(Has(text, "kernelpro_verdicts_total{status=\"runtime_error\"} 1"));
  EXPECT_TRUE(Has(text, "kernelpro_queue_depth 4"));
  EXPECT_TRUE(Has(text, "kernelpro_running_jobs 1"));
  EXPECT_TRUE(Has(text, "kernelpro_draining 0"));
  EXPECT_TRUE(Has(text, "# TYPE kernelpro_job_phase_seconds histogram"));
  EXPECT_TRUE(Has(text, "kernelpro_job_phase_seconds_bucket{phase=\"total\",le=\"0.1\"} 0"));
  EXPECT_TRUE(Has(text, "kernelpro_job_phase_seconds_bucket{phase=\"total\",le=\"0.25\"} 1"));
  EXPECT_TRUE(Has(text, "kernelpro_job_phase_seconds_bucket{phase=\"total\",le=\"5\"} 2"));
  EXPECT_TRUE(Has(text, "kernelpro_job_phase_seconds_bucket{phase=\"total\",le=\"600\"} 2"));
  EXPECT_TRUE(Has(text, "kernelpro_job_phase_seconds_bucket{phase=\"total\",le=\"+Inf\"} 3"));
  EXPECT_TRUE(Has(text, "kernelpro_job_phase_seconds_sum{phase=\"total\"} 1003.2"));
  EXPECT_TRUE(Has(text, "kernelpro_job_phase_seconds_count{phase=\"total\"} 3"));
}

TEST(ServeMetricsTest, EscapesLabelValues) {
  ServeMetrics metrics;
  metrics.CountVerdict("a\"b\\c\nd");
  EXPECT_TRUE(Has(metrics.RenderText({}), R"(kernelpro_verdicts_total{status="a\"b\\c\nd"} 1)"));
}

}  // namespace serve_metrics_test
}  // namespace kernelpro::serve
