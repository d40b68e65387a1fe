#include "suite/results.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "core/text.h"
#include "report/suite_stats.h"
#include "search/best_rule.h"
#include "suite/environment.h"
#include "suite/protocol.h"
#include "suite/session.h"

namespace kernelpro::suite {
namespace fs = std::filesystem;
namespace {

double ParseIso(const std::string& iso) {
  std::tm tm{};
  if (!strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm)) return 0;
  return static_cast<double>(timegm(&tm));
}

// torch.compile's speedup over eager for a task result, when its baselines were measured.
std::optional<double> CompileSpeedup(const Json& result) {
  const Json b = JsonGet<Json>(result, "baselines", nullptr);
  auto s = JsonNumber(b, "compile_speedup");
  if (s && *s > 0) return s;
  return std::nullopt;
}

// The recorded results of a suite's tasks by problem, and what they say about how they were
// measured.
struct TaskResults {
  std::map<std::size_t, std::vector<Json>> by_problem;  // problem index -> task results
  std::map<std::size_t, int> tasks_of;                  // problem index -> its tasks
  std::set<std::string> environments, methods, trials;  // measurement lines, each once
  std::set<std::string> criteria;  // correctness criteria; "unrecorded" for results without one
  std::map<std::size_t, std::vector<std::string>> damaged_of;  // problem index -> damaged tasks
  std::map<std::size_t, std::vector<TaskCosts>> costs_of;  // problem index -> its finished tasks'
  int finished = 0, pending = 0;     // tasks with a result; tasks without one (damaged ones apart)
  std::vector<std::string> damaged;  // task ids
};

TaskResults ReadTaskResults(const SuiteDir& dir, const SuiteManifest& manifest) {
  TaskResults read;
  const double now = NowSeconds();
  for (const SuiteTask& task : manifest.tasks) {
    ++read.tasks_of[task.problem];
    TaskStatus s = ReadTaskStatus(dir, task.id, now);
    if (s.state == TaskState::kDamaged) {
      read.damaged_of[task.problem].push_back(task.id);
      read.damaged.push_back(task.id);
      continue;
    }
    if (!s.result || s.state == TaskState::kRunning) {
      ++read.pending;  // not finished (a failed task being retried is running: its old result
      continue;        // is not the task's)
    }
    ++read.finished;
    read.by_problem[task.problem].push_back(*s.result);
    read.costs_of[task.problem].push_back(CostsOfTask(*s.result, ReadTaskVerdicts(dir, task)));
    if (const Json env = JsonGet<Json>(*s.result, "environment", nullptr); env.is_object()) {
      read.environments.insert(EnvironmentLine(env));
    }
    if (auto m = JsonGet<std::string>(*s.result, "timing_method", ""); !m.empty()) {
      read.methods.insert(m);
    }
    // A failed task (no evaluation, or a run that never started) was judged by nothing.
    if (JsonGet<std::string>(*s.result, "status", "error") != "error") {
      read.criteria.insert(JsonGet<std::string>(*s.result, "criterion", "unrecorded"));
    }
    if (auto calls = JsonNumber(*s.result, "timed_calls")) {
      char line[160];
      std::snprintf(line, sizeof line,
                    "%.0f timed calls of the kernel in %d interleaved rounds against the "
                    "reference",
                    *calls, JsonGet<int>(*s.result, "rounds", 0));
      read.trials.insert(line);
    }
  }
  return read;
}

// A result's speedup interval [low, high], when it holds one.
std::optional<std::pair<double, double>> SpeedupBounds(const Json& r) {
  const Json bounds = JsonGet<Json>(r, "speedup_interval", nullptr);
  if (!bounds.is_array() || bounds.size() != 2 || !bounds[0].is_number() ||
      !bounds[1].is_number()) {
    return std::nullopt;
  }
  return std::pair{bounds[0].get<double>(), bounds[1].get<double>()};
}

// The best correct result against `baseline` by the interval rule (search/best_rule.h: a result
// counts when its whole interval lies above 1x; a noisy one displaces a clear one only from
// above); while none does, the highest estimate, so that the row still shows the fastest correct
// kernel. Null when none can be scored (against torch.compile, a result without its time cannot).
const Json* BestResult(const std::vector<Json>& results, const std::string& baseline) {
  std::vector<const Json*> scored;
  std::vector<search::BestContender> contenders;
  for (const Json& r : results) {
    if (!JsonGet<bool>(r, "correct", false)) continue;
    auto s = JsonNumber(r, "speedup");
    if (!s) continue;
    double scale = 1;
    if (baseline == "compile") {
      auto c = CompileSpeedup(r);
      if (!c) continue;  // no torch.compile time: cannot be scored against it
      scale = 1 / *c;
    }
    const auto [low, high] = SpeedupBounds(r).value_or(std::pair{*s, *s});
    const RatioInterval interval{*s * scale, low * scale, high * scale, 0.95};
    scored.push_back(&r);
    contenders.push_back({interval, JsonGet<bool>(r, "noisy", false) || NoisyInterval(interval)});
  }
  if (auto pick = search::PickBest(contenders)) return scored[*pick];
  std::optional<std::size_t> fastest;
  for (std::size_t i = 0; i < scored.size(); ++i) {
    if (!fastest || contenders[i].speedup.estimate > contenders[*fastest].speedup.estimate) {
      fastest = i;
    }
  }
  return fastest ? scored[*fastest] : nullptr;
}

// A scored row from its best result: the speedups against `baseline` and the other baseline,
// the interval and times, and where its kernel and run report are.
void FillScoredRow(const Json& r, const std::string& baseline, report::SuiteProblemRow& row) {
  row.status = "correct";
  row.correct = true;
  const double eager = JsonGet<double>(r, "speedup", 0);
  const auto compile = CompileSpeedup(r);
  double scale = 1;
  if (baseline == "compile") {
    scale = 1 / *compile;
    row.other_speedup = eager;
  } else if (compile) {
    row.other_speedup = eager / *compile;
  }
  row.speedup = eager * scale;
  if (auto bounds = SpeedupBounds(r)) {
    row.speedup_low = bounds->first * scale;
    row.speedup_high = bounds->second * scale;
  }
  row.noisy = JsonGet<bool>(r, "noisy", false);
  row.shapes = JsonGet<std::string>(r, "shapes", "");
  row.kernel_ms = JsonNumber(r, "kernel_ms");
  row.reference_ms = JsonNumber(r, "reference_ms");
  row.sol_fraction = JsonNumber(r, "sol_fraction");
  if (baseline == "compile") {
    row.reference_ms = JsonNumber(JsonGet<Json>(r, "baselines", nullptr), "compile_ms");
  }
  row.best = JsonGet<std::string>(r, "best", "");
  row.run_report = JsonGet<std::string>(r, "run_report", "");
}

// Whether a row's tasks all finished: only those have a score and count in statistics.
bool Finished(const report::SuiteProblemRow& row) {
  return row.status != "pending" && row.status != "damaged";
}

// One problem's row: scored from its best result, else pending while tasks are left, else the
// first task's failure. Counts in `without_compile` a correct problem that cannot be scored
// against torch.compile.
report::SuiteProblemRow ProblemRow(const SuiteProblem& problem, const std::vector<Json>& results,
                                   int tasks, const std::vector<std::string>& damaged,
                                   const std::string& baseline, int& without_compile) {
  report::SuiteProblemRow row;
  row.key = problem.key;
  row.name = problem.name;
  row.level = problem.level;
  row.seeds = static_cast<int>(results.size());
  for (const Json& r : results) {
    row.candidates += static_cast<int>(JsonGet<Json>(r, "candidates", Json::array()).size());
  }
  // Not finished: no score yet (a best of some seeds is not the best of all of them), and
  // never a failure.
  if (!damaged.empty()) {
    row.status = "damaged";
    row.message = "the result of " + Join(damaged, ", ") +
                  " is damaged (not a result); `kernelpro suite resume` reruns it";
  } else if (results.size() < static_cast<std::size_t>(tasks)) {
    row.status = "pending";
    row.message =
        std::to_string(results.size()) + " of " + std::to_string(tasks) + " tasks finished";
  } else if (const Json* best = BestResult(results, baseline)) {
    FillScoredRow(*best, baseline, row);
  } else {
    // Every task finished without a kernel that can be scored: the first's failure.
    const Json& r = results.front();
    row.status = JsonGet<std::string>(r, "status", "error");
    row.message = JsonGet<std::string>(r, "message", "");
    row.run_report = JsonGet<std::string>(r, "run_report", "");
    if (baseline == "compile" && JsonGet<bool>(r, "correct", false)) {
      row.status = "no_baseline";
      row.message = "correct, but torch.compile's time is unknown (run with --compile-baseline)";
      ++without_compile;
    }
  }
  return row;
}

// What a problem's finished tasks cost: their wall times summed (its seeds, in optimize mode), and
// the largest peak of any of them.
void AddCosts(const std::vector<TaskCosts>& costs, report::SuiteProblemRow& row) {
  for (const TaskCosts& c : costs) {
    if (c.seconds) row.seconds = row.seconds.value_or(0) + *c.seconds;
    if (c.peak) row.peak_device_bytes = std::max(row.peak_device_bytes.value_or(0), c.peak->bytes);
  }
}

// How the rows were measured and chosen, as the report's "measurement" lines say it.
std::vector<std::string> MeasurementLines(const TaskResults& read, const SuiteManifest& manifest,
                                          const std::vector<report::SuiteProblemRow>& rows,
                                          const std::string& baseline, int without_compile) {
  int noisy = 0, scored = 0;
  for (const report::SuiteProblemRow& row : rows) {
    if (row.speedup) ++scored;
    if (row.speedup && row.noisy) ++noisy;
  }
  std::vector<std::string> lines;
  if (auto protocol = ProtocolFromJson(JsonGet<Json>(manifest.options, "protocol", nullptr))) {
    lines.push_back("protocol: " + DescribeProtocol(*protocol));
  }
  if (auto tasks = JsonGet<std::string>(manifest.options, "tasks", ""); !tasks.empty()) {
    lines.push_back("tasks: the list " + tasks);
  }
  if (manifest.mode == "optimize") {
    lines.push_back("conditions: " +
                    ConditionsOf(JsonGet<std::vector<std::string>>(manifest.options, "args", {})));
  }
  for (const std::string& e : read.environments) lines.push_back(e);
  for (const std::string& m : read.methods) lines.push_back("timing: " + m);
  for (const std::string& c : read.criteria) {
    lines.push_back(
        "correctness: " + c +
        (c == "unrecorded" ? " (results made before kernelpro named its criterion)" : ""));
  }
  for (const std::string& t : read.trials) lines.push_back("trials: " + t);
  lines.push_back(
      manifest.mode == "eval"
          ? "per problem: its best correct candidate (by the interval rule of docs/search.md)"
          : "per problem: the best kernel of its runs (best of seeds), as each run measured it");
  if (baseline == "compile") {
    lines.push_back(
        "baseline torch.compile: each speedup over eager divided by torch.compile(Model)'s "
        "speedup over eager, measured once per problem and GPU model in interleaved rounds");
  } else {
    lines.push_back("baseline: the eager PyTorch reference (Model)");
  }
  if (noisy > 0) {
    lines.push_back(
        std::to_string(noisy) + " of " + std::to_string(scored) +
        " speedups have noisy timing (an interval wider than half the estimate, or calls spread "
        "more than their median): counted at their estimate, flagged in the "
        "table; rerun those problems on a quieter machine before quoting them");
  }
  if (without_compile > 0) {
    lines.push_back(std::to_string(without_compile) +
                    " correct problems have no torch.compile time and count as "
                    "failures against it");
  }
  return lines;
}

}  // namespace

