// `kernelpro optimize`: one search from a problem to the fastest validated kernel (paper §3.3,
// Algorithm 1), and `kernelpro resume RUN_DIR`, which continues a run that stopped or was killed.
//
// Both leave in the run directory: run.db (every step, exchange and verdict), stage1.json,
// candidates/NNNN.py, memory.jsonl (with memory on), best.py (the best kernel with a header saying
// where and how it was measured), report.md and report.html (the same report as one offline page).
//
// Exit codes: 0 a correct kernel was found, 1 none was, 2 bad input or a run that could not go on
// (the run directory can then be resumed; a new run that stopped before its first LLM exchange
// takes back what it created instead, so that optimize can simply be run again).
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "agents/benchmarking_agent.h"
#include "agents/cutlass_tools.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/option_groups.h"
#include "cli/preflight.h"
#include "cli/prompt_gpu.h"
#include "core/stats.h"
#include "core/termination.h"
#include "core/text.h"
#include "cutlass/locate.h"
#include "eval/energy.h"
#include "llm/cassette.h"
#include "llm/factory.h"
#include "llm/price.h"
#include "report/run_report.h"
#include "report/stored_run.h"
#include "roofline/hardware.h"
#include "search/orchestrator.h"
#include "store/run_lock.h"
#include "store/run_store.h"

