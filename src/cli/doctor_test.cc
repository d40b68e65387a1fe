// `kernelpro doctor` on machines described to it (a GPU host without nvcc, a laptop without
// torch, a driver that restricts counters), and once on this machine through the binary.
//
// The rendered report of the GPU host is a golden file; regenerate it with
//   KERNELPRO_UPDATE_GOLDEN=1 build/kernelpro_tests --gtest_filter='Doctor*'
#include "cli/doctor.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "cli/cli_testing.h"

namespace kernelpro::cli {
namespace cli_doctor_test {

using std::chrono::seconds;

ProcessResult Exited(int code, std::string out, std::string err = "") {
  ProcessResult r;
  r.started = true;
  r.exited = true;
  r.exit_code = code;
  r.stdout_text = std::move(out);
  r.stderr_text = std::move(err);
  return r;
}

ProcessResult NotStarted(const std::string& program) {
  ProcessResult r;
  r.start_error = "cannot execute " + program + ": No such file or directory";
  return r;
}

// A machine made of answers: commands by argv[0], files by path, tools by name, variables.
struct FakeMachine {
  std::map<std::string, ProcessResult> commands;
  std::map<std::string, std::string> files;
  std::map<std::string, std::string> tools;
  std::map<std::string, std::string> env;
  Result<std::string> python = std::string("/opt/venv/bin/python");
  Result<std::string> sandbox =
      std::string("bubblewrap (/usr/bin/bwrap): private file system, no network");
  eval::CacheUsage cache;
  bool root = false;

