#include "cli/doctor.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "cli/common.h"
#include "core/json_io.h"
#include "core/text.h"
#include "core/tool_paths.h"
#include "eval/sandbox.h"
#include "eval/worker_client.h"
#include "llm/aws_credentials.h"

namespace kernelpro::cli {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

// Asked of the worker's interpreter, isolated as the worker runs it. Never fails: what torch
// cannot do is part of the answer.
constexpr char kPythonProbe[] =
    "import json, sys\n"
    "r = {'python': sys.version.split()[0], 'executable': sys.executable}\n"
    "try:\n"
    "    import torch\n"
    "    r['torch'] = torch.__version__\n"
    "    r['cuda'] = torch.version.cuda\n"
    "    r['cuda_available'] = bool(torch.cuda.is_available())\n"
    "    if r['cuda_available']:\n"
    "        r['gpus'] = [torch.cuda.get_device_name(i) for i in "
    "range(torch.cuda.device_count())]\n"
    "except Exception as e:\n"
    "    r['torch_error'] = f'{type(e).__name__}: {e}'\n"
    "print(json.dumps(r))\n";

// The first line of a program's output that says something: stdout's, else stderr's.
std::string FirstLine(const ProcessResult& r) {
  std::string line = FirstNonBlankLine(r.stdout_text);
  return line.empty() ? FirstNonBlankLine(r.stderr_text) : line;
}

bool Succeeded(const ProcessResult& r) { return r.started && r.exited && r.exit_code == 0; }

std::string Failure(const ProcessResult& r) {
  if (!r.started) return r.start_error.empty() ? "cannot be started" : r.start_error;
  std::string line = FirstLine(r);
  return r.Describe() + (line.empty() ? "" : ": " + line);
}

DoctorCheck Ok(std::string name, std::string detail) {
  return {std::move(name), CheckStatus::kOk, std::move(detail), ""};
}
DoctorCheck Warn(std::string name, std::string detail, std::string fix) {
  return {std::move(name), CheckStatus::kWarn, std::move(detail), std::move(fix)};
}
DoctorCheck FailedCheck(std::string name, std::string detail, std::string fix) {
  return {std::move(name), CheckStatus::kFail, std::move(detail), std::move(fix)};
}

void CheckPython(const Machine& m, const DoctorOptions& o, std::vector<DoctorCheck>& out) {
  constexpr char kFix[] =
      "install torch into that interpreter (pip install torch), or name one that has it with "
      "--python or KERNELPRO_PYTHON; kernelpro runs it isolated (python -I), so PYTHONPATH and "
      "the user site do not count";
  Result<std::string> resolved = m.worker_python(o.python);
  const std::string python =
      resolved.ok() ? *resolved : (o.python.empty() ? std::string("python3") : o.python);
  const ProcessResult ran = m.run({python, "-I", "-c", kPythonProbe}, seconds(180));
  const Json info = Succeeded(ran) ? Json::parse(Trim(ran.stdout_text), nullptr, false) : Json();
  if (!info.is_object()) {
    out.push_back(
        FailedCheck("python", python + ": " + Failure(ran),
                    "install Python 3 with torch, or name the interpreter with --python or "
                    "KERNELPRO_PYTHON"));
    out.push_back(FailedCheck("torch", "not checked: no working interpreter", kFix));
    return;
  }
  out.push_back(Ok("python", "Python " + JsonGet<std::string>(info, "python", "?") + " (" +
                                 JsonGet<std::string>(info, "executable", python) + ")"));
  if (info.contains("torch_error")) {
    out.push_back(FailedCheck(
        "torch", "cannot be imported: " + info["torch_error"].get<std::string>(), kFix));
    return;
  }
  if (!resolved.ok()) {  // torch imports, yet the worker cannot use it: say why
    out.push_back(FailedCheck("torch", resolved.status().message(), kFix));
    return;
  }
  out.push_back(Ok("torch", JsonGet<std::string>(info, "torch", "?")));
  const std::string cuda =
      info.contains("cuda") && info["cuda"].is_string() ? info["cuda"].get<std::string>() : "";
  if (cuda.empty()) {
    out.push_back(Warn("torch CUDA", "a CPU-only build of torch: only --device cpu works",
                       "on a GPU machine install a CUDA build of torch (pytorch.org/get-started)"));
  } else if (!JsonGet<bool>(info, "cuda_available", false)) {
    out.push_back(Warn("torch CUDA", "built with CUDA " + cuda + " but sees no GPU",
                       "check the driver (nvidia-smi) and CUDA_VISIBLE_DEVICES; without a GPU "
                       "only --device cpu works"));
  } else {
    std::vector<std::string> gpus = JsonGet<std::vector<std::string>>(info, "gpus", {});
    out.push_back(Ok("torch CUDA", "CUDA " + cuda + ", " + std::to_string(gpus.size()) +
                                       " GPU(s): " + Join(gpus, ", ")));
  }
}

void CheckCompilers(const Machine& m, std::vector<DoctorCheck>& out) {
  const std::string cxx = m.getenv("CXX").value_or("c++");
  const ProcessResult ran = m.run({cxx, "--version"}, seconds(30));
  if (Succeeded(ran)) {
    out.push_back(Ok("c++ compiler", FirstLine(ran) + " (" + cxx + ")"));
  } else {
    out.push_back(
        FailedCheck("c++ compiler", cxx + ": " + Failure(ran),
                    "install g++ (Debian/Ubuntu: apt-get install g++), or set CXX to a C++17 "
                    "compiler"));
  }
  const std::string nvcc = m.find_tool("nvcc");
  constexpr char kNvccFix[] =
      "install the CUDA toolkit or add it to PATH (or set CUDA_HOME); CUDA candidates need it, "
      "--device cpu does not";
  if (nvcc.empty()) {
    out.push_back(Warn("nvcc", "not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)", kNvccFix));
    return;
  }
  const ProcessResult version = m.run({nvcc, "--version"}, seconds(30));
  if (!Succeeded(version)) {
    out.push_back(Warn("nvcc", nvcc + ": " + Failure(version), kNvccFix));
    return;
  }
  // "Cuda compilation tools, release 12.4, V12.4.131": the release is what users compare.
  std::string release = "version unknown";
  for (const std::string& line : SplitLines(version.stdout_text)) {
    if (std::size_t at = line.find("release "); at != std::string::npos) {
      release = std::string(Trim(line.substr(at + 8, line.find(',', at) - at - 8)));
    }
  }
  out.push_back(Ok("nvcc", release + " (" + nvcc + ")"));
}

// Returns whether a GPU was found.
bool CheckGpu(const Machine& m, std::vector<DoctorCheck>& out) {
  const ProcessResult ran =
      m.run({"nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"},
            seconds(30));
  std::vector<std::string> gpus;
  if (Succeeded(ran)) {
    for (const std::string& line : SplitLines(ran.stdout_text)) {
      std::vector<std::string> fields = Split(line, ',');
      if (fields.size() < 3) continue;
      gpus.push_back(std::string(Trim(fields[0])) + " (driver " + std::string(Trim(fields[1])) +
                     ", " + std::string(Trim(fields[2])) + ")");
    }
  }
  if (gpus.empty()) {
    out.push_back(Warn("gpu",
                       "no NVIDIA GPU found (nvidia-smi: " +
                           (Succeeded(ran) ? std::string("no GPU listed") : Failure(ran)) + ")",
                       "without a GPU use --device cpu (builds, checks and timing of C++ CPU "
                       "extensions); on a GPU machine install the NVIDIA driver"));
    return false;
  }
  out.push_back(Ok("gpu", Join(gpus, "; ")));
  return true;
}

void CheckProfiler(const Machine& m, bool have_gpu, std::vector<DoctorCheck>& out) {
  const std::string ncu = m.find_tool("ncu");
  if (ncu.empty()) {
    out.push_back(Warn("ncu", "Nsight Compute not found: profile and analyze measure no counters",
                       "install Nsight Compute (it comes with the CUDA toolkit) or add its "
                       "directory to PATH (or set KERNELPRO_NCU)"));
  } else {
    const ProcessResult version = m.run({ncu, "--version"}, seconds(60));
    std::string line;
    for (const std::string& l : SplitLines(version.stdout_text)) {
      if (!Trim(l).empty()) line = std::string(Trim(l));  // the last: "Version 2024.1.1.0 ..."
    }
    if (Succeeded(version)) {
      out.push_back(Ok("ncu", (line.empty() ? "found" : line) + " (" + ncu + ")"));
    } else {
      out.push_back(Warn("ncu", ncu + ": " + Failure(version),
                         "reinstall Nsight Compute, or set KERNELPRO_NCU to a working ncu"));
    }
  }
  // The driver's own switch, readable by anyone: no need to run ncu on a kernel to know.
  const std::optional<std::string> params = m.read_file("/proc/driver/nvidia/params");
  std::optional<int> admin_only;
  if (params) {
    for (const std::string& line : SplitLines(*params)) {
      if (line.rfind("RmProfilingAdminOnly:", 0) == 0) {
        admin_only = std::atoi(line.substr(21).c_str());
      }
    }
  }
  if (!admin_only) {
    out.push_back(Warn("gpu counters",
                       params ? "the NVIDIA driver does not say whether counters are restricted"
                              : "cannot tell: no NVIDIA driver loaded (/proc/driver/nvidia/params)",
                       have_gpu ? "run `kernelpro analyze` on a problem: ncu reports "
                                  "ERR_NVGPUCTRPERM when counters are restricted"
                                : "only matters on a GPU machine"));
  } else if (*admin_only == 0) {
    out.push_back(Ok("gpu counters", "readable by every user (RmProfilingAdminOnly: 0)"));
  } else if (m.is_root) {
    out.push_back(
        Ok("gpu counters",
           "restricted to admin users (RmProfilingAdminOnly: 1); kernelpro runs as root"));
  } else {
    out.push_back(Warn(
        "gpu counters",
        "restricted to admin users (RmProfilingAdminOnly: 1): ncu fails with ERR_NVGPUCTRPERM and "
        "profiles measure nothing",
        "let every user read them: echo 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' | "
        "sudo tee /etc/modprobe.d/nvidia-profiling.conf, then reboot (or reload the nvidia "
        "module); or run kernelpro as root"));
  }
}

void CheckSassTools(const Machine& m, std::vector<DoctorCheck>& out) {
  const std::string cuobjdump = m.find_tool("cuobjdump");
  const std::string nvdisasm = m.find_tool("nvdisasm");
  const std::string nvdisasm_note =
      "; nvdisasm: " + (nvdisasm.empty() ? std::string("not found") : DisplayPath(nvdisasm));
  if (cuobjdump.empty()) {
    out.push_back(Warn("cuobjdump",
                       "not found: SASS analysis of built kernels is skipped" + nvdisasm_note,
                       "run scripts/setup (it installs NVIDIA's cuobjdump and nvdisasm under "
                       ".tools/), install the CUDA toolkit, or set KERNELPRO_CUOBJDUMP"));
  } else {
    out.push_back(Ok("cuobjdump", DisplayPath(cuobjdump) + nvdisasm_note));
  }
}

void CheckSandbox(const Machine& m, std::vector<DoctorCheck>& out) {
  Result<std::string> sandbox = m.sandbox();
  if (sandbox.ok()) {
    out.push_back(Ok("sandbox", *sandbox));
  } else {
    out.push_back(
        FailedCheck("sandbox", sandbox.status().message(),
                    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) on a "
                    "system that allows user namespaces; or accept running candidate code "
                    "unconfined with --unsafe-no-sandbox"));
  }
}