namespace kernelpro::cli {
namespace {

namespace fs = std::filesystem;

struct OptimizeArgs {
  std::string problem, run_dir, search = "mcts", feedback = "tools", tool_mode = "proactive",
                                device = "cuda", gpu, python, cutlass_dir, energy = "off";
  int candidates = 2;
  int max_tokens = 16384;
  std::vector<double> temperatures;  // --temperature: one, or one per candidate
  bool no_memory = false;
  bool no_cutlass_tools = false;
  int cutlass_search_budget = 6;
  int energy_kernels = 2;  // --energy measure|aware: kernels NVML measures after the search
  int energy_windows = 30;
  double energy_window_s = 2.0;
  std::string nvml_library;
  bool demo = false;
  bool quiet = false;  // --quiet: no progress on stderr
  std::uint64_t seed = 0;
  bool seed_given = false;  // --seed was on the command line: the programmer's requests carry seeds
  SearchBudget budget;      // iterations not given: 30, or the demo's length
  LlmOptions llm;
  tools::ToolConfig tools;
  eval::EvalOptions eval;
};

struct ResumeArgs {
  std::string run_dir;
  // Given only to be compared with the run's own: a run keeps its problem, search and device.
  std::string problem, search, device;
  eval::EvalOptions
      sandbox;          // only its sandbox options: --unsafe-no-sandbox, --pass-env, --sandbox-read
  SearchBudget budget;  // what is not given: the run's own
  LlmOptions llm;
  // The machine's own, for a run continued elsewhere: --gpus, --python; empty: the run's own.
  std::vector<std::string> gpus;
  std::string python;
  std::string nvml_library;  // --nvml-library: the machine's own
  bool quiet = false;        // --quiet: no progress on stderr
};

// ---- what a resumed run needs from the command line that started it

std::string LlmLabel(const llm::LlmConfig& c) {
  std::string label = c.provider + ":" + c.model;
  if (!c.base_url.empty()) label += "@" + c.base_url;
  return label;
}

// ---- the hidden test hook: KERNELPRO_TEST_KILL_AFTER_STEP=STEP[@ITERATION] ends the process
// with SIGKILL right after that journal step is recorded done (STEP: select, generate, evaluate,
// profile, record) or, for STEP "exchange", right after an LLM exchange is stored. Tests use it to
// prove that a run killed at that instant resumes with nothing lost and nothing done twice.
struct KillPoint {
  std::string step;
  int iteration = -1;  // any
};

std::optional<KillPoint> KillPointFromEnvironment() {
  const char* value = std::getenv("KERNELPRO_TEST_KILL_AFTER_STEP");
  if (!value || !*value) return std::nullopt;
  KillPoint point;
  std::string text = value;
  if (size_t at = text.find('@'); at != std::string::npos) {
    point.iteration = std::atoi(text.c_str() + at + 1);
    text = text.substr(0, at);
  }
  point.step = text;
  return point;
}

void KillIf(const std::optional<KillPoint>& point, const std::string& step, int iteration) {
  if (!point || point->step != step) return;
  if (point->iteration >= 0 && point->iteration != iteration) return;
  std::cout.flush();
  std::raise(SIGKILL);
}

// ---- where the measurements were taken: the worker's inspect step

report::RunEnvironment InspectEnvironment(const eval::Executor& executor,
                                          const std::string& device) {
  report::RunEnvironment env;
  env.device = device;
  auto inspected = InspectDevice(executor, device);
  if (!inspected.ok()) return env;
  const Json& info = *inspected;
  env.device_name = JsonGet<std::string>(info, "gpu_name", "");
  env.driver = JsonGet<std::string>(info, "driver", "");
  std::string torch = JsonGet<std::string>(info, "torch_version", "");
  std::string cuda = JsonGet<std::string>(info, "cuda_version", "");
  if (!torch.empty()) env.toolchain = "torch " + torch;
  if (!cuda.empty())
    env.toolchain += (env.toolchain.empty() ? "" : ", ") + std::string("CUDA ") + cuda;
  return env;
}

// Whether the run in `store` holds anything worth resuming: an LLM exchange (paid for, and where
// every candidate comes from). A run that stopped before its first exchange is cheaper to start
// again than to resume.
bool HoldsExchanges(store::RunStore& store) {
  auto runs = store.ListRuns();
  if (!runs.ok()) return true;  // unreadable: keep it, the user decides
  for (const store::RunRecord& run : *runs) {
    auto exchanges = store.ListLlmExchanges(run.id);
    if (!exchanges.ok() || !exchanges->empty()) return true;
  }
  return false;
}

// What a run directory's store holds, for a new run that would go there.
enum class StoredRun {
  kNone,      // no run.db
  kNothing,   // a run.db with no run, or a run that stopped before its first LLM exchange
  kRecorded,  // a run worth resuming
};

StoredRun StoredRunIn(const std::string& run_dir) {
  std::error_code ec;
  if (!fs::exists(store::RunLayout(run_dir).store(), ec)) return StoredRun::kNone;
  store::RunStoreOptions options;
  options.create = false;
  auto store = store::RunStore::Open(run_dir, options);
  if (!store.ok()) return StoredRun::kRecorded;  // unreadable: keep it, the user decides
  return HoldsExchanges(**store) ? StoredRun::kRecorded : StoredRun::kNothing;
}

// Removes a run store that holds nothing worth resuming (StoredRun::kNothing), with its SQLite
// companions.
void RemoveRunStore(const std::string& run_dir) {
  const std::string db = store::RunLayout(run_dir).store();
  std::error_code ec;
  for (const std::string& file : {db, db + "-wal", db + "-shm", db + "-journal"}) {
    fs::remove(file, ec);
  }
}

std::string AlreadyHoldsARun(const std::string& run_dir) {
  return run_dir + " already holds a run; continue it with: kernelpro resume " + run_dir +
         " (or give another --run-dir)";
}

// ---- one run, new or resumed

// `recorded` is set once the run holds something worth resuming (see HoldsExchanges).
int RunSearch(search::RunConfig options, const tools::ToolRegistry& registry, bool resume,
              bool quiet, bool& recorded) {
  const char* command = resume ? "resume" : "optimize";
  auto fail = [&](const std::string& message) {
    std::cerr << "kernelpro " << command << ": " << message << "\n";
    return 2;
  };
  // Each step of the work on stderr while it runs; the lines printed meanwhile (notes on stderr,
  // the iteration lines on stdout) go through it so that none tears its status line.
  std::shared_ptr<ProgressReporter> progress = MakeProgress(command, quiet);
  auto say = [progress](std::ostream& out, const std::string& line) {
    if (progress) {
      progress->WriteAbove(out, line);
    } else {
      out << line << std::endl;
    }
  };
  store::RunStoreOptions store_options;
  store_options.create = !resume;
  auto store = store::RunStore::Open(options.run_dir, store_options);
  if (!store.ok()) return fail(store.status().message());

  auto sink = std::make_shared<search::ExchangeSink>();
  const auto kill = KillPointFromEnvironment();
  sink->on_stored = [kill](const store::LlmExchangeRecord& r) {
    KillIf(kill, "exchange", r.iteration);
  };
  sink->log = [command, say](const std::string& line) {
    say(std::cerr, "kernelpro " + std::string(command) + ": " + line);
  };
  // What this process uses of the stored configuration: it adds a cassette position and paths.
  llm::LlmConfig llm_config = options.llm;
  eval::EvalOptions eval = options.executor;
  const std::string& python = options.worker_python;
  if (resume && llm_config.provider == "replay" && llm_config.replay_mode == "sequential") {
    // A sequential cassette continues, stream by stream, after the replies the earlier
    // processes stored.
    auto runs = (*store)->ListRuns();
    if (runs.ok() && !runs->empty()) {
      auto exchanges = (*store)->ListLlmExchanges(runs->front().id);
      if (exchanges.ok()) {
        for (const store::LlmExchangeRecord& r : *exchanges) {
          // A miss (the cassette was spent) served no recording.
          if (r.error) {
            auto error = llm::ErrorFromJson(*r.error);
            if (error.ok() && error->kind == llm::ErrorKind::kReplayMiss) continue;
          }
          auto request = llm::RequestFromJson(r.request);
          if (request.ok()) ++llm_config.replay_skip[llm::ReplayStream(*request)];
        }
      }
    }
  }
  llm::BackendDependencies llm_deps;
  llm_deps.on_exchange = sink->Hook();
  auto made = llm::MakeBackend(llm_config, llm_deps);
  if (!made.ok()) return fail(made.status().message());
  std::shared_ptr<llm::Backend> backend = std::move(*made);

  eval.device = options.device;
  if (eval.work_dir.empty()) eval.work_dir = store::RunLayout(options.run_dir).work();
  auto executor = MakeExecutor(eval, python, command);
  if (!executor) return 2;
  executor->set_progress(progress.get());
  if (options.python.empty() || options.python == "python3")
    options.python = executor->worker().python();
  auto evaluator = search::NewExecutorEvaluator(*executor);
  // The precompiled headers' step (a minute the first time on a toolchain) runs beside Stage 1.
  executor->PrepareBuildsAhead();

  // Stage 1: on a GPU, measured; on cpu only when --gpu names a GPU of the hardware table.
  std::unique_ptr<agents::BenchmarkingAgent> benchmarking;
  std::vector<std::string> early_notes;
  {
    agents::BenchmarkingOptions bo;
    bo.measure = options.device == "cuda";
    if (!options.gpu_name.empty()) {
      if (auto spec = roofline::FindGpu(options.gpu_name); spec.ok()) bo.gpu = *spec;
    }
    if (options.device == "cuda" || bo.gpu) {
      eval::Executor* stage_one_executor = &*executor;
      benchmarking = std::make_unique<agents::BenchmarkingAgent>(
          [stage_one_executor, bo](const std::string& problem) {
            return agents::RunStageOneMeasured(*stage_one_executor, problem, bo);
          });
    } else {
      early_notes.push_back(
          "stage 1: skipped on cpu (give --gpu to classify against a GPU's "
          "roofline); every speed tool would run");
    }
  }
  // The programmer's GPU section: --gpu, else the GPU the evaluations use. A resumed run keeps
  // the target it was created with (RunConfig::gpu, stored with the run).
  if (!resume) {
    std::optional<agents::GpuTarget> forced;
    if (!options.gpu_name.empty()) forced = options.gpu;
    PromptGpu chosen =
        ChoosePromptGpu(options.device, forced, [&executor] { return DetectGpuTarget(*executor); });
    options.gpu = chosen.target;
    if (!chosen.note.empty()) {
      std::cerr << "kernelpro " << command << ": " << chosen.note << "\n";
      early_notes.push_back(chosen.note);
    }
  }

  // "unknown" rather than $0 for a model without a configured price.
  const bool cost_known = llm::CostKnown(llm_config);
  // CUTLASS: the programmer's tools, the constraints and the validator, loaded once per process.
  std::unique_ptr<agents::CutlassKit> cutlass_kit;
  if (!options.cutlass_dir.empty()) {
    auto tree = cutlass::CutlassTreeAt(options.cutlass_dir, "--cutlass-dir");
    if (!tree.ok()) return fail("--cutlass-dir " + tree.status().message());
    agents::CutlassKitOptions kit_options;
    kit_options.tools = options.cutlass_tools;
    kit_options.search_budget = options.cutlass_search_budget;
    kit_options.probe_cache_dir = eval.cache_dir.empty() ? "" : eval.cache_dir + "/cutlass";
    // The validator asks for the CUTLASS flags only when the build step does not add them.
    kit_options.build_adds_flags = !eval.cutlass_include_dir.empty();
    auto kit = agents::CutlassKit::Load(*tree, kit_options);
    if (!kit.ok()) return fail("CUTLASS at " + options.cutlass_dir + ": " + kit.status().message());
    cutlass_kit = std::move(*kit);
  }
  search::OrchestratorDependencies deps;
  deps.cutlass = cutlass_kit.get();
  deps.backend = backend.get();
  deps.memory_backend = backend;
  deps.evaluator = evaluator.get();
  deps.store = store->get();
  deps.exchanges = sink.get();
  deps.benchmarking = benchmarking.get();
  deps.registry = &registry;
  deps.on_step_done = [kill](const store::StepKey& k) { KillIf(kill, k.step, k.iteration); };
  deps.log = [command, say](const std::string& line) {
    say(std::cerr, "kernelpro " + std::string(command) + ": " + line);
  };
  deps.step_progress = progress.get();
  if (options.energy != search::EnergyMode::kOff) {
    eval::Executor* energy_executor = &*executor;
    deps.measure_energy = [energy_executor](const std::vector<std::string>& candidates,
                                            const search::RunConfig& config) -> Result<Json> {
      if (config.device != "cuda" && config.nvml_library.empty()) {
        return Status::Unavailable("--device " + config.device +
                                   " runs no GPU for NVML to measure");
      }
      eval::EnergyOptions energy;
      energy.windows = config.energy_windows;
      energy.window_s = config.energy_window_s;
      // Steady state is usually reached within a few windows; 30 s with the default 2 s windows.
      energy.warmup_cap_s = 15 * config.energy_window_s;
      energy.nvml_library = config.nvml_library;
      auto measured = eval::MeasureEnergy(*energy_executor, config.problem, candidates, energy);
      if (!measured.ok()) return measured.status();
      return measured->step;
    };
  }
  deps.iteration_started = [progress, command](int iteration, int iterations) {
    if (progress) {
      progress->SetLabel(std::string(command) + ": iteration " + std::to_string(iteration) + "/" +
                         std::to_string(iterations));
    }
  };
  deps.progress = [say, cost_known](const search::IterationProgress& p) {
    std::ostringstream line;
    line << "iteration " << p.iteration << "/" << p.iterations << "  " << agents::ToString(p.mode)
         << " from "
         << (p.parent == search::Tree::kRootId ? std::string("ROOT")
                                               : "n" + std::to_string(p.parent))
         << ": " << p.outcome << "  | best " << (p.best ? RatioText(*p.best) : std::string("none"))
         << " | cost " << llm::CostText(p.cost_usd, cost_known) << (p.resumed ? " (resumed)" : "");
    say(std::cout, line.str());
  };

  std::cout << "kernelpro " << command << ": run directory " << options.run_dir << std::endl;
  SetTerminationNote("the run directory is consistent; continue it with: kernelpro resume " +
                     options.run_dir);
  search::Orchestrator orchestrator(options, deps);
  auto summary = orchestrator.Run();
  if (progress) progress->Finish();
  if (!summary.ok()) {
    recorded = resume || HoldsExchanges(**store);
    std::cerr << "kernelpro " << command << ": the run stopped: " << summary.status().message()
              << "\n";
    if (recorded) {
      std::cerr << "(continue it with: kernelpro resume " << options.run_dir << ")\n";
    } else {
      std::cerr << "(nothing was recorded: " << options.run_dir
                << " is left as it was; run optimize again once the cause is fixed)\n";
    }
    return 2;
  }
  recorded = true;
  summary->notes.insert(summary->notes.begin(), early_notes.begin(), early_notes.end());

  report::RunReportInput report;
  report.config = orchestrator.config();
  report.summary = *summary;
  report.tree = &orchestrator.tree();
  report.nodes = &orchestrator.nodes();
  report.stage1 = orchestrator.stage1();
  report.environment = InspectEnvironment(*executor, options.device);
  report.llm = LlmLabel(llm_config);
  report.dram_bytes = report::StoredDramBytes(**store, orchestrator.nodes(), orchestrator.tree());
  if (orchestrator.config().energy != search::EnergyMode::kOff) {
    report.energy = report::StoredEnergyProxies(**store, orchestrator.nodes(), orchestrator.tree());
  }
  report.cost_known = cost_known;
  report.tool_calls = report::StoredToolCalls(**store);

  std::optional<std::string> best_source;
  if (summary->best) {
    auto candidate = (*store)->GetCandidate(orchestrator.nodes().at(*summary->best).candidate_id);
    if (candidate.ok()) best_source = candidate->source;
  }
  if (Status written = report::WriteRunFiles(report, best_source); !written.ok()) {
    return fail(written.message() + " (the run is recorded; `kernelpro resume " + options.run_dir +
                "` writes the reports again)");
  }
  const store::RunLayout layout(options.run_dir);

  std::cout << "stopped: " << summary->stop_message << "\n";
  if (summary->stop == search::StopReason::kLlmError) {
    std::cout << "(fix the cause, then continue with: kernelpro resume " << options.run_dir
              << " [--llm PROVIDER:MODEL])\n";
  }
  if (auto verdict = report::JudgeBest(orchestrator.tree(), &orchestrator.nodes())) {
    std::cout << "best: n" << verdict->node << " " << RatioText(verdict->speedup)
              << (verdict->noisy ? " noisy timing" : "") << " over the reference; " << verdict->text
              << "\n";
    if (auto choice = report::EnergyChoiceText(orchestrator.tree())) {
      std::cout << "energy choice: " << *choice << "\n";
    }
    std::cout << "kernel: " << layout.best_kernel() << "\n";
    if (auto energy = report::ViewMeasuredEnergy(report)) {
      for (const std::string& line : report::MeasuredEnergyLines(*energy)) {
        std::cout << line << "\n";
      }
    }
  } else {
    std::cout << "best: no correct kernel was found\n";
  }
  std::cout << "report: " << layout.markdown_report() << " (HTML: " << layout.html_report()
            << ")\n";
  std::cout << "LLM: " << summary->exchanges << " exchanges, cost "
            << llm::CostText(summary->cost_usd, cost_known) << "\n";
  return summary->best ? 0 : 1;
}

int Optimize(const search::RunConfig& options, const tools::ToolRegistry& registry, bool resume,
             bool quiet) {
  bool recorded = false;
  if (resume) return RunSearch(options, registry, resume, quiet, recorded);
  // A new run: a run that fails before it recorded anything takes back what it created (the run
  // directory, or what it added to an existing one), so that no half-made run.db makes the next
  // `optimize` refuse the directory as "already holding a run".
  auto made = CreatedDirectory::Create(options.run_dir, "the run directory");
  if (!made.ok()) {
    std::cerr << "kernelpro optimize: " << made.status().message() << "\n";
    return 2;
  }
  // Held until this process exits: no second optimize or resume works on this directory. Refused,
  // nothing is undone: the directory is the holder's.
  auto lock = store::RunDirectoryLock::Acquire(options.run_dir, "optimize");
  if (!lock.ok()) {
    std::cerr << "kernelpro optimize: " << lock.status().message() << "\n";
    return 2;
  }
  switch (StoredRunIn(options.run_dir)) {
    case StoredRun::kRecorded:
      std::cerr << "kernelpro optimize: " << AlreadyHoldsARun(options.run_dir) << "\n";
      return 2;
    case StoredRun::kNothing:
      // A start that stopped before its first exchange (killed, or from an older version that
      // left its store behind): nothing in it was paid for, so this run takes its place.
      std::cerr << "kernelpro optimize: " << options.run_dir
                << " holds a start that stopped before its first LLM exchange; starting afresh\n";
      RemoveRunStore(options.run_dir);
      for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
        made->Disown(std::string(store::kRunStoreFileName) + suffix);
      }
      break;
    case StoredRun::kNone:
      break;
  }
  const int code = RunSearch(options, registry, resume, quiet, recorded);
  if (!recorded) made->Undo();
  return code;
}

std::string DefaultRunDir(const std::string& name) {
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return "runs/" + name + "-" + stamp;
}

// ---- the demo: problems/swish with candidates the project wrote, replayed from a cassette
// (problems/swish/demo/make_demo.py tells the story), so the whole loop runs without an API key.
// Everything measured is real; only the model's replies are canned.
constexpr int kDemoIterations = 4;  // the cassettes hold four programmer replies

struct Demo {
  std::string problem;
  std::string cassette;
};

Result<Demo> FindDemo(const std::string& device) {
  const fs::path root = KERNELPRO_SOURCE_ROOT;
  Demo demo{(root / "problems/swish/problem.py").string(),
            (root / "problems/swish/demo" / (device + ".jsonl")).string()};
  for (const std::string& path : {demo.problem, demo.cassette}) {
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      return Status::NotFound("the demo needs " + path +
                              " (from the source tree this binary was built from)");
    }
  }
  return demo;
}

