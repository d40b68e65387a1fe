#include "suite/runner.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "core/parallel.h"
#include "core/progress.h"
#include "core/subprocess.h"
#include "core/text.h"
#include "eval/gpu_pool.h"
#include "eval/shape_check.h"
#include "report/run_report.h"
#include "report/stored_run.h"
#include "store/run_layout.h"
#include "store/run_store.h"
#include "suite/session.h"
#include "suite/suite_lock.h"

namespace kernelpro::suite {
namespace fs = std::filesystem;
namespace {

// How far a failed candidate got, for the status of a task none of whose candidates is correct.
int Progress(const std::string& status) {
  static const std::map<std::string, int> kOrder = {{"incorrect", 5},
                                                    {"runtime_error", 4},
                                                    {"timeout", 3},
                                                    {"compile_error", 2},
                                                    {"llm_error", 1}};
  auto it = kOrder.find(status);
  return it == kOrder.end() ? 0 : it->second;
}

// The failure of the candidate (or node) that got furthest, for a task with no correct one.
struct FurthestFailure {
  int rank = -1;
  std::string status = "no_candidate";
  std::string message;
  void Consider(const std::string& candidate_status, const std::string& candidate_message) {
    if (Progress(candidate_status) <= rank) return;
    rank = Progress(candidate_status);
    status = candidate_status;
    message = candidate_message;
  }
};

std::string FirstLine(const std::string& text) {
  return ShortenText(text.substr(0, text.find('\n')), 300);
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// The claims this process holds, refreshed every kHeartbeatSeconds by a thread of their own.
class Heartbeats {
 public:
  explicit Heartbeats(const SuiteDir& dir) : dir_(dir), thread_([this] { Loop(); }) {}
  ~Heartbeats() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  void Add(const std::string& task) {
    std::lock_guard<std::mutex> lock(mu_);
    held_.insert(task);
  }
  void Remove(const std::string& task) {
    std::lock_guard<std::mutex> lock(mu_);
    held_.erase(task);
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      wake_.wait_for(lock, std::chrono::duration<double>(kHeartbeatSeconds));
      if (stop_) break;
      for (const std::string& task : held_) Heartbeat(dir_, task);
    }
  }
  const SuiteDir& dir_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::set<std::string> held_;
  bool stop_ = false;
  std::thread thread_;
};

Json BaseResult(const SuiteManifest& manifest, const SuiteTask& task) {
  const SuiteProblem& p = manifest.problems[task.problem];
  return {{"task", task.id},       {"problem", p.key},  {"name", p.name},    {"level", p.level},
          {"mode", manifest.mode}, {"seed", task.seed}, {"host", HostName()}};
}

// ---- eval

Json RunEvalTask(const SuiteDir& dir, const SuiteManifest& manifest, const SuiteTask& task,
                 const RunnerOptions& options) {
  const SuiteProblem& problem = manifest.problems[task.problem];
  std::vector<Json> verdicts;
  for (std::size_t i = 0; i < task.candidates.size(); ++i) {
    const std::string saved = dir.candidate_result(task.id, i);
    if (auto stored = ReadJsonFile(saved); stored.ok() && stored->is_object()) {
      verdicts.push_back(*stored);  // evaluated before an interruption: not redone
      continue;
    }
    auto report = options.executor->Evaluate(problem.path, {task.candidates[i]});
    if (!report.ok() && report.status().code() == Status::Code::kUnavailable) {
      // The machine, not the task: no device. Every other task would fail the same way.
      return Json{{"fatal", report.status().message()}};
    }
    if (!report.ok()) {
      Json failed = BaseResult(manifest, task);
      failed["status"] = "error";
      failed["message"] = "the evaluation could not run: " + report.status().message();
      return failed;
    }
    Json verdict = ToJson(report->results.front());
    verdict["reference"] = {{"vacuous", JsonGet<std::string>(report->reference, "vacuous", "")},
                            {"notes", JsonGet<Json>(report->reference, "notes", Json::array())}};
    if (Status s = WriteJsonFile(saved, verdict); !s.ok()) {
      Json failed = BaseResult(manifest, task);
      failed["status"] = "error";
      failed["message"] = s.message();
      return failed;
    }
    verdicts.push_back(std::move(verdict));
    if (options.after_verdict) options.after_verdict();
  }
  return EvalTaskResult(dir, manifest, task, verdicts);
}

// ---- optimize

// The run's outcome as the run measured it, from its store.
void AddRunOutcome(const SuiteDir& dir, const std::string& run_dir, Json& result) {
  store::RunStoreOptions open;
  open.create = false;
  auto store = store::RunStore::Open(run_dir, open);
  if (!store.ok()) return;
  auto run = report::ReadStoredRun(**store, run_dir);
  if (!run.ok()) return;
  const report::RunReportInput& input = (*run)->input;
  result["criterion"] = eval::CorrectnessCriterion(input.config.executor);
  result["iterations"] = input.summary.iterations_done;
  result["cost_usd"] = input.summary.cost_usd;
  result["stop"] = input.summary.stop_message;
  const store::RunLayout layout(run_dir);
  if (fs::exists(layout.html_report())) result["run_report"] = dir.Relative(layout.html_report());
  FurthestFailure furthest;
  for (const auto& [id, info] : (*run)->nodes)
    furthest.Consider(eval::EvalStatusName(info.status), "");
  const search::Tree& tree = (*run)->tree;
  auto verdict = report::JudgeBest(tree, &(*run)->nodes);
  // The row's kernel: the best; while the reference stays the answer (correct kernels, none shown
  // faster than it), the fastest correct one, and the verdict says so (no best.py).
  const std::optional<int> shown =
      verdict ? std::optional<int>(verdict->node) : tree.FastestCorrectNode();
  if (!shown) {
    result["status"] = furthest.status;
    result["correct"] = false;
    return;
  }
  const search::Node& node = tree.node(*shown);
  result["status"] = "correct";
  result["correct"] = true;
  if (node.speedup) {
    result["speedup"] = node.speedup->estimate;
    result["speedup_interval"] = {node.speedup->low, node.speedup->high};
  }
  // The reference's own median is not kept per node, and is not made up from the ratio here.
  if (auto info = (*run)->nodes.find(*shown); info != (*run)->nodes.end()) {
    if (info->second.candidate_ms) result["kernel_ms"] = *info->second.candidate_ms;
    if (info->second.sol_fraction) result["sol_fraction"] = *info->second.sol_fraction;
    // Whether it is correct on shapes the benchmark never showed (eval/shape_check.h).
    if (!info->second.shapes.empty()) result["shapes"] = info->second.shapes;
  }
  if (!verdict) {
    result["answer"] = "reference";
    result["noisy"] = node.noisy_timing;
    result["fastest_node"] = *shown;
    result["verdict"] = report::ReferenceStaysText(tree).value_or("") + ".";
    return;
  }
  result["noisy"] = verdict->noisy;
  result["best_node"] = verdict->node;
  result["verdict"] = verdict->text;
  if (fs::exists(layout.best_kernel())) result["best"] = dir.Relative(layout.best_kernel());
  result["timing_method"] =
      "as the run measured its best node (interleaved rounds against the "
      "reference)";
}

Json RunOptimizeTask(const SuiteDir& dir, const SuiteManifest& manifest, const SuiteTask& task,
                     const RunnerOptions& options, const std::string& gpu) {
  const OptimizeTaskRun run = OptimizeTask(dir, manifest, task, gpu);
  Json result = BaseResult(manifest, task);
  result["run_dir"] = dir.Relative(dir.run_dir(task.id));
  result["log"] = dir.Relative(dir.log(task.id));
  auto process = options.optimize_child(run);
  if (!process.ok()) {
    result["status"] = "error";
    result["message"] = process.status().message();
    (void)WriteFileAtomically(dir.log(task.id), process.status().message() + "\n");
    return result;
  }
  process->capture_bytes = 256 * 1024;
  auto ran = RunProcess(*process);
  // The command, then the request it read on stdin (the run, as the child was given it).
  std::string log = "$ " + Join(process->argv, " ") + "\n";
  if (!process->stdin_data.empty()) log += process->stdin_data + "\n";
  if (!ran.ok()) {
    result["status"] = "error";
    result["message"] = ran.status().message();
    (void)WriteFileAtomically(dir.log(task.id), log + ran.status().message() + "\n");
    return result;
  }
  log += ran->stdout_text + ran->stderr_text;
  (void)WriteFileAtomically(dir.log(task.id), log);
  result["exit_code"] = ran->exited ? ran->exit_code : -1;
  // 0: a best kernel; 1: the run finished without a correct kernel. Anything else: the run
  // itself failed (a usage error, an LLM that stopped answering, a crash).
  if (!ran->exited || (ran->exit_code != 0 && ran->exit_code != 1)) {
    result["status"] = "error";
    result["message"] = std::string(run.resume ? "kernelpro resume " : "kernelpro optimize ") +
                        ran->Describe() + ": " + FirstLine(LastLine(ran->stderr_text));
    AddRunOutcome(dir, dir.run_dir(task.id), result);
    result["status"] = "error";  // recorded progress stays; resume continues the run
    return result;
  }
  AddRunOutcome(dir, dir.run_dir(task.id), result);
  if (!result.contains("status")) {
    result["status"] = "error";
    result["message"] = "the run left no readable run store in " + dir.run_dir(task.id);
  }
  return result;
}

// eval: every candidate still to evaluate is built first, `jobs` at a time (builds are CPU work
// and cached by content, so the device steps that follow find them built).
void PrebuildEvalCandidates(const SuiteDir& dir, const SuiteManifest& manifest,
                            const std::vector<std::size_t>& mine, const RunnerOptions& options,
                            const std::function<void(const std::string&)>& say,
                            SessionRecorder& session) {
  std::vector<std::string> builds;
  for (std::size_t k : mine) {
    const SuiteTask& task = manifest.tasks[k];
    if (ReadTaskStatus(dir, task.id, NowSeconds()).state == TaskState::kDone) continue;
    for (std::size_t i = 0; i < task.candidates.size(); ++i) {
      if (!fs::exists(dir.candidate_result(task.id, i))) builds.push_back(task.candidates[i]);
    }
  }
  const int jobs = std::max(1, options.executor->options().jobs);
  if (builds.size() > 1 && jobs > 1) {
    const std::string phase = "building " + std::to_string(builds.size()) + " candidates, " +
                              std::to_string(jobs) + " at a time";
    say(phase);
    session.Phase(phase);
    // Each build is a progress step: a line when it starts and ends, and a heartbeat naming the
    // builds still running after 30 s of silence (core/progress.h).
    ProgressSink* progress = options.executor->progress();
    const int n = static_cast<int>(builds.size());
    if (progress) progress->BatchStarted(n);
    ParallelFor(builds.size(), static_cast<std::size_t>(jobs), [&](std::size_t i) {
      const ProgressStep step{static_cast<int>(i) + 1, n, fs::path(builds[i]).filename().string(),
                              "building"};
      eval::EvalResult ignored;  // failures are reported by the evaluation itself
      {
        ProgressScope scope(progress, step);
        options.executor->Build(builds[i], ignored);
        if (ignored.build_cached) scope.set_outcome("cached");
      }
      if (progress) progress->ItemFinished(step);
    });
  }
}

// The problem's eager and torch.compile baselines for a task's result (RunnerOptions::baselines).
Json Baselines(const SuiteManifest& manifest, const SuiteTask& task, const RunnerOptions& options,
               const Json& environment) {
  return options.baselines(
      manifest.problems[task.problem],
      task.problem < manifest.problem_sha256.size() ? manifest.problem_sha256[task.problem] : "",
      environment);
}

// When the task ran and how often it was tried, into its result.
void StampResult(Json& result, const TaskStatus& before, double start) {
  result["started_at"] = IsoTime(start);
  result["finished_at"] = IsoTime(NowSeconds());
  result["seconds"] = NowSeconds() - start;
  int attempts = 1;
  if (before.result) attempts += JsonGet<int>(*before.result, "attempts", 1);
  result["attempts"] = attempts;
}

// "[3/11] level1/19_ReLU: correct 1.52x in 40 s", or the failure's first line after a dash.
std::string FinishedLine(int n, std::size_t total, const std::string& task, const Json& result,
                         const Status& written) {
  const std::string status = JsonGet<std::string>(result, "status", "error");
  char speed[96] = "";
  if (auto s = JsonNumber(result, "speedup")) {
    std::snprintf(speed, sizeof speed, " %.2fx%s", *s,
                  JsonGet<bool>(result, "noisy", false) ? " (noisy timing)" : "");
  }
  char secs[32];
  std::snprintf(secs, sizeof secs, " in %.0f s", JsonGet<double>(result, "seconds", 0));
  std::string line = "[" + std::to_string(n) + "/" + std::to_string(total) + "] " + task + ": " +
                     status + speed + secs;
  if (status != "correct" && result.contains("message")) {
    line += " — " + FirstLine(JsonGet<std::string>(result, "message", ""));
  }
  if (!written.ok()) line += " (NOT SAVED: " + written.message() + ")";
  return line;
}

}  // namespace

std::string ExpandPlaceholders(const std::string& text, const std::string& problem,
                               std::uint64_t seed) {
  return Replace(Replace(text, "{problem}", problem), "{seed}", std::to_string(seed));
}

std::string SelfExecutable() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "kernelpro" : self.string();
}