// Present or not, never the value: `getenv` returns it, and it goes no further than this.
bool IsSet(const Machine& m, const std::string& name) {
  std::optional<std::string> value = m.getenv(name);
  return value.has_value() && !value->empty();
}

void CheckKeys(const Machine& m, std::vector<DoctorCheck>& out) {
  const bool openai = IsSet(m, "OPENAI_API_KEY");
  const bool anthropic = IsSet(m, "ANTHROPIC_API_KEY");
  Result<llm::AwsCredentials> aws = llm::LoadAwsCredentials("", m.getenv);
  const bool bedrock = aws.ok();
  const std::string region =
      m.getenv("AWS_REGION").value_or(m.getenv("AWS_DEFAULT_REGION").value_or(""));
  // Missing keys are only a warning when there are none at all: one provider is enough, and a
  // local OpenAI-compatible server needs no key.
  const bool none = !openai && !anthropic && !bedrock;
  auto line = [&](const std::string& name, bool set, const std::string& set_text,
                  const std::string& unset_text, const std::string& fix) {
    if (set) {
      out.push_back(Ok(name, set_text));
    } else if (none) {
      out.push_back(Warn(name, unset_text, fix));
    } else {
      out.push_back(Ok(name, unset_text));
    }
  };
  line("openai", openai, "OPENAI_API_KEY set",
       "OPENAI_API_KEY not set (a local OpenAI-compatible server needs none)",
       "export OPENAI_API_KEY=... for --llm openai:MODEL; a local server "
       "(--llm openai:MODEL@http://127.0.0.1:PORT/v1) needs no key");
  line("anthropic", anthropic, "ANTHROPIC_API_KEY set", "ANTHROPIC_API_KEY not set",
       "export ANTHROPIC_API_KEY=... for --llm anthropic:MODEL");
  line("bedrock", bedrock,
       "AWS credentials set" +
           (region.empty() ? std::string(" (no AWS_REGION: set one)") : " (region " + region + ")"),
       "AWS credentials not set (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, or ~/.aws/credentials)",
       "export AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_REGION for --llm bedrock:MODEL");
}