SuiteProgress ReadProgress(const SuiteDir& dir, const SuiteManifest& manifest, int parallel) {
  SuiteProgress p;
  const double now = NowSeconds();
  double first_start = 0, last_finish = 0, busy = 0;
  int timed = 0;
  for (const SuiteTask& task : manifest.tasks) {
    TaskStatus s = ReadTaskStatus(dir, task.id, now);
    ++p.total;
    switch (s.state) {
      case TaskState::kDone:
        ++p.done;
        break;
      case TaskState::kFailed:
        ++p.failed;
        break;
      case TaskState::kRunning:
        ++p.running;
        break;
      case TaskState::kInterrupted:
        ++p.interrupted;
        break;
      case TaskState::kPending:
        ++p.pending;
        break;
      case TaskState::kDamaged:
        ++p.damaged;
        break;
    }
    // Finished tasks only: a damaged or retried task's old result says nothing of its time.
    const bool finished = s.state == TaskState::kDone || s.state == TaskState::kFailed;
    TaskCosts costs;
    if (s.result && finished) {
      if (JsonGet<bool>(*s.result, "correct", false)) ++p.correct;
      double start = ParseIso(JsonGet<std::string>(*s.result, "started_at", ""));
      double finish = ParseIso(JsonGet<std::string>(*s.result, "finished_at", ""));
      if (start > 0 && (first_start == 0 || start < first_start)) first_start = start;
      last_finish = std::max(last_finish, finish);
      costs = CostsOfTask(*s.result, ReadTaskVerdicts(dir, task));
      if (costs.seconds) {  // a task of unknown time is not taken as one of no time
        busy += *costs.seconds;
        ++timed;
      }
    }
    if (s.claim && s.state == TaskState::kRunning &&
        (first_start == 0 || s.claim->started_at < first_start)) {
      first_start = s.claim->started_at;
    }
    p.tasks.push_back({task.id, std::move(s), std::move(costs)});
  }
  // The workers' own records: when work began (before any task, e.g. its builds), their phases,
  // and how many tasks they run at once.
  int live_parallel = 0;
  for (const SuiteSession& session : ReadSessions(dir)) {
    if (first_start == 0 || session.first_started_at < first_start) {
      first_start = session.first_started_at;
    }
    if (!session.live) continue;
    live_parallel += session.parallel;
    p.phases.emplace_back(session.phase, now - session.phase_since);
  }
  const int left = p.pending + p.running + p.interrupted + p.damaged;
  const bool active = p.running > 0 || live_parallel > 0;
  if (first_start > 0) p.elapsed_s = (active || left > 0 ? now : last_finish) - first_start;
  if (timed > 0 && left > 0) {
    const int at_once =
        std::max(1, parallel > 0 ? parallel : (live_parallel > 0 ? live_parallel : p.running));
    p.remaining_s = busy / timed * left / at_once;
  }
  return p;
}

