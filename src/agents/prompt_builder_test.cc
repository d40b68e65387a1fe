// The programmer's prompts as the LLM (and a reviewer) reads them: golden prompts per mode and per
// input kind, the order of their parts, the GPU guidance each architecture gets and the size
// budget (the trimming of failure dumps is build_errors_test.cc's). Regenerate the goldens after
// an intended change with
//   KERNELPRO_UPDATE_GOLDEN=1 build/kernelpro_tests --gtest_filter='PromptGolden*'
// and read the diff before committing it.
#include "agents/prompt_builder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "agents/prompt_texts.h"
#include "agents/search_memory.h"
#include "roofline/reference_analysis.h"

namespace kernelpro::agents {
namespace agents_prompt_builder_test {

const std::string kRoot = KERNELPRO_SOURCE_DIR;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Fixture(const std::string& name) {
  return ReadFile(kRoot + "/tests/fixtures/prompts/" + name);
}

ProblemSource Problem(const std::string& relative) {
  auto problem = ReadProblemSource(kRoot + "/" + relative);
  EXPECT_TRUE(problem.ok()) << problem.status().ToString();
  return problem.ok() ? *problem : ProblemSource{};
}

// Stage 1's brief of a recorded H200 analysis (tests/fixtures/...analysis.json).
std::string Stage1(const std::string& fixture) {
  auto analysis = roofline::ReadReferenceAnalysisFile(kRoot + "/tests/fixtures/" + fixture);
  EXPECT_TRUE(analysis.ok()) << analysis.status().ToString();
  return analysis.ok() ? roofline::RenderStageOneBrief(*analysis) : "";
}

GpuTarget Gpu(const std::string& text) {
  auto gpu = ParseGpuTarget(text);
  EXPECT_TRUE(gpu.ok()) << text;
  return gpu.ok() ? *gpu : GpuTarget{};
}

// What `kernelpro prompt` prints.
std::string Render(const Prompt& prompt) {
  return "=== system ===\n" + prompt.system + "=== user ===\n" + prompt.user;
}

Prompt Build(const PromptContext& context) {
  auto prompt = BuildPrompt(context);
  EXPECT_TRUE(prompt.ok()) << prompt.status().ToString();
  return prompt.ok() ? *prompt : Prompt{};
}

bool Has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

PromptContext Initial(const std::string& problem, const std::string& gpu) {
  PromptContext c;
  c.mode = PromptMode::kInitial;
  c.problem = Problem(problem);
  c.gpu = Gpu(gpu);
  return c;
}

PromptContext Debug() {
  PromptContext c;
  c.mode = PromptMode::kDebug;
  c.problem = Problem("tests/problems/half_scale.py");
  c.gpu = Gpu("H200");
  c.parent_code = Fixture("half_scale_bad_build.py");
  c.feedback = Fixture("torch_build_error.txt");
  return c;
}

PromptContext Optimize() {
  PromptContext c;
  c.mode = PromptMode::kOptimize;
  c.problem = Problem("problems/swish/problem.py");
  c.gpu = Gpu("H200");
  c.parent_code = ReadFile(kRoot + "/problems/swish/candidates/cuda_swish.py");
  c.parent_speedup = 1.93;
  c.feedback = ReadFile(kRoot + "/tests/golden/guidance/swish.md");
  c.memory_block = Fixture("memory.md");
  c.stage1 = Stage1("h200-advise/swish.analysis.json");
  c.num_candidates = 3;
  return c;
}

// ---------------------------------------------------------------------------------------------
// Embedding

TEST(PromptTextsTest, EveryFileUnderSrcPromptsIsEmbeddedByteForByte) {
  const auto& texts = PromptTexts();
  std::set<std::string> on_disk;
  for (const auto& entry : std::filesystem::directory_iterator(kRoot + "/src/prompts")) {
    if (entry.path().extension() != ".md") continue;
    const std::string name = entry.path().stem().string();
    on_disk.insert(name);
    auto it = texts.find(name);
    ASSERT_NE(it, texts.end()) << name << ".md is not embedded: rebuild (cmake re-globs)";
    EXPECT_EQ(it->second, ReadFile(entry.path().string()))
        << name << ".md differs from its embedded copy";
  }
  std::set<std::string> embedded;
  for (const auto& [name, text] : texts) embedded.insert(name);
  EXPECT_EQ(embedded, on_disk) << "embedded components without a file under src/prompts";
  for (const char* name : {"base_strategies", "input_pytorch", "input_triton", "input_cuda",
                           "mode_initial", "mode_debug", "mode_optimize", "examples",
                           "output_contract", "gpu_sm80", "gpu_sm90", "gpu_sm100", "gpu_generic",
                           "cutlass", "memory_header", "stage1_header", "energy_preferences"}) {
    EXPECT_TRUE(embedded.contains(name)) << name;
  }
}

// ---------------------------------------------------------------------------------------------
// Golden prompts

struct GoldenCase {
  std::string name;
  PromptContext context;
};

std::vector<GoldenCase> GoldenCases() {
  PromptContext cuda = Initial("tests/problems/cuda_row_sum.py", "B200");
  cuda.cutlass_dir = "/opt/cutlass";
  PromptContext cpu = Initial("problems/swish/problem.py", "sm_90");
  cpu.device = "cpu";
  PromptContext energy = Optimize();  // `optimize --energy aware`
  energy.energy_preferences = true;
  PromptContext swish = Initial("problems/swish/problem.py", "sm_90");
  swish.stage1 = Stage1("h200-advise/swish.analysis.json");
  PromptContext triton = Initial("problems/triton/softmax/problem.py", "H200");
  triton.stage1 = Stage1("h200-programs/triton-softmax.analysis.json");
  PromptContext cuda_program = Initial("problems/cuda/row_softmax/problem.cu", "H200");
  cuda_program.stage1 = Stage1("h200-programs/cuda-row_softmax.analysis.json");
  return {
      {"initial_pytorch_cpu", cpu},
      {"initial_pytorch_sm90", swish},
      {"initial_triton_softmax_sm90", triton},
      {"initial_cuda_row_softmax_sm90", cuda_program},
      {"initial_triton_sm80", Initial("tests/problems/triton_add_relu.py", "A100")},
      {"initial_cuda_sm100_cutlass", cuda},
      {"debug_pytorch_sm90", Debug()},
      {"optimize_pytorch_sm90_memory", Optimize()},
      {"optimize_pytorch_sm90_energy_aware", energy},
  };
}

TEST(PromptGoldenTest, EachModeAndInputKindRendersAsReviewed) {
  const bool update = std::getenv("KERNELPRO_UPDATE_GOLDEN") != nullptr;
  for (const GoldenCase& c : GoldenCases()) {
    const std::string text = Render(Build(c.context));
    EXPECT_EQ(text, Render(Build(c.context))) << c.name << ": the same context, other bytes";
    const std::string golden = kRoot + "/tests/golden/prompts/" + c.name + ".txt";
    if (update) {
      std::filesystem::create_directories(kRoot + "/tests/golden/prompts");
      std::ofstream(golden, std::ios::binary) << text;
      continue;
    }
    ASSERT_TRUE(std::filesystem::exists(golden))
        << golden << " missing: run with KERNELPRO_UPDATE_GOLDEN=1";
    EXPECT_EQ(text, ReadFile(golden)) << "the prompt " << c.name << " changed; review, then "
                                      << "regenerate";
  }
}

// ---------------------------------------------------------------------------------------------
// Structure

TEST(PromptBuilderTest, PartsComeInTheDocumentedOrder) {
  PromptContext c = Debug();
  c.cutlass_dir = "/opt/cutlass";
  c.memory_block = Fixture("memory.md");
  c.stage1 = "- Class: memory-bound, confidence high.\n";  // debug prompts carry Stage 1 too
  Prompt p = Build(c);
  const std::vector<std::string> expected = {
      "base_strategies", "input_pytorch", "gpu_sm90", "cutlass", "memory",      "output_contract",
      "mode_debug",      "examples",      "problem",  "stage1",  "parent_code", "feedback"};
  EXPECT_EQ(p.sections, expected);
  EXPECT_TRUE(p.trimmed.empty());
  // The text follows the same order: each part's heading appears after the previous one's.
  auto in_order = [](const std::string& text, const std::vector<std::string>& headings) {
    size_t at = 0;
    for (const std::string& heading : headings) {
      size_t found = text.find(heading, at);
      if (found == std::string::npos) return heading + " missing or out of order";
      at = found;
    }
    return std::string("ok");
  };
  EXPECT_EQ(in_order(p.system, {"# How to make a kernel fast", "# The reference is PyTorch",
                                "# Target GPU: H200", "# CUTLASS and CuTe are available",
                                "# Search memory", "## Search Findings", "# Answer format"}),
            "ok");
  EXPECT_EQ(
      in_order(p.user, {"# Task: fix the failing candidate", "# Example of a candidate file",
                        "## The reference (PyTorch)", "## What bounds this problem (Stage 1)",
                        "- Class: memory-bound", "## The failing candidate", "## What went wrong"}),
      "ok");
  EXPECT_EQ(p.system.rfind("# How to make a kernel fast", 0), 0u);
  EXPECT_EQ(p.user.rfind("# Task: fix the failing candidate", 0), 0u);

  Prompt initial = Build(Initial("problems/swish/problem.py", "sm_90"));
  EXPECT_EQ(initial.sections,
            (std::vector<std::string>{"base_strategies", "input_pytorch", "gpu_sm90",
                                      "output_contract", "mode_initial", "examples", "problem"}));
  Prompt optimize = Build(Optimize());
  EXPECT_EQ(optimize.sections,
            (std::vector<std::string>{"base_strategies", "input_pytorch", "gpu_sm90", "memory",
                                      "output_contract", "mode_optimize", "examples", "problem",
                                      "stage1", "parent_code", "feedback"}));
  // `optimize --energy aware`: its preferences before the memory; nothing else moves.
  PromptContext aware = Optimize();
  aware.energy_preferences = true;
  Prompt energy = Build(aware);
  EXPECT_EQ(energy.sections, (std::vector<std::string>{
                                 "base_strategies", "input_pytorch", "gpu_sm90",
                                 "energy_preferences", "memory", "output_contract", "mode_optimize",
                                 "examples", "problem", "stage1", "parent_code", "feedback"}));
  EXPECT_NE(energy.system.find("# Energy preferences\n\nSpeed comes first."), std::string::npos);
  EXPECT_EQ(optimize.system.find("Energy preferences"), std::string::npos);
}

// optimize --device cpu: a model asked for CUDA there writes kernels that cannot run.
TEST(PromptBuilderTest, OnTheCpuTheTaskIsCppAndNoGpuSectionOrCudaExampleIsShown) {
  PromptContext c = Initial("problems/swish/problem.py", "sm_90");
  c.device = "cpu";
  auto prompt = BuildPrompt(c);
  ASSERT_TRUE(prompt.ok()) << prompt.status().ToString();
  const std::string all = prompt->system + prompt->user;
  EXPECT_NE(prompt->user.find("# Task: write C++ for the CPU for this reference"),
            std::string::npos);
  EXPECT_NE(prompt->system.find("# Target: the CPU"), std::string::npos);
  EXPECT_NE(prompt->system.find("with no `cuda_sources`"), std::string::npos);
  EXPECT_EQ(all.find("# Target GPU"), std::string::npos);
  EXPECT_EQ(all.find("__global__ void leaky2"), std::string::npos);     // the CUDA example
  EXPECT_NE(prompt->user.find("at::parallel_for"), std::string::npos);  // the CPU example
  c.device = "tpu";
  EXPECT_FALSE(BuildPrompt(c).ok());
}

TEST(PromptBuilderTest, TheReferenceKindPicksItsInputSection) {
  struct Case {
    std::string problem, section, heading;
  };
  for (const Case& c : std::vector<Case>{
           {"problems/swish/problem.py", "input_pytorch", "# The reference is PyTorch"},
           {"tests/problems/triton_add_relu.py", "input_triton", "# The reference is a Triton"},
           {"tests/problems/cuda_row_sum.py", "input_cuda", "# The reference is CUDA"}}) {
    Prompt p = Build(Initial(c.problem, "sm_90"));
    EXPECT_EQ(p.sections[1], c.section) << c.problem;
    EXPECT_TRUE(Has(p.system, c.heading)) << c.problem;
    for (const char* other : {"input_pytorch", "input_triton", "input_cuda"}) {
      if (other != c.section) {
        EXPECT_EQ(std::count(p.sections.begin(), p.sections.end(), other), 0) << c.problem;
      }
    }
    // The reference's code goes in whole.
    EXPECT_TRUE(Has(p.user, ReadFile(kRoot + "/" + c.problem))) << c.problem;
  }
}

TEST(PromptBuilderTest, AmpereAndAdaGetMmaSyncShapesAndNothingNewer) {
  for (const char* gpu : {"sm_80", "sm_86", "sm_89", "A100", "RTX 4090", "L40S"}) {
    Prompt p = Build(Initial("problems/swish/problem.py", gpu));
    EXPECT_EQ(p.sections[2], "gpu_sm80") << gpu;
    for (const char* fact : {"mma.sync.aligned", "m16n8k16", "m16n8k8", "m16n8k32", "m8n8k4",
                             "ldmatrix", "cp.async.cg.shared.global"}) {
      EXPECT_TRUE(Has(p.system, fact)) << gpu << ": " << fact;
    }
    for (const char* absent : {"wgmma", "tcgen05", "m64n", "TMEM"}) {
      EXPECT_FALSE(Has(p.system, absent)) << gpu << ": " << absent;
    }
  }
  EXPECT_TRUE(Has(Build(Initial("problems/swish/problem.py", "sm_86")).system,
                  "`-gencode=arch=compute_86,code=sm_86`"));
}

TEST(PromptBuilderTest, HopperGetsWarpgroupMmaTmaAndTheSm90aTarget) {
  for (const char* gpu : {"sm_90", "sm_90a", "H100", "NVIDIA H200"}) {
    Prompt p = Build(Initial("problems/swish/problem.py", gpu));
    EXPECT_EQ(p.sections[2], "gpu_sm90") << gpu;
    for (const char* fact :
         {"wgmma.mma_async", "m64nNk16", "m64nNk8", "m64nNk32", "cp.async.bulk.tensor", "mbarrier",
          "__cluster_dims__", "-gencode=arch=compute_90a,code=sm_90a"}) {
      EXPECT_TRUE(Has(p.system, fact)) << gpu << ": " << fact;
    }
    for (const char* absent : {"m16n8k16", "ldmatrix", "tcgen05"}) {
      EXPECT_FALSE(Has(p.system, absent)) << gpu << ": " << absent;
    }
  }
}

TEST(PromptBuilderTest, BlackwellGetsTcgen05AndTensorMemory) {
  for (const char* gpu : {"sm_100", "B200"}) {
    Prompt p = Build(Initial("problems/swish/problem.py", gpu));
    EXPECT_EQ(p.sections[2], "gpu_sm100") << gpu;
    for (const char* fact : {"tcgen05.mma", "tcgen05.alloc", "TMEM", "SM100_MMA_F16BF16_SS",
                             "-gencode=arch=compute_100a,code=sm_100a"}) {
      EXPECT_TRUE(Has(p.system, fact)) << gpu << ": " << fact;
    }
    for (const char* absent : {"wgmma", "m16n8k16", "m64nNk16"}) {
      EXPECT_FALSE(Has(p.system, absent)) << gpu << ": " << absent;
    }
  }
}

TEST(PromptBuilderTest, OtherArchitecturesGetNoInstructionShapes) {
  for (const char* gpu : {"sm_75", "sm_120"}) {
    Prompt p = Build(Initial("problems/swish/problem.py", gpu));
    EXPECT_EQ(p.sections[2], "gpu_generic") << gpu;
    EXPECT_TRUE(Has(p.system, std::string("no architecture notes for ") + gpu)) << gpu;
    for (const char* absent : {"wgmma", "tcgen05", "m16n8k16", "m64nNk16"}) {
      EXPECT_FALSE(Has(p.system, absent)) << gpu << ": " << absent;
    }
  }
}

// A GPU that could not be detected is written for as one: no other architecture's notes or
// instructions, and CUTLASS builds for the GPU that builds them.
TEST(PromptBuilderTest, AnUnknownArchitectureGetsTheGenericSection) {
  PromptContext c = Initial("problems/swish/problem.py", "sm_90");
  c.gpu = GpuTarget{.arch = "", .name = ""};
  Prompt p = Build(c);
  EXPECT_EQ(p.sections[2], "gpu_generic");
  EXPECT_TRUE(Has(p.system, "# Target GPU: the GPU the candidates run on (not detected)"));
  for (const char* absent : {"wgmma", "tcgen05", "m16n8k16", "sm_90", "sm_80", "{arch}"}) {
    EXPECT_FALSE(Has(p.system, absent)) << absent;
  }
  c.cutlass_dir = "/opt/cutlass";
  EXPECT_TRUE(Has(Build(c).system, "\"-arch=native\""));
  // A malformed architecture is still refused.
  c.gpu.arch = "hopper";
  EXPECT_FALSE(BuildPrompt(c).ok());
}

TEST(PromptBuilderTest, CutlassSettingsOnlyWhenCutlassIsEnabled) {
  PromptContext off = Initial("problems/swish/problem.py", "sm_90");
  Prompt without = Build(off);
  EXPECT_EQ(std::count(without.sections.begin(), without.sections.end(), "cutlass"), 0);
  EXPECT_FALSE(Has(without.system, "CUTLASS headers"));
  EXPECT_FALSE(Has(without.system, "extra_include_paths"));

  PromptContext hopper = off;
  hopper.cutlass_dir = "/opt/cutlass-3.9";
  Prompt with = Build(hopper);
  EXPECT_EQ(std::count(with.sections.begin(), with.sections.end(), "cutlass"), 1);
  for (const char* fact :
       {"-I/opt/cutlass-3.9/include -I/opt/cutlass-3.9/tools/util/include",
        "\"/opt/cutlass-3.9/include\", \"/opt/cutlass-3.9/tools/util/include\"",
        "\"-std=c++17\", \"--expt-relaxed-constexpr\"", "\"-gencode=arch=compute_90a,code=sm_90a\"",
        "extra_cuda_cflags", "-D__CUDA_NO_HALF_OPERATORS__"}) {
    EXPECT_TRUE(Has(with.system, fact)) << fact;
  }
  PromptContext ampere = hopper;
  ampere.gpu = Gpu("sm_80");
  Prompt a = Build(ampere);
  EXPECT_TRUE(Has(a.system, "\"-gencode=arch=compute_80,code=sm_80\"")) << "arch flag per GPU";
  EXPECT_FALSE(Has(a.system, "compute_90a"));
  // On Hopper the build adds sm_90a to a CUTLASS candidate that gives no architecture flag.
  EXPECT_TRUE(Has(with.system,
                  "with no architecture flag of yours "
                  "`-gencode=arch=compute_90a,code=sm_90a`"));

  // The mined constraints: carried whole as their own part, only with a CUTLASS tree.
  PromptContext constrained = hopper;
  constrained.cutlass_constraints =
      "# Non-negotiable constraints for CUTLASS/CuTe code on Hopper\n\n- Fence after init.\n";
  Prompt c = Build(constrained);
  EXPECT_EQ(std::count(c.sections.begin(), c.sections.end(), "cutlass_constraints"), 1);
  EXPECT_TRUE(Has(c.system, "- Fence after init."));
  EXPECT_LT(c.system.find("CUTLASS headers are installed"), c.system.find("- Fence after init."));
  PromptContext no_tree = off;
  no_tree.cutlass_constraints = constrained.cutlass_constraints;
  EXPECT_FALSE(Has(Build(no_tree).system, "Fence after init."));
}

TEST(PromptBuilderTest, EveryPlaceholderIsFilled) {
  std::vector<PromptContext> contexts = {Debug(), Optimize()};
  for (const char* gpu : {"sm_80", "sm_90", "sm_100", "sm_75"}) {
    PromptContext c = Initial("tests/problems/triton_add_relu.py", gpu);
    c.cutlass_dir = "/opt/cutlass";
    c.num_candidates = 5;
    contexts.push_back(c);
  }
  for (const PromptContext& c : contexts) {
    const std::string text = Render(Build(c));
    for (const char* placeholder : {"{num_candidates}", "{gpu}", "{arch}", "{arch_flag}",
                                    "{cutlass_dir}", "{cutlass_build_arch}"}) {
      EXPECT_FALSE(Has(text, placeholder)) << c.gpu.arch << ": " << placeholder;
    }
    const std::string n = std::to_string(c.num_candidates);
    EXPECT_TRUE(Has(text, "`candidates` holds exactly " + n + " entries")) << n;
    // The number is said once, in the answer format ("Write 1 ... implementations" read badly).
    EXPECT_FALSE(Has(text, "Write " + n + " ")) << n;
  }
}

TEST(PromptBuilderTest, OptimizeShowsTheParentItsSpeedupAndTheAnalysis) {
  PromptContext c = Optimize();
  Prompt p = Build(c);
  EXPECT_TRUE(Has(p.user, "Its measured speedup over the reference: 1.93x."));
  EXPECT_TRUE(Has(p.user, c.parent_code));
  EXPECT_TRUE(Has(p.user, "## Profiling analysis\n\n" + c.feedback.substr(0, 200)));
  EXPECT_TRUE(Has(p.system, "At 1.93x the kernel moves 128 MiB")) << "the memory block";

  c.parent_speedup = 0.62;
  EXPECT_TRUE(Has(Build(c).user, "0.62x (slower than the reference)"));
  c.parent_speedup.reset();
  EXPECT_TRUE(Has(Build(c).user, "Its speedup over the reference has not been measured."));
  c.feedback.clear();  // optimize without profiling feedback (--feedback none) is allowed
  Prompt bare = Build(c);
  EXPECT_EQ(std::count(bare.sections.begin(), bare.sections.end(), "feedback"), 0);
}

TEST(PromptBuilderTest, DebugShowsTheFailingCodeAndOnlyTheErrorsThatMatter) {
  PromptContext c = Debug();
  Prompt p = Build(c);
  EXPECT_TRUE(Has(p.user, c.parent_code));
  EXPECT_TRUE(Has(p.user, "cuda.cu(22): error: identifier \"check_launch\" is undefined"));
  EXPECT_TRUE(Has(p.user, "RuntimeError: Error building extension 'kp_fixture_bad_build'"));
  EXPECT_FALSE(Has(p.user, "[2/3] /opt/gcc/bin/g++")) << "build commands are noise";
  EXPECT_FALSE(Has(p.user, "ninja: build stopped"));
  EXPECT_TRUE(Has(p.user, "[kernelpro kept "));
}

TEST(PromptBuilderTest, CodeWithBackticksCannotCloseItsFence) {
  PromptContext c = Initial("problems/swish/problem.py", "sm_90");
  c.problem.code += "\n# A docstring quoting Markdown: ```python``` and ````\n";
  Prompt p = Build(c);
  EXPECT_TRUE(Has(p.user, "`````python\n" + c.problem.code));
}

TEST(PromptBuilderTest, MissingInputsAreClearInvalidArguments) {
  struct Case {
    std::string what;
    PromptContext context;
    std::string message;
  };
  std::vector<Case> cases;
  PromptContext c = Debug();
  c.parent_code.clear();
  cases.push_back({"debug without code", c, "debug mode needs the failing candidate's code"});
  c = Debug();
  c.feedback = "  \n";
  cases.push_back({"debug without errors", c, "debug mode needs the compiler, runtime or"});
  c = Optimize();
  c.parent_code.clear();
  cases.push_back({"optimize without code", c, "optimize mode needs the working candidate"});
  c = Initial("problems/swish/problem.py", "sm_90");
  c.problem.code.clear();
  cases.push_back({"no problem code", c, "the problem has no code"});
  c = Initial("problems/swish/problem.py", "sm_90");
  c.num_candidates = 0;
  cases.push_back({"no candidates", c, "num_candidates is 0; ask for 1 to 16"});
  c.num_candidates = 17;
  cases.push_back({"too many candidates", c, "num_candidates is 17"});
  for (const Case& k : cases) {
    auto p = BuildPrompt(k.context);
    ASSERT_FALSE(p.ok()) << k.what;
    EXPECT_EQ(p.status().code(), Status::Code::kInvalidArgument) << k.what;
    EXPECT_TRUE(Has(p.status().message(), k.message)) << k.what << ": " << p.status().message();
  }
}

// ---------------------------------------------------------------------------------------------
// Size budget

// A memory block with many entries per section, numbered oldest first.
std::string BigMemory() {
  std::string block;
  for (const char* section : {"## Search Findings", "## Errors & Corrections", "## Learnings"}) {
    block += std::string(section) + "\n";
    for (int i = 1; i <= 40; ++i) {
      block += "- " + std::string(section).substr(3) + " entry " + std::to_string(i) +
               ": a finding long enough to take some room in the prompt, as real ones do.\n";
    }
    block += "\n";
  }
  return block;
}

TEST(PromptBudgetTest, TrimsLeastImportantFirstAndNeverTheCode) {
  PromptContext c = Optimize();
  c.memory_block = BigMemory();
  c.feedback = c.feedback + c.feedback + c.feedback;  // a long analysis
  const Prompt full = Build(c);
  const size_t full_size = full.system.size() + full.user.size();
  ASSERT_TRUE(full.trimmed.empty());
  const std::string contract = Render(full).substr(Render(full).find("# Answer format"), 300);
  const std::string mode = full.user.substr(0, full.user.find("# Example of a candidate file"));

  const std::vector<std::string> order = {"examples", "memory", "base_strategies", "feedback"};
  std::set<std::string> steps_seen;
  bool refused = false;
  for (size_t budget = full_size; budget > 2000; budget -= 250) {
    c.max_chars = budget;
    auto p = BuildPrompt(c);
    if (!p.ok()) {
      refused = true;
      EXPECT_TRUE(Has(p.status().message(), "max_chars")) << p.status().message();
      EXPECT_TRUE(Has(p.status().message(), ", problem ")) << p.status().message();
      EXPECT_TRUE(Has(p.status().message(), ", parent_code ")) << p.status().message();
      continue;
    }
    EXPECT_FALSE(refused) << "a budget of " << budget << " fits although a larger one did not";
    EXPECT_LE(p->system.size() + p->user.size(), budget);
    // What gave way is a prefix of the documented order.
    ASSERT_LE(p->trimmed.size(), order.size());
    for (size_t i = 0; i < p->trimmed.size(); ++i) {
      EXPECT_EQ(p->trimmed[i].rfind(order[i] + ":", 0), 0u) << budget << ": " << p->trimmed[i];
      steps_seen.insert(order[i]);
    }
    // Never trimmed: the reference, the parent, the output contract, the mode's instructions.
    EXPECT_TRUE(Has(p->user, c.problem.code)) << budget;
    EXPECT_TRUE(Has(p->user, c.parent_code)) << budget;
    EXPECT_TRUE(Has(Render(*p), contract)) << budget;
    EXPECT_EQ(p->user.rfind(mode, 0), 0u) << budget;
  }
  EXPECT_EQ(steps_seen, std::set<std::string>(order.begin(), order.end()))
      << "every trimming step should have been needed somewhere between the full size and 2000";
  EXPECT_TRUE(refused) << "2000 characters cannot hold the swish reference and candidate";
}

TEST(PromptBudgetTest, MemoryKeepsTheNewestEntriesOfEachSection) {
  PromptContext c = Optimize();
  c.memory_block = BigMemory();
  const Prompt full = Build(c);
  const size_t examples = PromptTexts().at("examples").size();
  // Room for the prompt without examples and without a third of the memory.
  c.max_chars = full.system.size() + full.user.size() - examples - c.memory_block.size() / 3;
  Prompt p = Build(c);
  ASSERT_EQ(p.trimmed.size(), 2u);
  EXPECT_EQ(p.trimmed[0].rfind("examples: dropped", 0), 0u) << p.trimmed[0];
  EXPECT_EQ(p.trimmed[1].rfind("memory: kept the newest ", 0), 0u) << p.trimmed[1];
  EXPECT_TRUE(Has(p.trimmed[1], " of 120 entries")) << p.trimmed[1];
  for (const char* section : {"Search Findings", "Errors & Corrections", "Learnings"}) {
    EXPECT_TRUE(Has(p.system, std::string("## ") + section)) << section;
    EXPECT_TRUE(Has(p.system, std::string(section) + " entry 40:")) << "newest kept: " << section;
    EXPECT_FALSE(Has(p.system, std::string(section) + " entry 1:")) << "oldest cut: " << section;
  }
  EXPECT_FALSE(Has(p.user, "# Example of a candidate file"));
}

TEST(PromptBudgetTest, TheSearchMemoryStoresOwnBlockIsTrimmedTheSameWay) {
  // What the run actually injects: SearchMemory::Render's block, under the builder's heading.
  SearchMemory memory;
  for (int i = 1; i <= 30; ++i) {
    memory.Add(MemorySection::kErrorsAndCorrections,
               "tile variant " + std::to_string(i) + " overflowed shared memory", i);
    memory.Add(MemorySection::kLearnings, "lesson " + std::to_string(i) + " about occupancy", i);
  }
  PromptContext c = Optimize();
  c.memory_block = memory.Render(100000);
  const Prompt full = Build(c);
  EXPECT_EQ(full.system.find("# Search memory"), full.system.rfind("# Search memory"))
      << "one heading for the memory block";
  EXPECT_TRUE(Has(full.system, "## Errors & Corrections\n- [iteration 1] tile variant 1 "));
  const size_t examples = PromptTexts().at("examples").size();
  c.max_chars = full.system.size() + full.user.size() - examples - c.memory_block.size() / 2;
  Prompt p = Build(c);
  ASSERT_EQ(p.trimmed.size(), 2u) << p.trimmed[0];
  EXPECT_TRUE(Has(p.trimmed[1], " of 60 entries")) << p.trimmed[1];
  EXPECT_TRUE(Has(p.system, "[iteration 30] tile variant 30 overflowed"));
  EXPECT_TRUE(Has(p.system, "[iteration 30] lesson 30 about occupancy"));
  EXPECT_FALSE(Has(p.system, "[iteration 1] tile variant 1 overflowed"));
}

TEST(PromptBudgetTest, ShortenedStrategiesKeepTheirFirstPart) {
  PromptContext c = Initial("problems/swish/problem.py", "sm_90");
  const Prompt full = Build(c);
  c.max_chars = full.system.size() + full.user.size() - PromptTexts().at("examples").size() - 100;
  Prompt p = Build(c);
  ASSERT_EQ(p.trimmed.size(), 2u) << "without the examples it is still 100 characters over";
  EXPECT_EQ(p.trimmed[1].rfind("base_strategies: shortened", 0), 0u) << p.trimmed[1];
  EXPECT_TRUE(Has(p.system, "## Rules of the harness"));
  EXPECT_FALSE(Has(p.system, "## Correctness traps"));
  EXPECT_FALSE(Has(Render(full), "<!-- kernelpro:")) << "the marker line never reaches the LLM";
  EXPECT_FALSE(Has(Render(p), "<!-- kernelpro:"));
}

TEST(PromptBudgetTest, FeedbackIsCutFromItsEndAndSaysSo) {
  PromptContext c = Optimize();
  c.memory_block.clear();
  const Prompt full = Build(c);
  const size_t full_size = full.system.size() + full.user.size();
  c.max_chars = full_size - PromptTexts().at("examples").size() - 2500;
  Prompt p = Build(c);
  ASSERT_FALSE(p.trimmed.empty());
  EXPECT_EQ(p.trimmed.back().rfind("feedback: cut from ", 0), 0u) << p.trimmed.back();
  EXPECT_TRUE(Has(p.user, c.feedback.substr(0, 300))) << "the start of the analysis stays";
  EXPECT_FALSE(Has(p.user, c.feedback.substr(c.feedback.size() - 200))) << "its end goes";
  EXPECT_TRUE(Has(p.user, "characters cut from the end to fit the prompt's size budget]"));
  EXPECT_LE(p.system.size() + p.user.size(), c.max_chars);
}

// A program (docs/programs.md) is shown as the program to beat, with what the harness makes of it
// and its PyTorch reference.
TEST(PromptBuilderTest, AProgramIsShownAsTheBaselineToBeatWithItsReference) {
  auto source = ReadProblemSource(std::string(KERNELPRO_SOURCE_DIR) +
                                  "/tests/problems/program_scaled_add/problem.py");
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  PromptContext c;
  c.problem = *source;
  c.device = "cpu";
  Prompt p = Build(c);
  for (const char* fact :
       {"## The program to beat (PyTorch program, ENTRY = `scaled_add`)",
        "returns `scaled_add(*inputs, *init_inputs)`",
        "The program's own time is the baseline your candidate is timed against.",
        "### The PyTorch reference (expected outputs)", "torch.add(x, y, alpha=self.alpha)"}) {
    EXPECT_TRUE(Has(p.user, fact)) << fact;
  }
  EXPECT_FALSE(Has(p.user, "## The reference (PyTorch)"));
}

}  // namespace agents_prompt_builder_test
}  // namespace kernelpro::agents