void CheckCache(const Machine& m, const DoctorOptions& o, std::vector<DoctorCheck>& out) {
  const std::string dir = o.cache_dir.empty() ? DefaultCacheDir() : o.cache_dir;
  Result<eval::CacheUsage> usage = m.measure_cache(dir);
  if (!usage.ok()) {
    out.push_back(Warn("cache", usage.status().message(),
                       "point --cache-dir or KERNELPRO_CACHE_DIR at a writable directory"));
    return;
  }
  if (!usage->exists) {
    out.push_back(Ok("cache", "empty (" + DisplayPath(usage->dir) + " does not exist yet)"));
    return;
  }
  const std::string detail =
      eval::FormatByteSize(usage->total_bytes) + " in " + DisplayPath(usage->dir) + ": builds " +
      eval::FormatByteSize(usage->build_bytes) + ", reference outputs and inputs " +
      eval::FormatByteSize(usage->reference_bytes) + ", precompiled headers " +
      eval::FormatByteSize(usage->header_bytes) + ", other " +
      eval::FormatByteSize(usage->other_bytes);
  constexpr std::uint64_t kLarge = 20ull << 30;
  if (usage->total_bytes > kLarge) {
    out.push_back(Warn("cache", detail,
                       "kernelpro cache prune --older-than 7d (or --max-size 5G) frees the least "
                       "recently used"));
  } else {
    out.push_back(Ok("cache", detail));
  }
}

}  // namespace

