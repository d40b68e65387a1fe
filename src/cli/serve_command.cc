// `kernelpro serve`: the evaluation harness as an HTTP/JSON service (docs/serve.md). The parts
// live in src/serve (the queue, the journal, the API); this file reads the options, makes one
// executor per GPU and runs the server until a signal drains it.
#include <condition_variable>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <thread>

#include "app/executor_setup.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/option_groups.h"
#include "cli/serve_options.h"
#include "core/termination.h"
#include "core/text.h"
#include "core/version.h"
#include "serve/executor_evaluator.h"
#include "serve/http_api.h"
#include "serve/job_journal.h"
#include "serve/job_queue.h"

namespace kernelpro::cli {
namespace {

struct ServeArgs {
  std::string host = "127.0.0.1";
  int port = 8000;
  std::string token_file;
  std::string state_dir = ".kernelpro/serve";
  std::size_t max_queue = 256;
  int blank_workers = 2;
  std::string python;
  std::string cutlass_dir;
  eval::EvalOptions options;
};

bool Loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

// The token in --token-file, or why there is none (the file must hold one non-empty line).
Result<std::string> ReadToken(const std::string& path) {
  auto text = ReadFileText(path);
  if (!text.ok()) return Status::InvalidArgument("--token-file " + path + ": cannot be read");
  const std::string token(Trim(*text));
  if (token.empty()) return Status::InvalidArgument("--token-file " + path + " is empty");
  return token;
}

// One executor per GPU of --gpus (the default device alone without it; one on the CPU).
std::optional<std::vector<eval::Executor>> SlotExecutors(ServeArgs& args) {
  if (Status s = NormalizeGpus(args.options.gpus); !s.ok()) {  // "0,0", "x": refused here
    std::cerr << "kernelpro serve: " << s.message() << "\n";
    return std::nullopt;
  }
  std::vector<std::vector<std::string>> slots;
  if (args.options.device == "cuda" && !args.options.gpus.empty()) {
    for (const std::string& gpu : args.options.gpus) slots.push_back({gpu});
  } else {
    slots.push_back({});
  }
  std::vector<eval::Executor> executors;
  const std::string work_root =
      args.options.work_dir.empty() ? args.state_dir + "/work" : args.options.work_dir;
  for (const auto& gpus : slots) {
    eval::EvalOptions options = args.options;
    options.gpus = gpus;
    // A folder per slot: a slot's blank worker may write only where its own candidates do.
    options.work_dir = work_root + "/slot-" + std::to_string(executors.size());
    auto executor = MakeExecutor(options, args.python, "serve");
    if (!executor) return std::nullopt;
    executors.push_back(std::move(*executor));
  }
  args.options.cache_dir = executors.front().options().cache_dir;
  return executors;
}

int RunServe(ServeArgs args) {
  std::string token;
  if (!args.token_file.empty()) {
    auto read = ReadToken(args.token_file);
    if (!read.ok()) {
      std::cerr << "kernelpro serve: " << read.status().message() << "\n";
      return kUsageExit;
    }
    token = *read;
  } else if (!Loopback(args.host)) {
    std::cerr << "kernelpro serve: --host " << args.host
              << " is reachable from other machines: give --token-file FILE (a bearer token "
                 "every request must carry), or serve on 127.0.0.1\n";
    return kUsageExit;
  }
  if (Status s = LocateCutlassForBuilds(args.cutlass_dir, args.options); !s.ok()) {
    std::cerr << "kernelpro serve: " << s.message() << "\n";
    return kUsageExit;
  }
  auto executors = SlotExecutors(args);
  if (!executors) return kUsageExit;
  std::vector<serve::JobRecord> recovered;
  auto journal = serve::JobJournal::Open(args.state_dir + "/journal.jsonl", 10000, &recovered);
  if (!journal.ok()) {
    std::cerr << "kernelpro serve: " << journal.status().message() << "\n";
    return kUsageExit;
  }
  Json facts{
      {"version", kKernelproVersion}, {"device", args.options.device}, {"gpus", args.options.gpus}};
  auto evaluator =
      serve::MakeExecutorEvaluator(std::move(*executors), args.state_dir, args.blank_workers);
  serve::ServeMetrics metrics;
  serve::JobQueue queue(*evaluator, journal->get(), metrics, {args.max_queue, 10000},
                        std::move(recovered));
  EvalRequestOptions request_options(args.options);
  serve::ApiConfig config;
  config.token = token;
  config.facts = facts;
  serve::EvalApi api(config, queue, request_options, metrics);
  auto port = api.Bind(args.host, args.port);
  if (!port.ok()) {
    std::cerr << "kernelpro serve: " << port.status().message() << "\n";
    return kUsageExit;
  }
  // The first SIGTERM/SIGINT drains: no new jobs (503), the queued ones cancelled, the running
  // ones finished; then the server stops. A second signal stops at once (core/termination.h).
  // The signal thread may call the handler a moment after this function returned: it holds the
  // flag by a shared pointer, never a reference to this frame.
  struct StopFlag {
    std::mutex mutex;
    std::condition_variable wake;
    bool stop = false;
    void Set() {
      std::lock_guard<std::mutex> lock(mutex);
      stop = true;
      wake.notify_all();
    }
  };
  auto flag = std::make_shared<StopFlag>();
  SetGracefulStop([flag](int) { flag->Set(); });
  std::thread drainer([&] {
    {
      std::unique_lock<std::mutex> lock(flag->mutex);
      flag->wake.wait(lock, [&] { return flag->stop; });
    }
    std::cerr
        << "kernelpro serve: draining: finishing the running evaluations, refusing new ones\n";
    queue.Drain();
    api.Stop();
  });
  std::cerr << "kernelpro serve: listening on http://" << args.host << ":" << *port << " ("
            << args.options.device << ", " << evaluator->slots() << " slot"
            << (evaluator->slots() == 1 ? "" : "s") << (token.empty() ? "" : ", bearer token")
            << ")" << std::endl;
  api.Run();
  flag->Set();
  drainer.join();
  SetGracefulStop(nullptr);
  std::cerr << "kernelpro serve: stopped\n";
  return 0;
}

}  // namespace

CommandRunner RegisterServeCommand(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  eval::EvalOptions& o = args->options;
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Serve the evaluation harness over HTTP/JSON to agents and RL loops (docs/serve.md)");
  cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->footer(
      "Every request is evaluated as `kernelpro eval --json` would, sandboxed, one per GPU at a "
      "time. The executor options below are the defaults a request's \"options\" override.");
  cmd->add_option("--host", args->host, "Address to listen on; any but loopback needs --token-file")
      ->capture_default_str();
  cmd->add_option("--port", args->port, "Port to listen on (0: any free one, printed)")
      ->check(WholeRange(0, 65535))
      ->capture_default_str();
  cmd->add_option("--token-file", args->token_file,
                  "File holding the bearer token every request must carry")
      ->check(InputFile());
  cmd->add_option("--state-dir", args->state_dir,
                  "Where the journal of verdicts and the jobs' files live")
      ->capture_default_str();
  cmd->add_option("--max-queue", args->max_queue,
                  "Evaluations that may wait for a device; more are refused with 429")
      ->check(WholeRange(1, 100000))
      ->capture_default_str();
  cmd->add_option("--blank-workers", args->blank_workers,
                  "Candidate processes per GPU started ahead of the requests (torch imported, "
                  "CUDA up), each handed to one candidate; 0: each started when its job runs")
      ->check(WholeRange(0, 16))
      ->capture_default_str();
  AddDeviceOption(*cmd, o.device);
  AddOption(*cmd, kSeedOption, o.seed)->capture_default_str();
  AddExecutorOptions(*cmd, o, args->python);
  AddCutlassOptions(*cmd, args->cutlass_dir);
  return [args] { return RunServe(*args); };
}

}  // namespace kernelpro::cli