  Machine Build() const {
    Machine m;
    m.run = [this](const std::vector<std::string>& argv, seconds) {
      auto it = commands.find(argv.at(0));
      return it == commands.end() ? NotStarted(argv[0]) : it->second;
    };
    m.read_file = [this](const std::string& path) -> std::optional<std::string> {
      auto it = files.find(path);
      if (it == files.end()) return std::nullopt;
      return it->second;
    };
    m.find_tool = [this](const std::string& name) {
      auto it = tools.find(name);
      return it == tools.end() ? std::string() : it->second;
    };
    m.getenv = [this](const std::string& name) -> std::optional<std::string> {
      // HOME leads LoadAwsCredentials to a credentials file that does not exist.
      if (name == "HOME") return std::string("/nonexistent-home-for-doctor-test");
      auto it = env.find(name);
      if (it == env.end()) return std::nullopt;
      return it->second;
    };
    m.worker_python = [this](const std::string&) { return python; };
    m.sandbox = [this]() { return sandbox; };
    m.measure_cache = [this](const std::string&) -> Result<eval::CacheUsage> { return cache; };
    m.is_root = root;
    return m;
  }
};

// An H200 host with torch 2.11 on CUDA 13 and ncu, but no nvcc on PATH.
FakeMachine GpuHostWithoutNvcc() {
  FakeMachine f;
  f.commands["/opt/venv/bin/python"] =
      Exited(0, R"({"python": "3.12.3", "executable": "/opt/venv/bin/python", "torch": "2.11.0",)"
                R"( "cuda": "13.0", "cuda_available": true, "gpus": ["NVIDIA H200"]})"
                "\n");
  f.commands["c++"] = Exited(0, "c++ (Ubuntu 13.2.0-23ubuntu4) 13.2.0\nCopyright (C) 2023\n");
  f.commands["nvidia-smi"] = Exited(0, "NVIDIA H200, 580.65.06, 143771 MiB\n");
  f.tools["ncu"] = "/opt/nvidia/nsight-compute/ncu";
  f.commands["/opt/nvidia/nsight-compute/ncu"] =
      Exited(0, "NVIDIA (R) Nsight Compute Command Line Profiler\nVersion 2025.3.0.0 (build 1)\n");
  f.tools["cuobjdump"] = "/repo/.tools/pypi/nvidia/cuda_cuobjdump/bin/cuobjdump";
  f.tools["nvdisasm"] = "/repo/.tools/pypi/nvidia/cuda_nvdisasm/bin/nvdisasm";
  f.files["/proc/driver/nvidia/params"] =
      "ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 1\nEnableGpuFirmware: 18\n";
  f.env["ANTHROPIC_API_KEY"] = "sk-ant-secret-value-0123456789";
  f.cache.dir = "/home/u/.cache/kernelpro";
  f.cache.exists = true;
  f.cache.build_bytes = 20ull << 20;
  f.cache.reference_bytes = 1536ull << 20;
  f.cache.total_bytes = f.cache.build_bytes + f.cache.reference_bytes;
  return f;
}

const DoctorCheck& Find(const std::vector<DoctorCheck>& checks, const std::string& name) {
  for (const DoctorCheck& c : checks) {
    if (c.name == name) return c;
  }
  static const DoctorCheck missing{"<missing>", CheckStatus::kFail, "", ""};
  ADD_FAILURE() << "no check named " << name;
  return missing;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(DoctorTest, AGpuHostWithoutNvccGetsTheFixAndStillExitsZero) {
  const FakeMachine machine = GpuHostWithoutNvcc();
  const std::vector<DoctorCheck> checks = RunDoctor(machine.Build(), {});
  const DoctorCheck& nvcc = Find(checks, "nvcc");
  EXPECT_EQ(nvcc.status, CheckStatus::kWarn);
  EXPECT_NE(nvcc.fix.find("install the CUDA toolkit or add it to PATH"), std::string::npos);
  EXPECT_EQ(Find(checks, "gpu").detail, "NVIDIA H200 (driver 580.65.06, 143771 MiB)");
  EXPECT_EQ(Find(checks, "torch CUDA").status, CheckStatus::kOk);
  EXPECT_EQ(Find(checks, "torch CUDA").detail, "CUDA 13.0, 1 GPU(s): NVIDIA H200");
  EXPECT_EQ(DoctorExitCode(checks), 0);

  const std::string golden =
      std::string(KERNELPRO_SOURCE_DIR) + "/tests/golden/doctor/gpu_host.txt";
  const std::string text = RenderDoctorText(checks);
  if (std::getenv("KERNELPRO_UPDATE_GOLDEN") != nullptr) {
    std::filesystem::create_directories(std::filesystem::path(golden).parent_path());
    std::ofstream(golden) << text;
  }
  EXPECT_EQ(text, ReadFile(golden)) << "the report changed; review, then regenerate";
}

TEST(DoctorTest, RestrictedCountersAreExplainedUnlessRunningAsRoot) {
  FakeMachine machine = GpuHostWithoutNvcc();
  const DoctorCheck counters = Find(RunDoctor(machine.Build(), {}), "gpu counters");
  EXPECT_EQ(counters.status, CheckStatus::kWarn);
  EXPECT_NE(counters.detail.find("ERR_NVGPUCTRPERM"), std::string::npos);
  EXPECT_NE(counters.fix.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos);
  EXPECT_NE(counters.fix.find("root"), std::string::npos);

  machine.root = true;
  EXPECT_EQ(Find(RunDoctor(machine.Build(), {}), "gpu counters").status, CheckStatus::kOk);
  machine.root = false;
  machine.files["/proc/driver/nvidia/params"] = "RmProfilingAdminOnly: 0\n";
  EXPECT_EQ(Find(RunDoctor(machine.Build(), {}), "gpu counters").status, CheckStatus::kOk);
}

TEST(DoctorTest, AnInterpreterWithoutTorchFailsAndExitsOne) {
  FakeMachine machine = GpuHostWithoutNvcc();
  machine.python = Status::Unavailable("no Python interpreter with torch found");
  machine.commands["python3"] =
      Exited(0, R"({"python": "3.11.2", "executable": "/usr/bin/python3", "torch_error": )"
                R"("ModuleNotFoundError: No module named 'torch'"})");
  const std::vector<DoctorCheck> checks = RunDoctor(machine.Build(), {});
  EXPECT_EQ(Find(checks, "python").status, CheckStatus::kOk);
  const DoctorCheck& torch = Find(checks, "torch");
  EXPECT_EQ(torch.status, CheckStatus::kFail);
  EXPECT_NE(torch.detail.find("No module named 'torch'"), std::string::npos);
  EXPECT_NE(torch.fix.find("KERNELPRO_PYTHON"), std::string::npos);
  EXPECT_EQ(DoctorExitCode(checks), 1);
  const Json json = DoctorJson(checks);
  EXPECT_FALSE(json["ok"].get<bool>());
  EXPECT_EQ(json["failures"].get<int>(), 1);
}

TEST(DoctorTest, ACpuMachineWarnsAboutTheGpuButPassesWithABrokenSandboxFailing) {
  FakeMachine machine;
  machine.commands["/opt/venv/bin/python"] =
      Exited(0, R"({"python": "3.11.2", "executable": "/opt/venv/bin/python", "torch": "1.13.1",)"
                R"( "cuda": null, "cuda_available": false})");
  machine.commands["c++"] = Exited(0, "c++ (Debian 12.2.0-14) 12.2.0\n");
  machine.sandbox = Status::Unavailable("the sandbox needs bubblewrap, which is not installed");
  machine.cache.dir = "/home/u/.cache/kernelpro";
  const std::vector<DoctorCheck> checks = RunDoctor(machine.Build(), {});
  EXPECT_EQ(Find(checks, "torch CUDA").status, CheckStatus::kWarn);
  EXPECT_NE(Find(checks, "torch CUDA").detail.find("CPU-only"), std::string::npos);
  EXPECT_EQ(Find(checks, "gpu").status, CheckStatus::kWarn);
  EXPECT_NE(Find(checks, "gpu").fix.find("--device cpu"), std::string::npos);
  EXPECT_EQ(Find(checks, "ncu").status, CheckStatus::kWarn);
  EXPECT_EQ(Find(checks, "cuobjdump").status, CheckStatus::kWarn);
  EXPECT_NE(Find(checks, "cuobjdump").fix.find("scripts/setup"), std::string::npos);
  EXPECT_EQ(Find(checks, "sandbox").status, CheckStatus::kFail);
  EXPECT_NE(Find(checks, "sandbox").fix.find("apt-get install bubblewrap"), std::string::npos);
  EXPECT_EQ(Find(checks, "cache").detail, "empty (/home/u/.cache/kernelpro does not exist yet)");
  EXPECT_EQ(DoctorExitCode(checks), 1);
}

TEST(DoctorTest, NoCompilerIsAFailureNamingWhatToInstall) {
  FakeMachine machine = GpuHostWithoutNvcc();
  machine.commands.erase("c++");
  const std::vector<DoctorCheck> checks = RunDoctor(machine.Build(), {});
  const DoctorCheck& cxx = Find(checks, "c++ compiler");
  EXPECT_EQ(cxx.status, CheckStatus::kFail);
  EXPECT_NE(cxx.fix.find("apt-get install g++"), std::string::npos);
}

TEST(DoctorTest, NvccOnPathReportsItsRelease) {
  FakeMachine machine = GpuHostWithoutNvcc();
  machine.tools["nvcc"] = "/usr/local/cuda/bin/nvcc";
  machine.commands["/usr/local/cuda/bin/nvcc"] =
      Exited(0,
             "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 12.4, "
             "V12.4.131\nBuild cuda_12.4.r12.4/compiler.34097967_0\n");
  const std::vector<DoctorCheck> checks = RunDoctor(machine.Build(), {});
  const DoctorCheck& nvcc = Find(checks, "nvcc");
  EXPECT_EQ(nvcc.status, CheckStatus::kOk);
  EXPECT_EQ(nvcc.detail, "12.4 (/usr/local/cuda/bin/nvcc)");
}

TEST(DoctorTest, KeysAreReportedAsSetOrNotSetAndTheirValuesNeverAppear) {
  FakeMachine machine = GpuHostWithoutNvcc();
  const std::vector<std::string> secrets = {"sk-openai-secret-value-abcdef",
                                            "sk-ant-secret-value-0123456789", "AKIAEXAMPLESECRETID",
                                            "aws/secret+access/key=="};
  machine.env["OPENAI_API_KEY"] = secrets[0];
  machine.env["ANTHROPIC_API_KEY"] = secrets[1];
  machine.env["AWS_ACCESS_KEY_ID"] = secrets[2];
  machine.env["AWS_SECRET_ACCESS_KEY"] = secrets[3];
  machine.env["AWS_REGION"] = "us-east-1";
  const std::vector<DoctorCheck> checks = RunDoctor(machine.Build(), {});
  EXPECT_EQ(Find(checks, "openai").detail, "OPENAI_API_KEY set");
  EXPECT_EQ(Find(checks, "anthropic").detail, "ANTHROPIC_API_KEY set");
  EXPECT_EQ(Find(checks, "bedrock").detail, "AWS credentials set (region us-east-1)");
  const std::string text = RenderDoctorText(checks);
  const std::string json = DumpJson(DoctorJson(checks));
  for (const std::string& secret : secrets) {
    EXPECT_EQ(text.find(secret), std::string::npos) << secret;
    EXPECT_EQ(json.find(secret), std::string::npos) << secret;
  }
}

TEST(DoctorTest, MissingKeysWarnOnlyWhenNoProviderHasOne) {
  FakeMachine machine = GpuHostWithoutNvcc();  // ANTHROPIC_API_KEY only
  std::vector<DoctorCheck> checks = RunDoctor(machine.Build(), {});
  EXPECT_EQ(Find(checks, "openai").status, CheckStatus::kOk);
  EXPECT_NE(Find(checks, "openai").detail.find("not set"), std::string::npos);
  machine.env.clear();
  checks = RunDoctor(machine.Build(), {});
  EXPECT_EQ(Find(checks, "openai").status, CheckStatus::kWarn);
  EXPECT_NE(Find(checks, "openai").fix.find("needs no key"), std::string::npos);
  EXPECT_EQ(Find(checks, "anthropic").status, CheckStatus::kWarn);
  EXPECT_EQ(Find(checks, "bedrock").status, CheckStatus::kWarn);
}

TEST(DoctorTest, TheCacheSizeIsBrokenDownAndALargeCacheSuggestsPruning) {
  FakeMachine machine = GpuHostWithoutNvcc();
  const std::vector<DoctorCheck> checks = RunDoctor(machine.Build(), {});
  const DoctorCheck& cache = Find(checks, "cache");
  EXPECT_EQ(cache.status, CheckStatus::kOk);
  EXPECT_EQ(cache.detail,
            "1.5 GiB in /home/u/.cache/kernelpro: builds 20 MiB, reference outputs and inputs "
            "1.5 GiB, precompiled headers 0 B, other 0 B");
  machine.cache.reference_bytes = machine.cache.total_bytes = 40ull << 30;
  const std::vector<DoctorCheck> large_checks = RunDoctor(machine.Build(), {});
  const DoctorCheck& large = Find(large_checks, "cache");
  EXPECT_EQ(large.status, CheckStatus::kWarn);
  EXPECT_NE(large.fix.find("kernelpro cache prune"), std::string::npos);
}

// The binary on this machine: one JSON object whose checks all have the four fields, and the
// exit code that its failures say.
TEST(DoctorCommandTest, JsonOnThisMachineListsEveryCheck) {
  const std::string cache = std::string(KERNELPRO_BINARY_DIR) + "/test-cache/doctor-empty";
  testing::CliRun run = testing::RunKernelpro(
      {"doctor", "--json", "--cache-dir", cache, "--python", "/usr/bin/python3"}, 5,
      {{"OPENAI_API_KEY", "sk-doctor-test-value-never-printed"}});
  ASSERT_TRUE(run.json.is_object()) << run.out << run.err;
  std::vector<std::string> names;
  for (const Json& check : run.json["checks"]) {
    names.push_back(check["name"].get<std::string>());
    for (const char* field : {"status", "detail", "fix"}) EXPECT_TRUE(check.contains(field));
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"python", "torch", "torch CUDA", "c++ compiler", "nvcc",
                                      "gpu", "ncu", "gpu counters", "cuobjdump", "sandbox",
                                      "openai", "anthropic", "bedrock", "cache"}));
  EXPECT_EQ(run.exit_code, run.json["failures"].get<int>() > 0 ? 1 : 0);
  EXPECT_EQ(run.out.find("sk-doctor-test-value-never-printed"), std::string::npos);
  EXPECT_EQ(run.json["checks"][10]["detail"].get<std::string>(), "OPENAI_API_KEY set");
}

// Without a GPU, --timing says what it needs and what to run instead, never an option doctor
// refuses (import_torch's own advice is --device cpu).
TEST(DoctorCommandTest, TimingWithoutAGpuSaysItNeedsOneAndNamesNoOptionDoctorRefuses) {
  testing::CliRun run =
      testing::RunKernelpro({"doctor", "--timing", "--python", "/usr/bin/python3"}, 5);
  if (run.exit_code != 2) GTEST_SKIP() << "this machine's torch has CUDA: the check ran";
  EXPECT_NE(run.err.find("needs a CUDA GPU"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("`kernelpro doctor` checks the rest"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("use --device cpu"), std::string::npos) << run.err;
}

}  // namespace cli_doctor_test
}  // namespace kernelpro::cli