const char* CheckStatusName(CheckStatus status) {
  switch (status) {
    case CheckStatus::kOk:
      return "ok";
    case CheckStatus::kWarn:
      return "warn";
    case CheckStatus::kFail:
      return "fail";
  }
  return "fail";
}

Machine RealMachine() {
  Machine m;
  m.run = [](const std::vector<std::string>& argv, seconds timeout) {
    ProcessOptions p;
    p.argv = argv;
    // What a worker sees (an allow-list, no credentials): the interpreter and the tools answer
    // doctor as they would answer kernelpro's steps.
    p.inherit_env = false;
    p.env = eval::WorkerEnvironment({}, {});
    p.limits.wall_timeout = timeout;
    Result<ProcessResult> r = RunProcess(p);
    if (r.ok()) return *r;
    ProcessResult failed;
    failed.start_error = r.status().message();
    return failed;
  };
  m.read_file = [](const std::string& path) -> std::optional<std::string> {
    Result<std::string> text = ReadFileText(path);
    if (!text.ok()) return std::nullopt;
    return std::move(*text);
  };
  m.find_tool = [](const std::string& name) { return FindTool(name); };
  m.getenv = llm::ProcessEnvironment();
  m.worker_python = [](const std::string& python) -> Result<std::string> {
    eval::WorkerOptions options;
    options.python = python;
    options.scratch_dir = fs::temp_directory_path().string();
    options.sandbox.enabled = false;  // the sandbox is a check of its own
    Result<eval::WorkerClient> client = eval::WorkerClient::Create(options);
    if (!client.ok()) return client.status();
    return client->python();
  };
  m.sandbox = []() -> Result<std::string> {
    Result<eval::Sandbox> sandbox = eval::Sandbox::Create({});
    if (!sandbox.ok()) return sandbox.status();
    return sandbox->Describe();
  };
  m.measure_cache = [](const std::string& dir) { return eval::MeasureCache(dir); };
  m.is_root = ::geteuid() == 0;
  return m;
}