std::vector<const TaskProgress*> SlowestTasks(const SuiteProgress& progress, std::size_t n) {
  std::vector<const TaskProgress*> timed;
  for (const TaskProgress& task : progress.tasks) {
    if (task.costs.seconds) timed.push_back(&task);
  }
  std::stable_sort(timed.begin(), timed.end(), [](const TaskProgress* a, const TaskProgress* b) {
    return *a->costs.seconds > *b->costs.seconds;
  });
  if (timed.size() > n) timed.resize(n);
  return timed;
}

std::vector<report::ScoredProblem> Scores(const std::vector<report::SuiteProblemRow>& rows) {
  std::vector<report::ScoredProblem> out;
  for (const report::SuiteProblemRow& r : rows) {
    if (!Finished(r)) continue;  // no score yet
    report::ScoredProblem s;
    s.key = r.key;
    s.level = r.level;
    s.correct = r.correct && r.speedup.has_value();
    s.speedup = r.speedup.value_or(0);
    out.push_back(s);
  }
  return out;
}

Result<report::SuiteReportInput> ReadSuiteReport(const SuiteDir& dir, const SuiteManifest& manifest,
                                                 const std::string& baseline) {
  if (baseline != "eager" && baseline != "compile") {
    return Status::InvalidArgument("--baseline must be eager or compile, not '" + baseline + "'");
  }
  report::SuiteReportInput input;
  input.title = fs::path(dir.dir()).filename().string();
  input.mode = manifest.mode;
  input.baseline = baseline == "compile" ? "torch.compile" : "eager";
  TaskResults read = ReadTaskResults(dir, manifest);
  int without_compile = 0;
  for (std::size_t i = 0; i < manifest.problems.size(); ++i) {
    input.rows.push_back(ProblemRow(manifest.problems[i], read.by_problem[i], read.tasks_of[i],
                                    read.damaged_of[i], baseline, without_compile));
    AddCosts(read.costs_of[i], input.rows.back());
  }
  input.stats = report::SummarizeSuite(Scores(input.rows));
  input.tasks_total = static_cast<int>(manifest.tasks.size());
  input.tasks_finished = read.finished;
  input.tasks_pending = read.pending;
  input.tasks_damaged = static_cast<int>(read.damaged.size());
  if (read.pending + input.tasks_damaged > 0) {
    int finished_problems = 0;
    for (const report::SuiteProblemRow& row : input.rows) {
      finished_problems += Finished(row) ? 1 : 0;
    }
    input.incomplete = "unfinished: " + std::to_string(read.finished) + " of " +
                       std::to_string(input.tasks_total) + " tasks have a result (" +
                       std::to_string(read.pending) + " pending" +
                       (read.damaged.empty() ? std::string()
                                             : ", " + std::to_string(read.damaged.size()) +
                                                   " damaged: " + Join(read.damaged, ", ")) +
                       "); the statistics cover the " + std::to_string(finished_problems) + " of " +
                       std::to_string(input.rows.size()) + " problems whose tasks all finished";
  }
  input.measurement = MeasurementLines(read, manifest, input.rows, baseline, without_compile);
  input.criteria.assign(read.criteria.begin(), read.criteria.end());
  input.timing_methods.assign(read.methods.begin(), read.methods.end());
  return input;
}

