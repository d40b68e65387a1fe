#include "agents/problem_source.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace kernelpro::agents {
namespace agents_problem_source_test {

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

// Programs (docs/programs.md): a launcher named in ENTRY instead of class Model, or a .cu file
// with its kernelpro block; REFERENCE is read beside the program.
class ProgramSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kp_program_source_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  std::filesystem::path dir_;
};

TEST_F(ProgramSourceTest, ATritonProgramWithAReferenceIsReadAsAProgram) {
  Write("reference.py", "class Model(nn.Module):\n    pass\n");
  auto p = ReadProblemSource(Write("prog.py",
                                   "import triton\nimport triton.language as tl\n\n"
                                   "def launch(x):\n    return x\n\nENTRY = \"launch\"\n"
                                   "REFERENCE = \"reference.py\"\n"));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->program);
  EXPECT_EQ(p->kind, InputKind::kTriton);
  EXPECT_EQ(p->entry, "launch");
  EXPECT_EQ(p->reference_path, (dir_ / "reference.py").string());
  EXPECT_EQ(p->reference_code, "class Model(nn.Module):\n    pass\n");

  // The repository's own CPU program.
  auto real = ReadProblemSource(std::string(KERNELPRO_SOURCE_DIR) +
                                "/tests/problems/program_scaled_add/problem.py");
  ASSERT_TRUE(real.ok()) << real.status().ToString();
  EXPECT_TRUE(real->program);
  EXPECT_EQ(real->entry, "scaled_add");
  EXPECT_NE(real->reference_code.find("torch.add(x, y, alpha=self.alpha)"), std::string::npos);
}

TEST_F(ProgramSourceTest, ACudaFileIsACudaProgram) {
  auto p =
      ReadProblemSource(Write("prog.cu",
                              "/* kernelpro\nENTRY = \"row_sum\"\ndef get_inputs():\n"
                              "    return []\n*/\ntorch::Tensor row_sum(torch::Tensor x) {}\n"));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->program);
  EXPECT_EQ(p->kind, InputKind::kCuda);
  EXPECT_EQ(p->entry, "row_sum");
  EXPECT_TRUE(p->reference_path.empty());
}

TEST_F(ProgramSourceTest, WhatIsMissingIsNamed) {
  auto neither = ReadProblemSource(Write("x.py", "import torch\ndef f(): pass\n"));
  ASSERT_FALSE(neither.ok());
  EXPECT_NE(neither.status().message().find("no class Model"), std::string::npos);
  EXPECT_NE(neither.status().message().find("no ENTRY naming a launcher"), std::string::npos);
  auto no_block = ReadProblemSource(Write("y.cu", "__global__ void k() {}\n"));
  ASSERT_FALSE(no_block.ok());
  EXPECT_NE(no_block.status().message().find("/* kernelpro ... */ block"), std::string::npos);
  auto no_reference = ReadProblemSource(
      Write("z.py", "def f(x):\n    return x\nENTRY = \"f\"\nREFERENCE = \"gone.py\"\n"));
  ASSERT_FALSE(no_reference.ok());
  EXPECT_NE(no_reference.status().message().find("gone.py cannot be read"), std::string::npos);
}

}  // namespace agents_problem_source_test
}  // namespace kernelpro::agents