OptimizeTaskRun OptimizeTask(const SuiteDir& dir, const SuiteManifest& manifest,
                             const SuiteTask& task, const std::string& gpu) {
  const SuiteProblem& problem = manifest.problems[task.problem];
  OptimizeTaskRun run;
  run.problem = problem.path;
  run.run_dir = dir.run_dir(task.id);
  std::error_code ec;
  run.resume = fs::exists(store::RunLayout(run.run_dir).store(), ec);
  if (JsonGet<bool>(manifest.options, "seeded", false)) run.seed = task.seed;
  for (const Json& a : JsonGet<Json>(manifest.options, "args", Json::array())) {
    if (a.is_string()) run.options.push_back(ExpandPlaceholders(a, problem.name, task.seed));
  }
  if (task.temperature) {
    char temperature[32];
    std::snprintf(temperature, sizeof temperature, "%g", *task.temperature);
    run.options.insert(run.options.end(), {"--temperature", temperature});
  }
  run.gpu = gpu;
  return run;
}

Json EvalTaskResult(const SuiteDir& dir, const SuiteManifest& manifest, const SuiteTask& task,
                    const std::vector<Json>& verdicts) {
  Json result = BaseResult(manifest, task);
  result["candidates"] = Json::array();
  int best = -1;
  FurthestFailure furthest;
  for (std::size_t i = 0; i < verdicts.size(); ++i) {
    const Json& v = verdicts[i];
    const std::string status = JsonGet<std::string>(v, "status", "runtime_error");
    auto speedup = JsonNumber(v, "speedup");
    // What the verdicts were judged by (every verdict of one evaluation names the same).
    if (auto criterion = JsonGet<std::string>(v, "criterion", ""); !criterion.empty()) {
      result["criterion"] = criterion;
    }
    result["candidates"].push_back(
        {{"file", dir.Relative(JsonGet<std::string>(v, "candidate", ""))},
         {"status", status},
         {"speedup", NumberOrNull(speedup)},
         {"noisy", !JsonGet<std::string>(v, "noisy_timing", "").empty()},
         {"message", FirstLine(JsonGet<std::string>(v, "message", ""))},
         {"verdict", dir.Relative(dir.candidate_result(task.id, i))}});
    if (status == "correct" && speedup) {
      if (best < 0 || *speedup > *JsonNumber(verdicts[best], "speedup")) best = static_cast<int>(i);
    } else {
      furthest.Consider(status, FirstLine(JsonGet<std::string>(v, "message", "")));
    }
  }
  if (best < 0) {
    result["status"] = furthest.status;
    result["correct"] = false;
    result["message"] = verdicts.empty()
                            ? "no candidate file for this problem in " + manifest.candidates_dir
                            : furthest.message;
    return result;
  }
  const Json& v = verdicts[best];
  result["status"] = "correct";
  result["correct"] = true;
  result["best"] = dir.Relative(JsonGet<std::string>(v, "candidate", ""));
  result["speedup"] = JsonGet<double>(v, "speedup", 0);
  result["speedup_interval"] = JsonGet<Json>(v, "speedup_interval", nullptr);
  result["noisy"] = !JsonGet<std::string>(v, "noisy_timing", "").empty();
  if (auto shapes = eval::ShapeGeneralityText(JsonGet<Json>(v, "shapes", Json()));
      !shapes.empty()) {
    result["shapes"] = shapes;
  }
  result["reference_ms"] = JsonGet<Json>(v, "reference_ms", nullptr);
  result["kernel_ms"] = JsonGet<Json>(v, "candidate_ms", nullptr);
  result["sol_fraction"] = JsonGet<Json>(v, "sol_fraction", nullptr);
  result["speedup_vs_compiled"] = JsonGet<Json>(v, "speedup_vs_compiled", nullptr);
  result["timing_method"] = JsonGet<std::string>(v, "timing_method", "");
  result["gpu"] = JsonGet<std::string>(v, "gpu", "");
  if (const Json& t = JsonGet<Json>(v, "candidate_timing", nullptr); t.is_object()) {
    result["timed_calls"] = JsonGet<int>(t, "count", 0);
    result["rounds"] = JsonGet<Json>(t, "block_medians_ms", Json::array()).size();
  }
  return result;
}