int RunOptimize(OptimizeArgs& args) {
  auto fail = [](const std::string& message) {
    std::cerr << "kernelpro optimize: " << message << "\n";
    return 2;
  };
  search::RunConfig o;
  std::optional<Demo> demo;
  if (args.demo) {
    if (!args.llm.spec.empty() || !args.llm.config_file.empty()) {
      return fail(
          "--demo replays the project's own cassette; leave out --llm and --llm-config (and "
          "unset KERNELPRO_LLM and KERNELPRO_LLM_CONFIG)");
    }
    if (args.seed_given) {
      return fail("--demo replays a cassette recorded without seeds; leave out --seed");
    }
    if (!args.problem.empty()) return fail("--demo runs problems/swish; leave out --problem");
    auto found = FindDemo(args.device);
    if (!found.ok()) return fail(found.status().message());
    demo = *found;
    args.problem = demo->problem;
    args.llm.spec = "replay:" + demo->cassette;
  } else if (args.problem.empty()) {
    return fail("--problem is required (or try --demo)");
  }
  o.problem = args.problem;
  o.iterations =
      args.budget.iterations >= 0 ? args.budget.iterations : (demo ? kDemoIterations : 30);
  o.candidates = args.candidates;
  o.programmer_max_tokens = args.max_tokens;
  o.temperatures = args.temperatures;
  o.search = args.search;
  std::string feedback = args.feedback;
  if (args.tool_mode == "reactive") {
    if (feedback != "tools" && feedback != "reactive") {
      return fail("--tool-mode reactive needs --feedback tools");
    }
    feedback = "reactive";
  }
  o.feedback = agents::ParseFeedbackMode(feedback).value();
  o.energy = search::ParseEnergyMode(args.energy).value();
  o.energy_kernels = args.energy_kernels;
  o.energy_windows = args.energy_windows;
  o.energy_window_s = args.energy_window_s;
  o.nvml_library = args.nvml_library.empty() ? "" : fs::absolute(args.nvml_library).string();
  o.memory = !args.no_memory;
  o.cutlass_tools = !args.no_cutlass_tools;
  o.cutlass_search_budget = args.cutlass_search_budget;
  o.seed = args.seed;
  o.seed_given = args.seed_given;
  if (args.run_dir.empty()) {
    std::error_code ec;
    const fs::path problem = fs::absolute(args.problem, ec);
    args.run_dir =
        demo ? DefaultRunDir("demo-swish-" + args.device)
             : DefaultRunDir(report::ProblemName((ec ? fs::path(args.problem) : problem).string()));
  }
  o.run_dir = args.run_dir;
  if (args.budget.max_cost >= 0) o.max_cost_usd = args.budget.max_cost;
  if (args.budget.time_limit >= 0) o.time_limit_s = args.budget.time_limit;
  o.device = args.device;
  if (!args.gpu.empty()) {
    auto target = agents::ParseGpuTarget(args.gpu);
    if (!target.ok()) return fail("--gpu: " + target.status().message());
    o.gpu = *target;
  }
  Result<std::string> cutlass_root = CheckCutlassDir(args.cutlass_dir);
  if (!cutlass_root.ok()) return fail(cutlass_root.status().message());
  o.cutlass_dir = *cutlass_root;
  // The prompts tell candidates to include its headers: the sandbox lets them read it.
  if (!o.cutlass_dir.empty()) args.eval.sandbox_read_only.push_back(o.cutlass_dir);
  // The tree builds of CUTLASS/CuTe candidates use: the same one, else scripts/setup's copy, also
  // when the prompts' CUTLASS section is off (a candidate may include CUTLASS all the same).
  if (Status s = LocateCutlassForBuilds(args.cutlass_dir, args.eval); !s.ok()) {
    return fail(s.message());
  }
  o.python = args.python.empty() ? "python3" : args.python;
  if (Status s = NormalizeGpus(args.eval.gpus); !s.ok()) return fail(s.message());
  o.gpus = args.eval.gpus.empty() ? 1 : static_cast<int>(args.eval.gpus.size());
  if (StoredRunIn(o.run_dir) == StoredRun::kRecorded) return fail(AlreadyHoldsARun(o.run_dir));
  auto llm_config = ResolveLlmConfig(args.llm);
  if (!llm_config.ok()) return fail(llm_config.status().message());
  if (o.max_cost_usd) {
    if (Status s = CheckCostLimitReachable(*llm_config); !s.ok()) return fail(s.message());
  }
  // The user's tools join the search; a bad plugin, rule file or threshold stops it here.
  auto registry = BuildRegistry(args.tools);
  if (!registry.ok()) return fail(registry.status().message());
  // Before the run directory exists: a run that cannot start leaves nothing to clean up.
  if (Status s = CheckLlmReady(*llm_config); !s.ok()) return fail(s.message());
  if (Status s = CheckDeviceReady(o.device, args.python, args.eval.gpus); !s.ok()) {
    return fail(s.message());
  }
  if (demo) {
    llm_config->replay_mode = "sequential";
    // Say what is real, and on cpu what is not done at all.
    std::cout << "kernelpro optimize --demo: " << DisplayPath(demo->problem) << " on "
              << args.device << ", the model's replies replayed from "
              << DisplayPath(demo->cassette) << " (candidates written by the kernelpro project; "
              << (args.device == "cuda"
                      ? "every build, check, timing and profile is real)"
                      : "every build, check and timing is real; on cpu nothing is profiled: no "
                        "ncu, no SASS, no roofline, so optimise prompts get no profiling "
                        "feedback)")
              << std::endl;
  }
  o.llm = *llm_config;
  o.executor = args.eval;
  o.worker_python = args.python;
  o.gpu_name = args.gpu;
  o.tools = WithAbsolutePaths(args.tools);
  return Optimize(o, *registry, /*resume=*/false, args.quiet);
}

