#include "app/run.h"

#include <iostream>
#include <sstream>
#include <utility>
#include <vector>

#include "agents/benchmarking_agent.h"
#include "agents/cutlass_tools.h"
#include "core/stats.h"
#include "core/termination.h"
#include "cutlass/locate.h"
#include "eval/energy.h"
#include "llm/cassette.h"
#include "llm/factory.h"
#include "llm/price.h"
#include "report/run_report.h"
#include "report/stored_run.h"
#include "roofline/hardware.h"
#include "search/candidate_evaluator.h"
#include "search/exchange_sink.h"
#include "store/run_layout.h"

namespace kernelpro::app {
namespace {

// Where a run's lines go: each step of the work on stderr while it runs (the progress display),
// and the lines printed meanwhile (notes on stderr, the iteration lines on stdout) through it, so
// that none tears its status line.
struct Console {
  std::string command;  // "optimize" or "resume": what the lines say they come from
  std::shared_ptr<ProgressReporter> progress;

  void Say(std::ostream& out, const std::string& line) const {
    if (progress) {
      progress->WriteAbove(out, line);
    } else {
      out << line << std::endl;
    }
  }
  // A note on stderr: "kernelpro optimize: LINE".
  void Note(const std::string& line) const { Say(std::cerr, "kernelpro " + command + ": " + line); }
  // A reason the run cannot go on, on stderr; the exit code that goes with it.
  int Fail(const std::string& message) const {
    std::cerr << "kernelpro " << command << ": " << message << "\n";
    return 2;
  }
};

std::string LlmLabel(const llm::LlmConfig& c) {
  std::string label = c.provider + ":" + c.model;
  if (!c.base_url.empty()) label += "@" + c.base_url;
  return label;
}

// Where the measurements were taken: the worker's inspect step.
report::RunEnvironment InspectEnvironment(const RunServices& services,
                                          const eval::Executor& executor,
                                          const std::string& device) {
  report::RunEnvironment env;
  env.device = device;
  auto inspected = services.inspect_device(executor, device);
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

// A resumed sequential cassette continues, stream by stream, after the replies the earlier
// processes stored.
void SkipServedRecordings(store::RunStore& store, llm::LlmConfig& config) {
  auto runs = store.ListRuns();
  if (!runs.ok() || runs->empty()) return;
  auto exchanges = store.ListLlmExchanges(runs->front().id);
  if (!exchanges.ok()) return;
  for (const store::LlmExchangeRecord& r : *exchanges) {
    // A miss (the cassette was spent) served no recording.
    if (r.error) {
      auto error = llm::ErrorFromJson(*r.error);
      if (error.ok() && error->kind == llm::ErrorKind::kReplayMiss) continue;
    }
    auto request = llm::RequestFromJson(r.request);
    if (request.ok()) ++config.replay_skip[llm::ReplayStream(*request)];
  }
}

// Stage 1: on a GPU, measured; on cpu only when --gpu names a GPU of the hardware table. Null,
// with a note in `notes`, when it is skipped.
std::unique_ptr<agents::BenchmarkingAgent> StageOneAgent(const search::RunConfig& config,
                                                         eval::Executor& executor,
                                                         std::vector<std::string>& notes) {
  agents::BenchmarkingOptions bo;
  bo.measure = config.device == "cuda";
  if (!config.gpu_name.empty()) {
    if (auto spec = roofline::FindGpu(config.gpu_name); spec.ok()) bo.gpu = *spec;
  }
  if (config.device != "cuda" && !bo.gpu) {
    notes.push_back(
        "stage 1: skipped on cpu (give --gpu to classify against a GPU's "
        "roofline); every speed tool would run");
    return nullptr;
  }
  eval::Executor* stage_one_executor = &executor;
  return std::make_unique<agents::BenchmarkingAgent>(
      [stage_one_executor, bo](const std::string& problem) {
        return agents::RunStageOneMeasured(*stage_one_executor, problem, bo);
      });
}

// CUTLASS: the programmer's tools, the constraints and the validator, loaded once per process.
// Null without RunConfig::cutlass_dir.
Result<std::unique_ptr<agents::CutlassKit>> LoadCutlassKit(const search::RunConfig& config,
                                                           const eval::EvalOptions& eval) {
  if (config.cutlass_dir.empty()) return std::unique_ptr<agents::CutlassKit>();
  auto tree = cutlass::CutlassTreeAt(config.cutlass_dir, "--cutlass-dir");
  if (!tree.ok()) return Status::InvalidArgument("--cutlass-dir " + tree.status().message());
  agents::CutlassKitOptions kit_options;
  kit_options.tools = config.cutlass_tools;
  kit_options.search_budget = config.cutlass_search_budget;
  kit_options.probe_cache_dir = eval.cache_dir.empty() ? "" : eval.cache_dir + "/cutlass";
  // The validator asks for the CUTLASS flags only when the build step does not add them.
  kit_options.build_adds_flags = !eval.cutlass_include_dir.empty();
  auto kit = agents::CutlassKit::Load(*tree, kit_options);
  if (!kit.ok()) {
    return Status::InvalidArgument("CUTLASS at " + config.cutlass_dir + ": " +
                                   kit.status().message());
  }
  return std::move(*kit);
}

// NVML's meter (--energy measure|aware): the reference and the fastest kernels on `executor`.
search::EnergyMeter EnergyMeterOn(eval::Executor& executor) {
  eval::Executor* energy_executor = &executor;
  return [energy_executor](const std::vector<std::string>& candidates,
                           const search::RunConfig& config) -> Result<Json> {
    if (config.device != "cuda" && config.nvml_library.empty()) {
      return Status::Unavailable("--device " + config.device + " runs no GPU for NVML to measure");
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

// "iteration 2/4  optimize from n1: correct 1.52x [1.48, 1.55] accepted  | best n3 1.52x ...".
std::string IterationLine(const search::IterationProgress& p, bool cost_known) {
  std::ostringstream line;
  line << "iteration " << p.iteration << "/" << p.iterations << "  " << agents::ToString(p.mode)
       << " from "
       << (p.parent == search::Tree::kRootId ? std::string("ROOT") : "n" + std::to_string(p.parent))
       << ": " << p.outcome << "  | best "
       << (p.best_node && p.best ? "n" + std::to_string(*p.best_node) + " " + RatioText(*p.best)
                                 : std::string("the reference"))
       << " | cost " << llm::CostText(p.cost_usd, cost_known) << (p.resumed ? " (resumed)" : "");
  return line.str();
}

// What the orchestrator is given besides its options. `kit` may be null; every other pointer must
// outlive the orchestrator.
search::OrchestratorDependencies Dependencies(
    const RunOptions& run, const Console& console, const agents::CutlassKit* kit,
    const std::shared_ptr<llm::Backend>& backend, search::CandidateEvaluator& evaluator,
    store::RunStore& store, search::ExchangeSink& sink, agents::BenchmarkingAgent* benchmarking,
    eval::Executor& executor, const search::RunConfig& config, bool cost_known) {
  search::OrchestratorDependencies deps;
  deps.cutlass = kit;
  deps.backend = backend.get();
  deps.memory_backend = backend;
  deps.evaluator = &evaluator;
  deps.store = &store;
  deps.exchanges = &sink;
  deps.benchmarking = benchmarking;
  deps.registry = run.registry;
  deps.on_step_done = run.hooks.after_step;
  deps.log = [console](const std::string& line) { console.Note(line); };
  deps.step_progress = run.progress.get();
  if (config.energy != search::EnergyMode::kOff) deps.measure_energy = EnergyMeterOn(executor);
  std::shared_ptr<ProgressReporter> progress = run.progress;
  const std::string command = console.command;
  deps.iteration_started = [progress, command](int iteration, int iterations) {
    if (progress) {
      progress->SetLabel(command + ": iteration " + std::to_string(iteration) + "/" +
                         std::to_string(iterations));
    }
  };
  deps.progress = [console, cost_known](const search::IterationProgress& p) {
    console.Say(std::cout, IterationLine(p, cost_known));
  };
  return deps;
}

// What a finished search leaves: the run's files, then the summary on stdout. The exit code.
int WriteAndSummarize(const std::string& run_dir, const search::Orchestrator& orchestrator,
                      const search::OptimizeSummary& summary, store::RunStore& store,
                      report::RunEnvironment environment, const std::string& llm, bool cost_known,
                      const Console& console) {
  report::RunReportInput report;
  report.config = orchestrator.config();
  report.summary = summary;
  report.tree = &orchestrator.tree();
  report.nodes = &orchestrator.nodes();
  report.stage1 = orchestrator.stage1();
  report.environment = std::move(environment);
  report.llm = llm;
  report.dram_bytes = report::StoredDramBytes(store, orchestrator.nodes(), orchestrator.tree());
  if (orchestrator.config().energy != search::EnergyMode::kOff) {
    report.energy = report::StoredEnergyProxies(store, orchestrator.nodes(), orchestrator.tree());
  }
  report.cost_known = cost_known;
  report.tool_calls = report::StoredToolCalls(store);

  std::optional<std::string> best_source;
  if (summary.best) {
    auto candidate = store.GetCandidate(orchestrator.nodes().at(*summary.best).candidate_id);
    if (candidate.ok()) best_source = candidate->source;
  }
  if (Status written = report::WriteRunFiles(report, best_source); !written.ok()) {
    return console.Fail(written.message() + " (the run is recorded; `kernelpro resume " + run_dir +
                        "` writes the reports again)");
  }
  const store::RunLayout layout(run_dir);

  std::cout << "stopped: " << summary.stop_message << "\n";
  if (summary.stop == search::StopReason::kLlmError) {
    std::cout << "(fix the cause, then continue with: kernelpro resume " << run_dir
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
  } else if (auto stays = report::ReferenceStaysText(orchestrator.tree())) {
    std::cout << "best: the reference; " << *stays << " (no best.py is written)\n";
  } else {
    std::cout << "best: no correct kernel was found\n";
  }
  // What NVML measured of the fastest kernels, whether or not one of them is the answer.
  if (auto energy = report::ViewMeasuredEnergy(report)) {
    for (const std::string& line : report::MeasuredEnergyLines(*energy)) std::cout << line << "\n";
  }
  std::cout << "report: " << layout.markdown_report() << " (HTML: " << layout.html_report()
            << ")\n";
  std::cout << "LLM: " << summary.exchanges << " exchanges, cost "
            << llm::CostText(summary.cost_usd, cost_known) << "\n";
  return orchestrator.tree().FastestCorrectNode() ? 0 : 1;
}

}  // namespace

bool HoldsExchanges(store::RunStore& store) {
  auto runs = store.ListRuns();
  if (!runs.ok()) return true;  // unreadable: keep it, the user decides
  for (const store::RunRecord& run : *runs) {
    auto exchanges = store.ListLlmExchanges(run.id);
    if (!exchanges.ok() || !exchanges->empty()) return true;
  }
  return false;
}

RunOutcome RunSearch(search::RunConfig options, const RunOptions& run) {
  RunOutcome outcome;  // exit code 2, nothing recorded, until the search has run
  const Console console{run.resume ? "resume" : "optimize", run.progress};
  auto fail = [&](const std::string& message) {
    console.Fail(message);
    return outcome;
  };
  store::RunStoreOptions store_options;
  store_options.create = !run.resume;
  auto store = store::RunStore::Open(options.run_dir, store_options);
  if (!store.ok()) return fail(store.status().message());

  auto sink = std::make_shared<search::ExchangeSink>();
  sink->on_stored = run.hooks.after_exchange;
  sink->log = [console](const std::string& line) { console.Note(line); };
  // What this process uses of the stored configuration: it adds a cassette position and paths.
  llm::LlmConfig llm_config = options.llm;
  eval::EvalOptions eval = options.executor;
  if (run.resume && llm_config.provider == "replay" && llm_config.replay_mode == "sequential") {
    SkipServedRecordings(**store, llm_config);
  }
  llm::BackendDependencies llm_deps;
  llm_deps.on_exchange = sink->Hook();
  auto made = llm::MakeBackend(llm_config, llm_deps);
  if (!made.ok()) return fail(made.status().message());
  std::shared_ptr<llm::Backend> backend = std::move(*made);

  eval.device = options.device;
  if (eval.work_dir.empty()) eval.work_dir = store::RunLayout(options.run_dir).work();
  auto executor = run.services.make_executor(eval, options.worker_python);
  if (!executor) return outcome;  // it said why
  executor->set_progress(run.progress.get());
  if (options.python.empty() || options.python == "python3") {
    options.python = executor->worker().python();
  }
  eval::ProfileOptions profile;
  profile.timeline_source = options.timeline;
  auto evaluator = search::NewExecutorEvaluator(*executor, profile);
  // The precompiled headers' step (a minute the first time on a toolchain) runs beside Stage 1.
  executor->PrepareBuildsAhead();

  std::vector<std::string> early_notes;
  std::unique_ptr<agents::BenchmarkingAgent> benchmarking =
      StageOneAgent(options, *executor, early_notes);
  // The programmer's GPU section: --gpu, else the GPU the evaluations use. A resumed run keeps
  // the target it was created with (RunConfig::gpu, stored with the run).
  if (!run.resume) {
    std::optional<agents::GpuTarget> forced;
    if (!options.gpu_name.empty()) forced = options.gpu;
    PromptGpuChoice chosen = run.services.choose_prompt_gpu(options.device, forced, *executor);
    options.gpu = chosen.target;
    if (!chosen.note.empty()) {
      std::cerr << "kernelpro " << console.command << ": " << chosen.note << "\n";
      early_notes.push_back(chosen.note);
    }
  }
  // "unknown" rather than $0 for a model without a configured price.
  const bool cost_known = llm::CostKnown(llm_config);
  auto cutlass_kit = LoadCutlassKit(options, eval);
  if (!cutlass_kit.ok()) return fail(cutlass_kit.status().message());

  std::cout << "kernelpro " << console.command << ": run directory " << options.run_dir
            << std::endl;
  SetTerminationNote("the run directory is consistent; continue it with: kernelpro resume " +
                     options.run_dir);
  search::Orchestrator orchestrator(
      options, Dependencies(run, console, cutlass_kit->get(), backend, *evaluator, **store, *sink,
                            benchmarking.get(), *executor, options, cost_known));
  auto summary = orchestrator.Run();
  if (run.progress) run.progress->Finish();
  if (!summary.ok()) {
    outcome.recorded = run.resume || HoldsExchanges(**store);
    std::cerr << "kernelpro " << console.command
              << ": the run stopped: " << summary.status().message() << "\n";
    if (outcome.recorded) {
      std::cerr << "(continue it with: kernelpro resume " << options.run_dir << ")\n";
    } else {
      std::cerr << "(nothing was recorded: " << options.run_dir
                << " is left as it was; run optimize again once the cause is fixed)\n";
    }
    return outcome;
  }
  outcome.recorded = true;
  summary->notes.insert(summary->notes.begin(), early_notes.begin(), early_notes.end());
  outcome.exit_code = WriteAndSummarize(options.run_dir, orchestrator, *summary, **store,
                                        InspectEnvironment(run.services, *executor, options.device),
                                        LlmLabel(llm_config), cost_known, console);
  outcome.summary = std::move(*summary);
  return outcome;
}

}  // namespace kernelpro::app
