// Test helpers for the system tools: run a tool on a recorded H200 fixture the way the registry
// would (MetricSet from the record, context from MakeToolContext).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "profile/collect.h"
#include "tools/builtin/ncu_fixture_testing.h"
#include "tools/metric_set.h"
#include "tools/registry.h"
#include "tools/tool_testing.h"

namespace kernelpro::tools::testing {

// A recorded case, by directory under tests/fixtures and name.
struct FixtureCase {
  std::string dir, name;
};

// Every recording the tools are swept over.
inline std::vector<FixtureCase> AllFixtureCases() {
  std::vector<FixtureCase> cases;
  for (const char* name : {"k_naive_matmul", "k_strided_copy", "k_swish_scalar", "k_swish_vec",
                           "k_wmma", "p_cublas_bf16", "p_many_launches"}) {
    cases.push_back({"h200", name});
  }
  for (const char* name :
       {"linear_gelu", "rms_norm", "scaled_softmax", "swish", "tiny_mlp", "tril_matmul"}) {
    cases.push_back({"h200-profile/profiles", name});
  }
  for (const char* name : {"wgmma_tile", "cp_async_copy", "cublas_tril", "tril_matmul_reference"}) {
    cases.push_back({"h200-profile/record", name});
  }
  return cases;
}

// The tool's output on a recorded case (the record stays alive for the context's pointer).
struct FixtureRun {
  std::shared_ptr<profile::Metrics> record;
  MetricSet set;
  ToolContext context;
  ToolOutput output;
};

// The recordings under tests/fixtures/h200 come from the case programs there (cases/common.py),
// not from the worker: their traces cover the whole program and hold two syncs of the program's
// own (before and after its runs), where the worker makes one. CaseOverrides tells sync_calls so.
inline ThresholdOverrides CaseOverrides(const FixtureCase& fixture) {
  ThresholdOverrides overrides;
  if (fixture.dir == "h200") overrides["sync_calls"]["harness_syncs"] = 2;
  return overrides;
}

inline FixtureRun RunOnFixture(const ProfilingTool& tool, const FixtureCase& fixture,
                               std::optional<roofline::Bottleneck> bottleneck = std::nullopt) {
  Fixture loaded = LoadFixture(fixture.dir, fixture.name);
  FixtureRun run;
  run.context = loaded.Context(bottleneck, CaseOverrides(fixture));
  run.record = loaded.record;
  run.set = std::move(loaded.set);
  run.output = RunTool(tool, run.set, run.context);
  return run;
}

}  // namespace kernelpro::tools::testing
