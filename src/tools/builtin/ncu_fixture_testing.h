// Test helper: the MetricSet and tool context of a recorded H200 fixture
// (tests/fixtures/h200/k_NAME.*, tests/fixtures/h200-profile/{profiles,record}/NAME.*).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "profile/collect.h"
#include "tools/metric_set.h"
#include "tools/registry.h"
#include "tools/tool.h"

namespace kernelpro::tools::testing {

struct Fixture {
  std::shared_ptr<profile::Metrics> record;
  MetricSet set;
  ToolContext Context(std::optional<roofline::Bottleneck> bottleneck = std::nullopt,
                      ThresholdOverrides overrides = {}) const {
    AnalysisOptions options;
    options.bottleneck = bottleneck;
    options.overrides = std::move(overrides);
    return MakeToolContext(*record, set, options);
  }
};

// dir: "h200", "h200-profile/profiles" or "h200-profile/record"; name without extension.
inline Fixture LoadFixture(const std::string& dir, const std::string& name) {
  Fixture f;
  f.record = std::make_shared<profile::Metrics>(profile::CollectFromArtifacts(
      profile::ArtifactsIn(std::string(KERNELPRO_SOURCE_DIR) + "/tests/fixtures/" + dir, name)));
  f.set = BuildMetricSet(*f.record);
  return f;
}

}  // namespace kernelpro::tools::testing
