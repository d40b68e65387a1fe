#include "agents/problem_source.h"

#include <gtest/gtest.h>

namespace kernelpro::agents {
namespace {

TEST(ProblemSourceTest, InputKindFromTheReference) {
  EXPECT_EQ(DetectInputKind("import torch\nclass Model(nn.Module): ..."), InputKind::kPyTorch);
  EXPECT_EQ(DetectInputKind("import triton\nimport triton.language as tl\n"), InputKind::kTriton);
  EXPECT_EQ(DetectInputKind("from torch.utils.cpp_extension import load_inline\n"),
            InputKind::kCuda);
  auto real = ReadProblemSource(std::string(KERNELPRO_SOURCE_DIR) + "/problems/swish/problem.py");
  ASSERT_TRUE(real.ok()) << real.status().ToString();
  EXPECT_EQ(real->kind, InputKind::kPyTorch);
  EXPECT_FALSE(ReadProblemSource("/no/such/problem.py").ok());
}

TEST(ProblemSourceTest, InputKindNamesReadBackInAnyCase) {
  EXPECT_EQ(ToString(InputKind::kTriton), "triton");
  EXPECT_EQ(ParseInputKind("CUDA"), InputKind::kCuda);
  EXPECT_FALSE(ParseInputKind("jax").has_value());
}

}  // namespace
}  // namespace kernelpro::agents
