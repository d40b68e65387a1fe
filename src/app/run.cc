#include "app/run.h"

#include <utility>
#include <vector>

#include "agents/benchmarking_agent.h"
#include "agents/cutlass_tools.h"
#include "app/executor_setup.h"
#include "app/prompt_gpu.h"
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

std::string LlmLabel(const llm::LlmConfig& c) {
  std::string label = c.provider + ":" + c.model;
  if (!c.base_url.empty()) label += "@" + c.base_url;
  return label;
}

// Where the measurements were taken: the worker's inspect step (`inspected`).
report::RunEnvironment EnvironmentOf(const Result<Json>& inspected, const std::string& device) {
  report::RunEnvironment env;
  env.device = device;
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

// What the orchestrator is given besides its options. `kit` may be null; every other pointer must
// outlive the orchestrator.
search::OrchestratorDependencies Dependencies(const RunOptions& run, const agents::CutlassKit* kit,
                                              const std::shared_ptr<llm::Backend>& backend,
                                              search::CandidateEvaluator& evaluator,
                                              store::RunStore& store, search::ExchangeSink& sink,
                                              agents::BenchmarkingAgent* benchmarking,
                                              eval::Executor& executor,
                                              const search::RunConfig& config, bool cost_known) {
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
  RunObserver* observer = run.observer;
  deps.log = [observer](const std::string& line) { observer->Note(line); };
  deps.step_progress = run.progress.get();
  if (config.energy != search::EnergyMode::kOff) deps.measure_energy = EnergyMeterOn(executor);
  deps.iteration_started = [observer](int iteration, int iterations) {
    observer->IterationStarted(iteration, iterations);
  };
  deps.progress = [observer, cost_known](const search::IterationProgress& p) {
    observer->IterationEnded(p, cost_known);
  };
  return deps;
}

// What a finished search leaves: the run's files, then its closing facts for the observer.
// Whether the files were written (else the observer was told why).
bool WriteAndClose(const std::string& run_dir, const search::Orchestrator& orchestrator,
                   const search::OptimizeSummary& summary, store::RunStore& store,
                   report::RunEnvironment environment, const std::string& llm, bool cost_known,
                   RunObserver& observer) {
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
    observer.Failed(written.message() + " (the run is recorded; `kernelpro resume " + run_dir +
                    "` writes the reports again)");
    return false;
  }
  const store::RunLayout layout(run_dir);
  RunClosing closing;
  closing.run_dir = run_dir;
  closing.stop = summary.stop;
  closing.stop_message = summary.stop_message;
  closing.best = report::JudgeBest(orchestrator.tree(), &orchestrator.nodes());
  if (closing.best) {
    closing.energy_choice = report::EnergyChoiceText(orchestrator.tree());
    closing.best_kernel = layout.best_kernel();
  } else {
    closing.reference_stays = report::ReferenceStaysText(orchestrator.tree());
  }
  if (auto energy = report::ViewMeasuredEnergy(report)) {
    closing.energy_lines = report::MeasuredEnergyLines(*energy);
  }
  closing.markdown_report = layout.markdown_report();
  closing.html_report = layout.html_report();
  closing.exchanges = summary.exchanges;
  closing.cost_usd = summary.cost_usd;
  closing.cost_known = cost_known;
  observer.Finished(closing);
  return true;
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
  RunOutcome outcome;  // not finished, nothing recorded, until the search has run
  RunObserver& observer = *run.observer;
  auto fail = [&](const std::string& message) {
    observer.Failed(message);
    return outcome;
  };
  store::RunStoreOptions store_options;
  store_options.create = !run.resume;
  auto store = store::RunStore::Open(options.run_dir, store_options);
  if (!store.ok()) return fail(store.status().message());

  auto sink = std::make_shared<search::ExchangeSink>();
  sink->on_stored = run.hooks.after_exchange;
  sink->log = [&observer](const std::string& line) { observer.Note(line); };
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
  auto executor = StartExecutor(eval, options.worker_python);
  if (!executor.ok()) return fail(executor.status().message());
  if (eval.unsafe_no_sandbox) observer.Note(kUnsafeNoSandboxWarning);
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
  // One inspect step serves both the prompts' GPU and the report's environment.
  const Result<Json> inspected = InspectDevice(*executor, options.device);
  if (!run.resume) {
    std::optional<agents::GpuTarget> forced;
    if (!options.gpu_name.empty()) forced = options.gpu;
    PromptGpu chosen = ChoosePromptGpu(options.device, forced,
                                       [&inspected] { return GpuTargetFromInspect(inspected); });
    options.gpu = chosen.target;
    if (!chosen.note.empty()) {
      observer.Note(chosen.note);
      early_notes.push_back(chosen.note);
    }
  }
  // "unknown" rather than $0 for a model without a configured price.
  const bool cost_known = llm::CostKnown(llm_config);
  auto cutlass_kit = LoadCutlassKit(options, eval);
  if (!cutlass_kit.ok()) return fail(cutlass_kit.status().message());

  observer.Started(options.run_dir);
  SetTerminationNote("the run directory is consistent; continue it with: kernelpro resume " +
                     options.run_dir);
  search::Orchestrator orchestrator(
      options, Dependencies(run, cutlass_kit->get(), backend, *evaluator, **store, *sink,
                            benchmarking.get(), *executor, options, cost_known));
  auto summary = orchestrator.Run();
  if (run.progress) run.progress->Finish();
  if (!summary.ok()) {
    outcome.recorded = run.resume || HoldsExchanges(**store);
    observer.Interrupted(options.run_dir, summary.status().message(), outcome.recorded);
    return outcome;
  }
  outcome.recorded = true;
  summary->notes.insert(summary->notes.begin(), early_notes.begin(), early_notes.end());
  outcome.finished = WriteAndClose(options.run_dir, orchestrator, *summary, **store,
                                   EnvironmentOf(inspected, options.device), LlmLabel(llm_config),
                                   cost_known, observer);
  outcome.found = static_cast<bool>(orchestrator.tree().FastestCorrectNode());
  outcome.summary = std::move(*summary);
  return outcome;
}

}  // namespace kernelpro::app