int RunResume(ResumeArgs& args) {
  auto fail = [](const std::string& message) {
    std::cerr << "kernelpro resume: " << message << "\n";
    return 2;
  };
  search::RunConfig o;
  if (!fs::is_directory(args.run_dir)) return fail(args.run_dir + " is not a directory");
  auto lock = store::RunDirectoryLock::Acquire(args.run_dir, "resume");
  if (!lock.ok()) return fail(lock.status().message());
  const std::string start_again =
      "; start a run there with: kernelpro optimize --run-dir " + args.run_dir + " ...";
  if (std::error_code ec; !fs::exists(store::RunLayout(args.run_dir).store(), ec)) {
    return fail(args.run_dir + " holds no run (no " + store::kRunStoreFileName + ")" + start_again);
  }
  {
    store::RunStoreOptions store_options;
    store_options.create = false;
    auto store = store::RunStore::Open(args.run_dir, store_options);
    if (!store.ok()) return fail(args.run_dir + ": " + store.status().message());
    auto stored = search::StoredRunConfig(**store);
    if (stored.status().code() == Status::Code::kNotFound) {
      return fail(args.run_dir + " holds no run: a start stopped before it began" + start_again +
                  " (it replaces the half-made " + store::kRunStoreFileName + ")");
    }
    if (!stored.ok()) return fail(stored.status().message());
    o = std::move(*stored);
  }
  // What a run cannot change: its tree, its candidates and its measurements belong to these.
  if (!args.problem.empty()) {
    std::error_code ec;
    if (!fs::equivalent(args.problem, o.problem, ec)) {
      return fail("--problem " + args.problem + ": this run optimises " + o.problem +
                  "; a run keeps its problem (start a new run with optimize for another)");
    }
  }
  if (!args.search.empty() && args.search != o.search) {
    return fail("--search " + args.search + ": this run's tree was built by " + o.search +
                "; a run keeps its search strategy (start a new run with optimize for another)");
  }
  if (!args.device.empty() && args.device != o.device) {
    return fail("--device " + args.device + ": this run's candidates were written for " + o.device +
                " (" + (o.device == "cuda" ? "CUDA kernels" : "C++ CPU extensions") +
                "), which do not build on " + args.device + "; resume it on " + o.device +
                ", or start a new run with optimize --device " + args.device);
  }
  o.run_dir = args.run_dir;
  o.nvml_library = args.nvml_library.empty() ? "" : fs::absolute(args.nvml_library).string();
  if (!args.python.empty()) {
    o.worker_python = args.python;
    o.python = args.python;
  }
  if (!args.gpus.empty()) {
    if (Status s = NormalizeGpus(args.gpus); !s.ok()) return fail(s.message());
    o.executor.gpus = args.gpus;
    o.gpus = static_cast<int>(args.gpus.size());
  }
  if (args.budget.iterations >= 0) o.iterations = args.budget.iterations;
  if (args.budget.max_cost >= 0) o.max_cost_usd = args.budget.max_cost;
  if (args.budget.time_limit >= 0) o.time_limit_s = args.budget.time_limit;
  const bool new_llm = !args.llm.spec.empty() || !args.llm.config_file.empty();
  if (new_llm) {
    auto given = ResolveLlmConfig(args.llm);
    if (!given.ok()) return fail(given.status().message());
    o.llm = *given;
  }
  // A limit or a model given now is checked now; a run's own pair was checked when it began.
  if (o.max_cost_usd && (args.budget.max_cost >= 0 || new_llm)) {
    if (Status s = CheckCostLimitReachable(o.llm); !s.ok()) return fail(s.message());
  }
  auto registry = BuildRegistry(o.tools);
  if (!registry.ok()) return fail("the run's tools: " + registry.status().message());
  eval::EvalOptions& eval = o.executor;
  eval.unsafe_no_sandbox = args.sandbox.unsafe_no_sandbox;
  for (const std::string& name : args.sandbox.pass_env) eval.pass_env.push_back(name);
  for (const std::string& path : args.sandbox.sandbox_read_only) {
    eval.sandbox_read_only.push_back(path);
  }
  // The same checks as a new run's, before the run is touched: a key unset since, a server
  // down, a GPU gone.
  if (Status s = CheckLlmReady(o.llm); !s.ok()) return fail(s.message());
  if (Status s = CheckDeviceReady(o.device, o.worker_python, eval.gpus); !s.ok()) {
    return fail(s.message() +
                (o.device == "cuda" ? " (this run's candidates are CUDA kernels)" : ""));
  }
  return Optimize(o, *registry, /*resume=*/true, args.quiet);
}

}  // namespace