Result<std::vector<std::string>> ComparisonCaveats(const report::SuiteReportInput& a,
                                                   const report::SuiteReportInput& b) {
  auto recorded = [](const std::vector<std::string>& criteria) {
    std::vector<std::string> named;
    for (const std::string& c : criteria) {
      if (c != "unrecorded") named.push_back(c);
    }
    return named;
  };
  const std::vector<std::string> ca = recorded(a.criteria), cb = recorded(b.criteria);
  if (ca.size() > 1 || cb.size() > 1 || (!ca.empty() && !cb.empty() && ca != cb)) {
    return Status::InvalidArgument(
        "the suites were judged by different correctness criteria (" + a.title + ": " +
        (ca.empty() ? std::string("unrecorded") : Join(ca, " and ")) + "; " + b.title + ": " +
        (cb.empty() ? std::string("unrecorded") : Join(cb, " and ")) +
        "): a kernel correct under one may be incorrect under the other. Compare suites made "
        "with the same --correctness");
  }
  std::vector<std::string> caveats;
  for (const report::SuiteReportInput* s : {&a, &b}) {
    if (std::find(s->criteria.begin(), s->criteria.end(), "unrecorded") != s->criteria.end()) {
      caveats.push_back(s->title +
                        " has results made before kernelpro named its correctness criterion "
                        "(then strict unless the suite chose other tolerances)");
    }
  }
  if (!a.timing_methods.empty() && !b.timing_methods.empty() &&
      a.timing_methods != b.timing_methods) {
    caveats.push_back("the suites were timed differently (" + a.title + ": " +
                      Join(a.timing_methods, "; ") + "; " + b.title + ": " +
                      Join(b.timing_methods, "; ") + ")");
  }
  return caveats;
}

}  // namespace kernelpro::suite
