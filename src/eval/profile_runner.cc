#include "eval/profile_runner.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/text.h"
#include "core/tool_paths.h"
#include "profile/collect.h"
#include "profile/ncu_csv.h"
#include "profile/nsys_runner.h"
#include "profile/sass.h"
#include "profile/timeline.h"

namespace kernelpro::eval {
namespace {

void Save(const ProfileOptions& options, const std::string& suffix, const std::string& text) {
  if (options.artifacts_dir.empty() || text.empty()) return;
  std::filesystem::create_directories(options.artifacts_dir);
  std::ofstream(std::filesystem::path(options.artifacts_dir) / (options.artifacts_name + suffix))
      << text;
}

// The reference's outputs and metadata, computed (or found cached) by the executor.
Result<Json> ComputeProfileReference(Executor& executor, const std::string& problem) {
  ProgressScope computing(executor.progress(), {0, 0, "reference", "computing"});
  auto computed = executor.PrepareReference(std::filesystem::absolute(problem).string());
  if (!computed.ok()) computing.set_outcome("failed");
  return computed;
}

// Builds the candidate (or finds its build cached); its extensions' shared objects, or
// InvalidArgument when it did not build.
Result<std::vector<std::string>> BuildCandidate(Executor& executor, const std::string& candidate,
                                                const ProgressStep& step) {
  EvalResult built;
  built.candidate = std::filesystem::absolute(candidate).string();
  ProgressScope building(executor.progress(), step);
  executor.Build(built.candidate, built);
  if (built.status != EvalStatus::kCorrect) building.set_outcome(EvalStatusName(built.status));
  if (built.build_cached) building.set_outcome("cached");
  if (built.status != EvalStatus::kCorrect) {
    return Status::InvalidArgument(std::string("candidate did not build: ") +
                                   EvalStatusName(built.status) + ": " + built.message);
  }
  return built.shared_objects;
}

// The SASS, resource usage, symbols and nm output of every built extension, concatenated into
// `texts`. What cannot be read becomes a note.
void ReadSass(Executor& executor, const std::vector<std::string>& shared_objects,
              const ProgressStep& step, profile::ArtifactTexts& texts,
              std::vector<std::string>& notes) {
  ProgressScope reading(executor.progress(), step);
  for (const std::string& so : shared_objects) {
    auto dump = profile::DumpSharedObject(so);
    if (!dump.ok()) {
      notes.push_back("sass: " + dump.status().message());
      break;
    }
    if (dump->no_device_code)
      notes.push_back("sass: " + so + " holds no device code (a CPU extension?)");
    texts.sass += dump->sass;
    texts.res_usage += dump->res_usage;
    texts.symbols += dump->symbols;
    texts.nm += dump->nm;
  }
}

// The request of the worker's run and trace steps. With a candidate, the run is the candidate's
// process: it gets what the executor's check step gets (inputs and the reference's metadata, no
// reference or cache directory); without one, the reference's model runs from the problem file.
Result<Json> ProfiledRunRequest(Executor& executor, const std::string& problem,
                                const std::string& candidate, const Json& reference) {
  Json request;
  if (!candidate.empty()) {
    request = executor.CandidateRequest(std::filesystem::absolute(candidate).string(), reference);
    if (request.is_null()) return Status::NotFound("cannot read the candidate file " + candidate);
  } else {
    request = executor.BaseRequest();
    request["problem"] = std::filesystem::absolute(problem).string();
    request["inputs_dir"] = JsonGet<std::string>(reference, "inputs_dir", "");
    request["inputs_manifest"] = JsonGet<Json>(reference, "inputs_manifest", Json::object());
    request["inputs_recipe"] = JsonGet<Json>(reference, "inputs_recipe", Json::object());
    request["reference"] = {{"trials", JsonGet<Json>(reference, "trials", Json::object())}};
  }
  return request;
}

// ncu's CSV of the run step, over the candidate's entry kernels (read from `texts`' symbols), or
// over every kernel of the forward call when the candidate calls libraries or its entry kernels
// did not run. "" with a note when ncu is missing or fails.
std::string ProfileWithNcu(Executor& executor, const Json& request,
                           const std::map<std::string, std::string>& env,
                           const profile::NcuOptions& ncu_options,
                           const profile::ArtifactTexts& texts, const ProgressStep& step,
                           std::vector<std::string>& notes) {
  ProgressScope profiling(executor.progress(), step);
  std::string ncu = FindTool("ncu");
  if (ncu.empty()) {
    notes.push_back(
        "ncu: Nsight Compute (ncu) not found; no hardware counters (set KERNELPRO_NCU)");
    return "";
  }
  // A candidate calling cuBLAS & co. spends its time in kernels it did not compile: then every
  // kernel of the forward call is profiled and the selection keeps the longest as well.
  bool calls_libraries = !texts.nm.empty() && !profile::ParseLibraryCalls(texts.nm).empty();
  std::vector<std::string> entries = texts.symbols.empty() || calls_libraries
                                         ? std::vector<std::string>{}
                                         : profile::ParseEntryPoints(texts.symbols);
  ProcessLimits limits;
  limits.wall_timeout = std::chrono::seconds(ncu_options.timeout_s);
  auto run_ncu = [&](const std::vector<std::string>& names) -> std::string {
    // ncu itself runs in the sandbox too, around the candidate's process.
    auto outcome = executor.worker().Run("run", request, limits, env,
                                         profile::NcuArgv(ncu, ncu_options, names), 256ull << 20,
                                         Confinement::kSandbox);
    if (!outcome.ok()) {
      notes.push_back("ncu: " + outcome.status().message());
      return "";
    }
    if (outcome->process.timed_out) notes.push_back("ncu: " + outcome->process.Describe());
    return profile::TrimNcuOutput(outcome->process.stdout_text + "\n" +
                                  outcome->process.stderr_text);
  };
  std::string csv = run_ncu(entries);
  if (!entries.empty() && profile::ParseNcuCsv(csv).status().code() == Status::Code::kNotFound) {
    notes.push_back(
        "ncu: the candidate's entry kernels did not run; profiling every kernel of the forward "
        "call");
    csv = run_ncu({});
  }
  return csv;
}

// The timeline of the trace step (torch.profiler over one forward call) into metrics.timeline, or
// a note saying why there is none.
void TraceTimeline(Executor& executor, const Json& request,
                   const std::map<std::string, std::string>& env, const ProfileOptions& options,
                   const ProgressStep& step, profile::Metrics& metrics) {
  ProgressScope tracing(executor.progress(), step);
  // Unique per call: profiles may run concurrently in one process.
  static std::atomic<unsigned> traces{0};
  // In a folder of its own: the sandboxed trace step may write there and nowhere else.
  const std::filesystem::path trace_dir =
      std::filesystem::temp_directory_path() /
      ("kernelpro-trace-" + std::to_string(::getpid()) + "-" + std::to_string(traces++));
  std::error_code ec;
  std::filesystem::create_directories(trace_dir, ec);
  std::string trace_path = (trace_dir / "trace.json").string();
  Json trace_request = request;
  trace_request["trace_path"] = trace_path;
  ProcessLimits limits;
  limits.wall_timeout = std::chrono::seconds(600);
  auto outcome = executor.worker().Run("trace", trace_request, limits, env, {}, 16 * 1024,
                                       Confinement::kSandbox);
  if (!outcome.ok() || !outcome->result ||
      JsonGet<std::string>(*outcome->result, "status", "") != "ok") {
    metrics.notes.push_back("timeline: the trace step failed" +
                            (outcome.ok() && outcome->result
                                 ? ": " + JsonGet<std::string>(*outcome->result, "message", "")
                                 : std::string()));
  } else {
    std::ifstream in(trace_path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Save(options, ".trace.json", text);
    auto timeline = profile::ParseTorchProfilerTrace(text);
    if (timeline.ok()) {
      metrics.timeline = std::move(*timeline);
    } else {
      metrics.notes.push_back("timeline: " + timeline.status().message());
    }
  }
  std::filesystem::remove_all(trace_dir, ec);
}

// The timeline from Nsight Systems around the run step (profile/nsys_runner.h). False, with a note
// saying why, when nsys is missing or made no report: the caller then takes the profiler's.
bool NsysTimeline(Executor& executor, const Json& request, std::map<std::string, std::string> env,
                  const ProfileOptions& options, const ProgressStep& step,
                  profile::Metrics& metrics) {
  ProgressScope tracing(executor.progress(), step);
  const std::string nsys = FindTool("nsys");
  if (nsys.empty()) {
    metrics.notes.push_back(
        "timeline: Nsight Systems (nsys) not found (set KERNELPRO_NSYS); the PyTorch "
        "profiler's timeline instead");
    return false;
  }
  static std::atomic<unsigned> reports{0};
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("kernelpro-nsys-" + std::to_string(::getpid()) + "-" + std::to_string(reports++));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  Json run_request = request;
  run_request["out_dir"] = dir.string();  // writable in the sandbox: nsys writes its report there
  const std::string base = (dir / "timeline").string();
  for (const auto& [name, value] : profile::NsysEnvironment()) env[name] = value;
  ProcessLimits limits;
  limits.wall_timeout = std::chrono::seconds(600);
  auto outcome =
      executor.worker().Run("run", run_request, limits, env, profile::NsysArgv(nsys, base),
                            64 * 1024, Confinement::kSandbox);
  const std::string sqlite = profile::NsysSqlitePath(base);
  bool made = false;
  if (!outcome.ok()) {
    metrics.notes.push_back("timeline: nsys: " + outcome.status().message());
  } else if (!std::filesystem::exists(sqlite, ec)) {
    const std::string said = LastLine(outcome->process.stderr_text);
    metrics.notes.push_back("timeline: nsys made no report (" + outcome->process.Describe() +
                            (said.empty() ? "" : ": " + said) +
                            "); the PyTorch profiler's timeline instead");
  } else if (auto timeline = profile::ParseNsysSqlite(sqlite); !timeline.ok()) {
    metrics.notes.push_back("timeline: nsys: " + timeline.status().message() +
                            "; the PyTorch profiler's timeline instead");
  } else {
    metrics.timeline = std::move(*timeline);
    if (!options.artifacts_dir.empty()) {
      std::filesystem::copy_file(
          sqlite, options.artifacts_dir + "/" + options.artifacts_name + ".nsys.sqlite",
          std::filesystem::copy_options::overwrite_existing, ec);
    }
    made = true;
  }
  std::filesystem::remove_all(dir, ec);
  return made;
}

}  // namespace

Result<profile::Metrics> ProfileCandidate(Executor& executor, const std::string& problem,
                                          const std::string& candidate,
                                          const ProfileOptions& options) {
  if (!executor.worker().SandboxReady().ok()) return executor.worker().SandboxReady();
  // Progress names what is profiled: the candidate's file, or the reference.
  const std::string subject =
      candidate.empty() ? "reference" : std::filesystem::path(candidate).filename().string();
  auto step = [&](const char* what) { return ProgressStep{0, 0, subject, what}; };
  Result<Json> reference = ComputeProfileReference(executor, problem);
  if (!reference.ok()) return reference.status();
  std::vector<std::string> shared_objects;
  if (!candidate.empty()) {
    Result<std::vector<std::string>> built = BuildCandidate(executor, candidate, step("building"));
    if (!built.ok()) return built.status();
    shared_objects = std::move(*built);
  }

  profile::Metrics metrics;
  // SASS of every built extension, concatenated: the entry kernel names select what ncu profiles.
  profile::ArtifactTexts texts;
  if (options.sass && !shared_objects.empty()) {
    ReadSass(executor, shared_objects, step("reading its SASS"), texts, metrics.notes);
  }
  Result<Json> request = ProfiledRunRequest(executor, problem, candidate, *reference);
  if (!request.ok()) return request.status();

  // ncu and the trace run on one GPU of the executor's pool, alone on it (the build above needs
  // none: it only compiles).
  GpuPool::Lease lease = executor.gpu_pool().Acquire();
  const std::map<std::string, std::string> env = lease.Env();
  if (options.ncu) {
    texts.ncu_csv = ProfileWithNcu(executor, *request, env, options.ncu_options, texts,
                                   step("profiling with ncu"), metrics.notes);
  }
  profile::Metrics parsed = profile::CollectFromTexts(texts);
  metrics.ncu = std::move(parsed.ncu);
  metrics.sass = std::move(parsed.sass);
  metrics.notes.insert(metrics.notes.end(), parsed.notes.begin(), parsed.notes.end());
  Save(options, ".ncu.csv", texts.ncu_csv);
  Save(options, ".sass.txt", texts.sass);
  Save(options, ".resusage.txt", texts.res_usage);
  Save(options, ".symbols.txt", texts.symbols);
  Save(options, ".nm.txt", texts.nm);

  if (options.timeline) {
    const bool from_nsys = options.timeline_source == "nsys" &&
                           NsysTimeline(executor, *request, env, options,
                                        step("tracing the timeline with nsys"), metrics);
    if (!from_nsys) {
      TraceTimeline(executor, *request, env, options, step("tracing the timeline"), metrics);
    }
  }
  return metrics;
}

}  // namespace kernelpro::eval
