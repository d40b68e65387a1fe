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
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/option_groups.h"
#include "cli/prompt_gpu.h"
#include "core/stats.h"
#include "core/termination.h"
#include "core/text.h"
#include "llm/cassette.h"
#include "llm/factory.h"
#include "roofline/hardware.h"
#include "search/orchestrator.h"
#include "search/run_report.h"
#include "store/run_lock.h"
#include "store/run_store.h"

namespace kernelpro::cli {
namespace {

namespace fs = std::filesystem;

struct OptimizeArgs {
  std::string problem, run_dir, search = "mcts", feedback = "tools", tool_mode = "proactive",
                                device = "cuda", gpu, python, cutlass_dir;
  int candidates = 2;
  int max_tokens = 16384;
  bool no_memory = false;
  bool demo = false;
  std::uint64_t seed = 0;
  SearchBudget budget;  // iterations not given: 30, or the demo's length
  LlmOptions llm;
  ToolOptions tools;
  EvalOptions eval;
};

struct ResumeArgs {
  std::string run_dir;
  EvalOptions sandbox;  // only its sandbox options: --unsafe-no-sandbox, --pass-env, --sandbox-read
  SearchBudget budget;  // what is not given: the run's own
  LlmOptions llm;
};

// ---- what a resumed run needs from the command line that started it

Json LlmConfigJson(const llm::LlmConfig& c) {
  return Json{{"provider", c.provider},
              {"model", c.model},
              {"base_url", c.base_url},
              {"api_key_env", c.api_key_env},
              {"allow_insecure_key", c.allow_insecure_key},
              {"region", c.region},
              {"aws_profile", c.aws_profile},
              {"structured_output", c.structured_output},
              {"replay_mode", c.replay_mode},
              {"record_to", c.record_to},
              {"prices_file", c.prices_file},
              {"connect_timeout_s", c.connect_timeout_s},
              {"timeout_s", c.timeout_s},
              {"max_attempts", c.max_attempts},
              {"max_concurrency", c.max_concurrency},
              {"max_tokens_cap", c.max_tokens_cap}};
}

llm::LlmConfig LlmConfigFromJson(const Json& j) {
  llm::LlmConfig c;
  c.provider = JsonGet<std::string>(j, "provider", c.provider);
  c.model = JsonGet<std::string>(j, "model", c.model);
  c.base_url = JsonGet<std::string>(j, "base_url", c.base_url);
  c.api_key_env = JsonGet<std::string>(j, "api_key_env", c.api_key_env);
  // Stored from the profile that started the run, so `resume` sends the key where that profile
  // allowed it; a new --llm on resume replaces the whole config and with it this.
  c.allow_insecure_key = JsonGet<bool>(j, "allow_insecure_key", c.allow_insecure_key);
  c.region = JsonGet<std::string>(j, "region", c.region);
  c.aws_profile = JsonGet<std::string>(j, "aws_profile", c.aws_profile);
  c.structured_output = JsonGet<bool>(j, "structured_output", c.structured_output);
  c.replay_mode = JsonGet<std::string>(j, "replay_mode", c.replay_mode);
  c.record_to = JsonGet<std::string>(j, "record_to", c.record_to);
  c.prices_file = JsonGet<std::string>(j, "prices_file", c.prices_file);
  c.connect_timeout_s = JsonGet<double>(j, "connect_timeout_s", c.connect_timeout_s);
  c.timeout_s = JsonGet<double>(j, "timeout_s", c.timeout_s);
  c.max_attempts = JsonGet<int>(j, "max_attempts", c.max_attempts);
  c.max_concurrency = JsonGet<int>(j, "max_concurrency", c.max_concurrency);
  c.max_tokens_cap = JsonGet<int>(j, "max_tokens_cap", c.max_tokens_cap);
  return c;
}

Json EvalOptionsJson(const EvalOptions& o) {
  return Json{{"device", o.device},
              {"correctness_trials", o.correctness_trials},
              {"extra_trials", o.extra_trials},
              {"fp64_trials", o.fp64_trials},
              {"timing_inputs", o.timing_inputs},
              {"timing_trials", o.timing_trials},
              {"timing_rounds", o.timing_rounds},
              {"time_budget_s", o.time_budget_s},
              {"atol", o.atol},
              {"rtol", o.rtol},
              {"vacuous_rel_tol", o.vacuous_rel_tol},
              {"precision_policy", o.precision_policy},
              {"precision_bound", o.precision_bound},
              {"precision_factor", o.precision_factor},
              {"torch_ops_policy", o.torch_ops_policy},
              {"allowed_ops", o.allowed_ops},
              {"static_checks", o.static_checks},
              {"compile_baseline", o.compile_baseline},
              {"precompiled_headers", o.precompiled_headers},
              {"jobs", o.jobs},
              {"gpus", o.gpus},
              {"seed", o.seed},
              {"init_seed", o.init_seed},
              {"flush_bytes", o.flush_bytes},
              {"cache_dir", o.cache_dir},
              {"work_dir", o.work_dir},
              {"step_timeout_s", o.step_timeout_s},
              {"build_timeout_s", o.build_timeout_s},
              {"reference_timeout_s", o.reference_timeout_s},
              // Not --unsafe-no-sandbox: running unconfined is chosen anew by each process.
              {"pass_env", o.pass_env},
              {"sandbox_read_only", o.sandbox_read_only}};
}

EvalOptions EvalOptionsFromJson(const Json& j) {
  EvalOptions o;
#define KP_FIELD(name) o.name = JsonGet<decltype(o.name)>(j, #name, o.name)
  KP_FIELD(device);
  KP_FIELD(correctness_trials);
  KP_FIELD(extra_trials);
  KP_FIELD(fp64_trials);
  KP_FIELD(timing_inputs);
  KP_FIELD(timing_trials);
  KP_FIELD(timing_rounds);
  KP_FIELD(time_budget_s);
  KP_FIELD(atol);
  KP_FIELD(rtol);
  KP_FIELD(vacuous_rel_tol);
  KP_FIELD(precision_policy);
  KP_FIELD(precision_bound);
  KP_FIELD(precision_factor);
  KP_FIELD(torch_ops_policy);
  KP_FIELD(allowed_ops);
  KP_FIELD(static_checks);
  KP_FIELD(compile_baseline);
  KP_FIELD(precompiled_headers);
  KP_FIELD(jobs);
  KP_FIELD(gpus);
  KP_FIELD(seed);
  KP_FIELD(init_seed);
  KP_FIELD(flush_bytes);
  KP_FIELD(cache_dir);
  KP_FIELD(work_dir);
  KP_FIELD(step_timeout_s);
  KP_FIELD(build_timeout_s);
  KP_FIELD(reference_timeout_s);
  KP_FIELD(pass_env);
  KP_FIELD(sandbox_read_only);
#undef KP_FIELD
  return o;
}

// The tool options (--tool-plugin, --tool-rules, --threshold, --no-energy), under "tools": a
// resumed run analyses with the same tools. Paths are made absolute, so resume works from any
// directory.
Json ToolOptionsJson(const ToolOptions& o) {
  auto absolute = [](const std::vector<std::string>& paths) {
    std::vector<std::string> out;
    for (const std::string& path : paths) {
      std::error_code ec;
      const fs::path made = fs::absolute(path, ec);
      out.push_back(ec ? path : made.lexically_normal().string());
    }
    return out;
  };
  return Json{{"plugins", absolute(o.plugins)},
              {"rule_files", absolute(o.rule_files)},
              {"thresholds", o.thresholds},
              {"no_energy", o.no_energy}};
}

ToolOptions ToolOptionsFromJson(const Json& j) {
  ToolOptions o;
  o.plugins = JsonGet<std::vector<std::string>>(j, "plugins", o.plugins);
  o.rule_files = JsonGet<std::vector<std::string>>(j, "rule_files", o.rule_files);
  o.thresholds = JsonGet<std::vector<std::string>>(j, "thresholds", o.thresholds);
  o.no_energy = JsonGet<bool>(j, "no_energy", o.no_energy);
  return o;
}

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

search::RunEnvironment InspectEnvironment(const Executor& executor, const std::string& device) {
  search::RunEnvironment env;
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

// Writes a report file; a run directory that became unwritable is an error the user must see, not
// a silently missing report.
Status WriteTextFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Status::IoError("cannot write " + path.string() + ": " + std::strerror(errno));
  return Status::Ok();
}

// ---- one run, new or resumed

// `recorded` is set once the run holds something worth resuming (see HoldsExchanges).
int RunSearch(search::OptimizeOptions options, llm::LlmConfig llm_config, EvalOptions eval,
              const std::string& python, const ToolRegistry& registry, bool resume,
              bool& recorded) {
  const char* command = resume ? "resume" : "optimize";
  auto fail = [&](const std::string& message) {
    std::cerr << "kernelpro " << command << ": " << message << "\n";
    return 2;
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
  sink->log = [command](const std::string& line) {
    std::cerr << "kernelpro " << command << ": " << line << "\n";
  };
  if (resume && llm_config.provider == "replay" && llm_config.replay_mode == "sequential") {
    // A sequential cassette continues, stream by stream, after the replies the earlier
    // processes stored.
    auto runs = (*store)->ListRuns();
    if (runs.ok() && !runs->empty()) {
      auto exchanges = (*store)->ListLlmExchanges(runs->front().id);
      if (exchanges.ok()) {
        for (const store::LlmExchangeRecord& r : *exchanges) {
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
  if (eval.work_dir.empty()) eval.work_dir = (fs::path(options.run_dir) / "work").string();
  auto executor = MakeExecutor(eval, python, command);
  if (!executor) return 2;
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
    const std::string gpu_key = JsonGet<std::string>(options.frontend, "gpu", "");
    if (!gpu_key.empty()) {
      if (auto spec = FindGpu(gpu_key); spec.ok()) bo.gpu = *spec;
    }
    if (options.device == "cuda" || bo.gpu) {
      Executor* stage_one_executor = &*executor;
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
  // the target it was created with (OptimizeOptions::gpu, stored with the run).
  if (!resume) {
    std::optional<agents::GpuTarget> forced;
    if (!JsonGet<std::string>(options.frontend, "gpu", "").empty()) forced = options.gpu;
    PromptGpu chosen =
        ChoosePromptGpu(options.device, forced, [&executor] { return DetectGpuTarget(*executor); });
    options.gpu = chosen.target;
    if (!chosen.note.empty()) {
      std::cerr << "kernelpro " << command << ": " << chosen.note << "\n";
      early_notes.push_back(chosen.note);
    }
  }

  const bool tty = ::isatty(STDOUT_FILENO);
  search::OrchestratorDependencies deps;
  deps.backend = backend.get();
  deps.memory_backend = backend;
  deps.evaluator = evaluator.get();
  deps.store = store->get();
  deps.exchanges = sink.get();
  deps.benchmarking = benchmarking.get();
  deps.registry = &registry;
  deps.on_step_done = [kill](const store::StepKey& k) { KillIf(kill, k.step, k.iteration); };
  deps.log = [command](const std::string& line) {
    std::cerr << "kernelpro " << command << ": " << line << "\n";
  };
  deps.progress = [tty](const search::IterationProgress& p) {
    std::ostringstream line;
    line << "iteration " << p.iteration << "/" << p.iterations << "  " << agents::ToString(p.mode)
         << " from "
         << (p.parent == search::Tree::kRootId ? std::string("ROOT")
                                               : "n" + std::to_string(p.parent))
         << ": " << p.outcome << "  | best " << (p.best ? RatioText(*p.best) : std::string("none"))
         << " | cost $" << FormatFixed(p.cost_usd, 4) << (p.resumed ? " (resumed)" : "");
    if (tty) {
      // On a terminal the last line says what is running now; the next line replaces it.
      std::cout << "\r\033[K" << line.str() << "\n";
      if (p.iteration < p.iterations) {
        std::cout << "  ... iteration " << p.iteration + 1 << "/" << p.iterations << " running"
                  << std::flush;
      }
    } else {
      std::cout << line.str() << std::endl;
    }
  };

  std::cout << "kernelpro " << command << ": run directory " << options.run_dir << std::endl;
  SetTerminationNote("the run directory is consistent; continue it with: kernelpro resume " +
                     options.run_dir);
  if (tty) std::cout << "  ... running" << std::flush;
  search::Orchestrator orchestrator(options, deps);
  auto summary = orchestrator.Run();
  if (tty) std::cout << "\r\033[K" << std::flush;
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

  search::RunReportInput report;
  report.options = orchestrator.options();
  report.summary = *summary;
  report.tree = &orchestrator.tree();
  report.nodes = &orchestrator.nodes();
  report.stage1 = orchestrator.stage1();
  report.environment = InspectEnvironment(*executor, options.device);
  report.llm = LlmLabel(llm_config);

  const fs::path dir = options.run_dir;
  std::error_code ec;
  fs::remove(dir / "best.py", ec);
  Status written;
  if (summary->best) {
    const search::NodeInfo& info = orchestrator.nodes().at(*summary->best);
    auto candidate = (*store)->GetCandidate(info.candidate_id);
    if (candidate.ok()) {
      written = WriteTextFile(dir / "best.py", search::RenderBestKernel(report, candidate->source));
    }
  }
  if (written.ok())
    written = WriteTextFile(dir / "report.md", search::RenderMarkdownReport(report));
  if (written.ok()) written = WriteTextFile(dir / "report.html", search::RenderHtmlReport(report));
  if (!written.ok()) {
    return fail(written.message() + " (the run is recorded; `kernelpro resume " + options.run_dir +
                "` writes the reports again)");
  }

  std::cout << "stopped: " << summary->stop_message << "\n";
  if (auto verdict = search::JudgeBest(orchestrator.tree())) {
    std::cout << "best: n" << verdict->node << " " << RatioText(verdict->speedup)
              << " over the reference; " << verdict->text << "\n";
    std::cout << "kernel: " << (dir / "best.py").string() << "\n";
  } else {
    std::cout << "best: no correct kernel was found\n";
  }
  std::cout << "report: " << (dir / "report.md").string()
            << " (HTML: " << (dir / "report.html").string() << ")\n";
  std::cout << "LLM: " << summary->exchanges << " exchanges, $" << FormatFixed(summary->cost_usd, 4)
            << "\n";
  return summary->best ? 0 : 1;
}

int Optimize(const search::OptimizeOptions& options, const llm::LlmConfig& llm_config,
             const EvalOptions& eval, const std::string& python, const ToolRegistry& registry,
             bool resume) {
  bool recorded = false;
  if (resume) return RunSearch(options, llm_config, eval, python, registry, resume, recorded);
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
  if (std::error_code ec; fs::exists(fs::path(options.run_dir) / store::kRunStoreFileName, ec)) {
    std::cerr << "kernelpro optimize: " << options.run_dir
              << " already holds a run; continue it with: kernelpro resume " << options.run_dir
              << "\n";
    return 2;
  }
  const int code = RunSearch(options, llm_config, eval, python, registry, resume, recorded);
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
  search::OptimizeOptions o;
  std::optional<Demo> demo;
  if (args.demo) {
    if (!args.llm.spec.empty() || !args.llm.config_file.empty()) {
      return fail(
          "--demo replays the project's own cassette; leave out --llm and --llm-config (and "
          "unset KERNELPRO_LLM and KERNELPRO_LLM_CONFIG)");
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
  o.search = args.search;
  std::string feedback = args.feedback;
  if (args.tool_mode == "reactive") {
    if (feedback != "tools" && feedback != "reactive") {
      return fail("--tool-mode reactive needs --feedback tools");
    }
    feedback = "reactive";
  }
  o.feedback = agents::ParseFeedbackMode(feedback).value();
  o.memory = !args.no_memory;
  o.seed = args.seed;
  if (args.run_dir.empty()) {
    std::error_code ec;
    const fs::path problem = fs::absolute(args.problem, ec);
    args.run_dir =
        demo ? DefaultRunDir("demo-swish-" + args.device)
             : DefaultRunDir(search::ProblemName((ec ? fs::path(args.problem) : problem).string()));
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
  if (Status s = CheckCutlassDir(args.cutlass_dir); !s.ok()) return fail(s.message());
  o.cutlass_dir = args.cutlass_dir;
  // The prompts tell candidates to include its headers: the sandbox lets them read it.
  if (!o.cutlass_dir.empty()) args.eval.sandbox_read_only.push_back(o.cutlass_dir);
  o.python = args.python.empty() ? "python3" : args.python;
  if (Status s = NormalizeGpus(args.eval.gpus); !s.ok()) return fail(s.message());
  o.gpus = args.eval.gpus.empty() ? 1 : static_cast<int>(args.eval.gpus.size());
  std::error_code ec;
  if (fs::exists(fs::path(o.run_dir) / store::kRunStoreFileName, ec)) {
    return fail(o.run_dir + " already holds a run; continue it with: kernelpro resume " +
                o.run_dir);
  }
  auto llm_config = ResolveLlmConfig(args.llm);
  if (!llm_config.ok()) return fail(llm_config.status().message());
  if (o.max_cost_usd) {
    if (Status s = CheckCostLimitReachable(*llm_config); !s.ok()) return fail(s.message());
  }
  // The user's tools join the search; a bad plugin, rule file or threshold stops it here.
  auto registry = BuildRegistry(args.tools);
  if (!registry.ok()) return fail(registry.status().message());
  if (demo) {
    llm_config->replay_mode = "sequential";
    std::cout << "kernelpro optimize --demo: " << demo->problem << " on " << args.device
              << ", the model's replies replayed from " << demo->cassette
              << " (candidates written by the kernelpro project; every build, check, timing and "
                 "profile is real)"
              << std::endl;
  }
  o.frontend = Json{{"llm", LlmConfigJson(*llm_config)},
                    {"eval", EvalOptionsJson(args.eval)},
                    {"python", args.python},
                    {"gpu", args.gpu},
                    {"tools", ToolOptionsJson(args.tools)}};
  return Optimize(o, *llm_config, args.eval, args.python, *registry, /*resume=*/false);
}

int RunResume(ResumeArgs& args) {
  auto fail = [](const std::string& message) {
    std::cerr << "kernelpro resume: " << message << "\n";
    return 2;
  };
  search::OptimizeOptions o;
  if (!fs::is_directory(args.run_dir)) return fail(args.run_dir + " is not a directory");
  auto lock = store::RunDirectoryLock::Acquire(args.run_dir, "resume");
  if (!lock.ok()) return fail(lock.status().message());
  {
    store::RunStoreOptions store_options;
    store_options.create = false;
    auto store = store::RunStore::Open(args.run_dir, store_options);
    if (!store.ok()) return fail(args.run_dir + ": " + store.status().message());
    auto stored = search::StoredRunOptions(**store);
    if (!stored.ok()) return fail(stored.status().message());
    o = std::move(*stored);
  }
  o.run_dir = args.run_dir;
  if (args.budget.iterations >= 0) o.iterations = args.budget.iterations;
  if (args.budget.max_cost >= 0) o.max_cost_usd = args.budget.max_cost;
  if (args.budget.time_limit >= 0) o.time_limit_s = args.budget.time_limit;
  llm::LlmConfig llm_config = LlmConfigFromJson(JsonGet<Json>(o.frontend, "llm", Json::object()));
  const bool new_llm = !args.llm.spec.empty() || !args.llm.config_file.empty();
  if (new_llm) {
    auto given = ResolveLlmConfig(args.llm);
    if (!given.ok()) return fail(given.status().message());
    llm_config = *given;
  }
  // A limit or a model given now is checked now; a run's own pair was checked when it began.
  if (o.max_cost_usd && (args.budget.max_cost >= 0 || new_llm)) {
    if (Status s = CheckCostLimitReachable(llm_config); !s.ok()) return fail(s.message());
  }
  auto registry = BuildRegistry(ToolOptionsFromJson(JsonGet<Json>(o.frontend, "tools", Json{})));
  if (!registry.ok()) return fail("the run's tools: " + registry.status().message());
  EvalOptions eval = EvalOptionsFromJson(JsonGet<Json>(o.frontend, "eval", Json::object()));
  eval.unsafe_no_sandbox = args.sandbox.unsafe_no_sandbox;
  for (const std::string& name : args.sandbox.pass_env) eval.pass_env.push_back(name);
  for (const std::string& path : args.sandbox.sandbox_read_only) {
    eval.sandbox_read_only.push_back(path);
  }
  std::string python = JsonGet<std::string>(o.frontend, "python", "");
  return Optimize(o, llm_config, eval, python, *registry, /*resume=*/true);
}

}  // namespace

CommandRunner RegisterOptimizeCommand(CLI::App& app) {
  auto args = std::make_shared<OptimizeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "optimize",
      "Search for the fastest validated kernel for a problem (MCTS or greedy over LLM-written "
      "candidates); exit 0 when a correct kernel was found, 1 when none, 2 on bad input");
  cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  AddOption(*cmd, kProblemOption, args->problem)->check(CLI::ExistingFile);
  cmd->add_flag("--demo", args->demo,
                "Run a short search on problems/swish with candidates the project wrote, replayed "
                "from a cassette: no API key needed (with --device cpu: CPU candidates)");
  AddLlmOptions(*cmd, args->llm);
  cmd->add_option("--search", args->search, "Search strategy: mcts or greedy")
      ->check(CLI::IsMember({"mcts", "greedy"}))
      ->capture_default_str();
  AddOption(*cmd, kCandidatesOption, args->candidates)
      ->check(WholeRange(1, 16))
      ->capture_default_str();
  AddOption(*cmd, kMaxTokensOption, args->max_tokens)
      ->check(WholeRange(256, 1000000))
      ->capture_default_str();
  cmd->add_option("--feedback", args->feedback,
                  "What the programmer learns of a working kernel: tools (micro-profiling "
                  "guidance), raw (ncu counters) or none")
      ->check(CLI::IsMember({"tools", "raw", "none", "reactive"}))
      ->capture_default_str();
  cmd->add_option("--tool-mode", args->tool_mode,
                  "proactive: every relevant tool runs; reactive: the LLM calls the tools it wants")
      ->check(CLI::IsMember({"proactive", "reactive"}))
      ->capture_default_str();
  cmd->add_flag("--no-memory", args->no_memory, "No search memory across iterations");
  AddOption(*cmd, kSeedOption, args->seed)->capture_default_str();
  cmd->add_option("--run-dir", args->run_dir,
                  "Run directory (default runs/PROBLEM-TIMESTAMP); must not hold a run yet");
  AddBudgetOptions(*cmd, args->budget);
  AddDeviceOption(*cmd, args->device);
  AddOption(*cmd, kGpuOption, args->gpu);
  AddCutlassOptions(*cmd, args->cutlass_dir);
  AddToolOptions(*cmd, args->tools);
  args->eval.precompiled_headers = true;  // a search builds many candidates: worth it
  AddExecutorOptions(*cmd, args->eval, args->python);
  return [args] { return RunOptimize(*args); };
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
  return [args] { return RunResume(*args); };
}

}  // namespace kernelpro::cli