std::vector<DoctorCheck> RunDoctor(const Machine& machine, const DoctorOptions& options) {
  std::vector<DoctorCheck> checks;
  CheckPython(machine, options, checks);
  CheckCompilers(machine, checks);
  const bool have_gpu = CheckGpu(machine, checks);
  CheckProfiler(machine, have_gpu, checks);
  CheckSassTools(machine, checks);
  CheckSandbox(machine, checks);
  CheckKeys(machine, checks);
  CheckCache(machine, options, checks);
  return checks;
}

std::string RenderDoctorText(const std::vector<DoctorCheck>& checks) {
  std::size_t width = 0;
  for (const DoctorCheck& c : checks) width = std::max(width, c.name.size());
  std::string text;
  int warnings = 0, failures = 0;
  for (const DoctorCheck& c : checks) {
    std::string status = CheckStatusName(c.status);
    text += status + std::string(6 - status.size(), ' ') + c.name +
            std::string(width + 2 - c.name.size(), ' ') + c.detail + "\n";
    if (c.status != CheckStatus::kOk && !c.fix.empty()) {
      text += std::string(6 + width + 2, ' ') + "fix: " + c.fix + "\n";
    }
    warnings += c.status == CheckStatus::kWarn;
    failures += c.status == CheckStatus::kFail;
  }
  if (failures == 0 && warnings == 0) {
    text += "\nall " + std::to_string(checks.size()) + " checks passed\n";
  } else {
    text += "\n" + std::to_string(failures) + " failed, " + std::to_string(warnings) +
            " warning(s)" +
            (failures > 0 ? ": kernelpro cannot evaluate candidates until the failures are fixed"
                          : ": kernelpro works; the warnings say what it cannot do here") +
            "\n";
  }
  return text;
}

Json DoctorJson(const std::vector<DoctorCheck>& checks) {
  Json list = Json::array();
  int warnings = 0, failures = 0;
  for (const DoctorCheck& c : checks) {
    list.push_back({{"name", c.name},
                    {"status", CheckStatusName(c.status)},
                    {"detail", c.detail},
                    {"fix", c.fix}});
    warnings += c.status == CheckStatus::kWarn;
    failures += c.status == CheckStatus::kFail;
  }
  return {{"checks", list}, {"ok", failures == 0}, {"warnings", warnings}, {"failures", failures}};
}

int DoctorExitCode(const std::vector<DoctorCheck>& checks) {
  return std::any_of(checks.begin(), checks.end(),
                     [](const DoctorCheck& c) { return c.status == CheckStatus::kFail; })
             ? 1
             : 0;
}

}  // namespace kernelpro::cli
