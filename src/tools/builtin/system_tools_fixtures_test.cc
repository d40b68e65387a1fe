// Every system tool over every recorded H200 case: the expected findings fire and nothing an
// expert would call a false alarm does.
#include <gtest/gtest.h>

#include <iostream>
#include <set>

#include "tools/builtin/system_tools.h"
#include "tools/builtin/system_tools_testing.h"
#include "tools/registry.h"

namespace kernelpro::tools {
namespace tools_builtin_system_tools_fixtures_test {

// The timeline, SASS and energy tools, in the registry's order.
std::vector<std::unique_ptr<ProfilingTool>> SystemTools() {
  std::vector<std::unique_ptr<ProfilingTool>> tools;
  for (auto& tool : BuiltinTools()) {
    if (tool->source() != ToolSource::kNcu) tools.push_back(std::move(tool));
  }
  return tools;
}

TEST(SystemToolsFixtureTest, OnlyExpectedFindingsFireOnRecordings) {
  // case -> the tools expected to fire on it (no Stage-1 class given: every tool runs).
  const std::map<std::string, std::set<std::string>> expected = {
      {"p_many_launches", {"launch_overhead", "kernel_fusion"}},
      {"k_swish_scalar", {"fast_math_intrinsics"}},
      {"swish",
       {"fast_math_intrinsics"}},  // the example candidate divides per element with IEEE x / y
      {"k_wmma", {"tensor_core_generation"}},
      {"wgmma_tile", {"tensor_core_generation"}},
      {"cublas_tril", {"tensor_core_generation"}},
      // No SASS: the library kernels ncu profiled (nvjet warpgroup MMA; cuBLAS SIMT sgemm).
      {"p_cublas_bf16", {"tensor_core_generation"}},
      {"tril_matmul_reference", {"tensor_core_generation"}},
      {"k_strided_copy", {"energy_uncoalesced"}},
      // Transposing stores xs[k][r] with a row pitch of 132 floats: a warp's 32 stores fall in 8
      // banks (4-way conflict), hidden by the GEMM's FMA work.
      {"linear_gelu", {"energy_bank_conflicts"}},
  };
  auto tools = SystemTools();
  std::set<std::string> names;
  for (const auto& tool : tools) EXPECT_TRUE(names.insert(tool->name()).second) << tool->name();
  for (const auto& fixture : testing::AllFixtureCases()) {
    std::set<std::string> fired;
    for (const auto& tool : tools) {
      auto run = testing::RunOnFixture(*tool, fixture);
      if (run.output.triggered) {
        fired.insert(tool->name());
        std::cout << fixture.name << ": " << tool->name() << " ["
                  << SeverityName(run.output.severity) << "] " << run.output.summary << "\n";
      }
    }
    auto it = expected.find(fixture.name);
    EXPECT_EQ(fired, it == expected.end() ? std::set<std::string>{} : it->second) << fixture.name;
  }
}

}  // namespace tools_builtin_system_tools_fixtures_test
}  // namespace kernelpro::tools