namespace {

// What a mode needs from RunnerOptions; Internal when the caller left it out.
Status CheckRunnerOptions(const SuiteManifest& manifest, const RunnerOptions& options) {
  if (manifest.mode == "eval" && !options.executor) {
    return Status::Internal("an eval suite needs an executor");
  }
  if (manifest.mode == "optimize" && !options.optimize_child) {
    return Status::Internal("an optimize suite needs a way to start its runs");
  }
  return Status::Ok();
}

}  // namespace

Result<ShardSummary> RunShard(const SuiteDir& dir, const SuiteManifest& manifest,
                              const RunnerOptions& options) {
  if (Status ready = CheckRunnerOptions(manifest, options); !ready.ok()) return ready;
  // One writer per suite (per shard): held until every task of this run has its result.
  auto lock = SuiteLock::Acquire(dir, options.shard, options.shards, options.command);
  if (!lock.ok()) return lock.status();
  const std::vector<std::size_t> mine = ShardTasks(manifest, options.shard, options.shards);
  const std::function<void(const std::string&)> say = [&](const std::string& line) {
    if (options.say) options.say(line);
  };
  ShardSummary summary;
  std::mutex mu;  // summary, say, environments
  std::map<std::string, Json> environments;
  auto environment_of = [&](const std::string& gpu) -> Json {
    std::lock_guard<std::mutex> lock(mu);
    auto it = environments.find(gpu);
    if (it != environments.end()) return it->second;
    Json env = options.environment ? options.environment(gpu) : Json::object();
    environments[gpu] = env;
    return env;
  };

  // GPUs for optimize children (the executor leases its own in eval mode).
  eval::GpuPool pool(options.gpus);
  const int workers =
      options.gpus.empty() ? std::max(1, options.parallel) : static_cast<int>(options.gpus.size());
  Heartbeats heartbeats(dir);
  SessionRecorder session(dir, options.shard, workers);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::string fatal;  // under mu
  std::atomic<int> finished{0};
  const std::size_t total = mine.size();

  if (manifest.mode == "eval") PrebuildEvalCandidates(dir, manifest, mine, options, say, session);
  session.Phase("running tasks");

  auto work = [&] {
    for (std::size_t k = next++; k < mine.size() && !stop; k = next++) {
      const SuiteTask& task = manifest.tasks[mine[k]];
      TaskStatus before = ReadTaskStatus(dir, task.id, NowSeconds());
      if (before.state == TaskState::kDone ||
          (before.state == TaskState::kFailed && !options.retry_failed)) {
        std::lock_guard<std::mutex> lock(mu);
        ++summary.already_done;
        continue;
      }
      auto claimed = TryClaim(dir, task.id, options.shard);
      if (!claimed.ok() || !*claimed) {
        std::lock_guard<std::mutex> lock(mu);
        ++summary.held_elsewhere;
        say(task.id + ": " +
            (claimed.ok() ? "held by another process; left to it"
                          : "cannot claim: " + claimed.status().message()));
        continue;
      }
      heartbeats.Add(task.id);
      // Claimed: a result written meanwhile by another process (between our read and the
      // claim) means nothing is left to do.
      if (ReadTaskStatus(dir, task.id, NowSeconds()).state == TaskState::kDone) {
        heartbeats.Remove(task.id);
        ReleaseClaim(dir, task.id);
        std::lock_guard<std::mutex> lock(mu);
        ++summary.already_done;
        continue;
      }
      say(task.id + ": started" +
          (before.state == TaskState::kInterrupted ? " (again: its last run was interrupted)"
           : before.state == TaskState::kFailed    ? " (again: its last run failed)"
           : before.state == TaskState::kDamaged   ? " (again: its result file was damaged)"
                                                   : ""));
      const double start = NowSeconds();
      Json result;
      std::string gpu;
      if (manifest.mode == "eval") {
        result = RunEvalTask(dir, manifest, task, options);
        if (result.contains("fatal")) {
          heartbeats.Remove(task.id);
          ReleaseClaim(dir, task.id);
          std::lock_guard<std::mutex> lock(mu);
          if (!stop.exchange(true)) fatal = JsonGet<std::string>(result, "fatal", "");
          break;
        }
        gpu = JsonGet<std::string>(result, "gpu", options.gpus.empty() ? "" : options.gpus[0]);
      } else {
        eval::GpuPool::Lease lease = pool.Acquire();
        gpu = lease.gpu();
        result = RunOptimizeTask(dir, manifest, task, options, gpu);
      }
      result["environment"] = environment_of(gpu);
      if (options.baselines && JsonGet<std::string>(result, "status", "") != "error") {
        result["baselines"] = Baselines(manifest, task, options, result["environment"]);
      }
      StampResult(result, before, start);
      Status written = WriteJsonFile(dir.result(task.id), result);
      heartbeats.Remove(task.id);
      ReleaseClaim(dir, task.id);
      const int n = ++finished;
      std::lock_guard<std::mutex> lock(mu);
      ++summary.ran;
      const std::string status = JsonGet<std::string>(result, "status", "error");
      if (status == "error") ++summary.failed;
      say(FinishedLine(n, total, task.id, result, written));
      if (options.after_task) options.after_task();
    }
  };
  std::vector<std::thread> threads;
  for (int i = 1; i < workers; ++i) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  if (stop) {
    return Status::Unavailable(fatal +
                               " (no task was marked failed; run the suite again once "
                               "the device is there)");
  }
  return summary;
}

}  // namespace kernelpro::suite