CommandRunner RegisterOptimizeCommand(CLI::App& app) {
  auto args = std::make_shared<OptimizeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "optimize",
      "Search for the fastest validated kernel for a problem (MCTS or greedy over LLM-written "
      "candidates); exit 0 when a correct kernel was found, 1 when none, 2 on bad input");
  cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  AddOption(*cmd, kProblemOption, args->problem)->check(InputFile());
  cmd->add_flag("--demo", args->demo,
                "Run a short search on problems/swish with candidates the project wrote, replayed "
                "from a cassette: no API key needed (with --device cpu: CPU candidates)");
  AddLlmOptions(*cmd, args->llm);
  AddOption(*cmd, kSearchOption, args->search)
      ->check(CLI::IsMember({"mcts", "greedy"}))
      ->capture_default_str();
  AddOption(*cmd, kCandidatesOption, args->candidates)
      ->check(WholeRange(1, 16))
      ->capture_default_str();
  AddOption(*cmd, kMaxTokensOption, args->max_tokens)
      ->check(WholeRange(256, 1000000))
      ->capture_default_str();
  cmd->add_option("--temperature", args->temperatures,
                  "Sampling temperature of the programmer (default: the server's); several, "
                  "comma-separated: one request per candidate, candidate i at the i-th")
      ->delimiter(',')
      ->check(CLI::Range(0.0, 2.0));
  cmd->add_option("--feedback", args->feedback,
                  "What the programmer learns of a working kernel: tools (micro-profiling "
                  "guidance), raw (ncu counters) or none")
      ->check(CLI::IsMember({"tools", "raw", "none", "reactive"}))
      ->capture_default_str();
  cmd->add_option("--tool-mode", args->tool_mode,
                  "proactive: every relevant tool runs; reactive: the LLM calls the tools it wants")
      ->check(CLI::IsMember({"proactive", "reactive"}))
      ->capture_default_str();
  cmd->add_option("--energy", args->energy,
                  "Energy as a secondary objective (docs/energy.md): off (speed only), measure "
                  "(record the energy proxy of every correct kernel, search unchanged) or aware "
                  "(also in the reward, the prompt and the energy-only tools)")
      ->check(CLI::IsMember({"off", "measure", "aware"}))
      ->capture_default_str();
  cmd->add_option("--energy-kernels", args->energy_kernels,
                  "With --energy measure|aware: after the search, measure this many of the "
                  "fastest kernels and the reference with NVML (0: none)")
      ->check(CLI::Range(0, 16))
      ->capture_default_str();
  cmd->add_option("--energy-windows", args->energy_windows,
                  "NVML windows per kernel after the search (median and interval over them)")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cmd->add_option("--energy-window-s", args->energy_window_s,
                  "Length of one NVML window of back-to-back calls, seconds")
      ->check(CLI::Range(0.01, 600.0))
      ->capture_default_str();
  AddOption(*cmd, kNvmlLibraryOption, args->nvml_library)->check(InputFile());
  cmd->add_flag("--no-memory", args->no_memory, "No search memory across iterations");
  CLI::Option* seed = AddOption(*cmd, kSeedOption, args->seed);
  cmd->add_option("--run-dir", args->run_dir,
                  "Run directory (default runs/PROBLEM-TIMESTAMP); must not hold a run yet");
  AddBudgetOptions(*cmd, args->budget);
  AddDeviceOption(*cmd, args->device);
  AddOption(*cmd, kGpuOption, args->gpu);
  AddCutlassOptions(*cmd, args->cutlass_dir);
  cmd->add_flag("--no-cutlass-tools", args->no_cutlass_tools,
                "With --cutlass-dir: no code-search tools or check_smem_layout for the programmer "
                "(the prompt's CUTLASS section, constraints and validator stay)");
  cmd->add_option("--cutlass-search-budget", args->cutlass_search_budget,
                  "With --cutlass-dir: search_cutlass calls per iteration (reads, listings and "
                  "layout probes are not counted)")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  AddToolOptions(*cmd, args->tools);
  args->eval.precompiled_headers = true;  // a search builds many candidates: worth it
  AddExecutorOptions(*cmd, args->eval, args->python);
  AddProgressOptions(*cmd, args->quiet);
  return [args, seed] {
    args->seed_given = seed->count() > 0;
    return RunOptimize(*args);
  };
}

CommandRunner RegisterResumeCommand(CLI::App& app) {
  auto args = std::make_shared<ResumeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "resume", "Continue an optimisation run that stopped or was killed, from its run directory");
  cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  AddSandboxOptions(*cmd, args->sandbox);
  cmd->add_option("run_dir", args->run_dir, "The run directory (holds run.db)")
      ->required()
      ->check(CLI::ExistingDirectory);
  AddBudgetOptions(*cmd, args->budget);
  AddLlmOptions(*cmd, args->llm);
  // Accepted so that a command line copied from optimize works; a value that differs from the
  // run's own is refused with the reason.
  AddOption(*cmd, kProblemOption, args->problem)->check(InputFile());
  AddOption(*cmd, kSearchOption, args->search)->check(CLI::IsMember({"mcts", "greedy"}));
  AddDeviceOption(*cmd, args->device)->default_str("the run's own");
  // What may differ on the machine a run is continued on.
  AddGpusOption(*cmd, args->gpus)->default_str("the run's own");
  AddPythonOption(*cmd, args->python)->default_str("the run's own");
  AddOption(*cmd, kNvmlLibraryOption, args->nvml_library)->check(InputFile());
  AddProgressOptions(*cmd, args->quiet);
  return [args] { return RunResume(*args); };
}

}  // namespace kernelpro::cli
