#include "eval/executor.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <thread>

#include "eval/builder.h"
#include "eval/candidate_step.h"
#include "eval/device_runner.h"
#include "eval/device_timing.h"
#include "eval/referee.h"
#include "eval/static_checks.h"

namespace kernelpro::eval {

// The precompiled headers of this executor's builds. The executor is reused across an optimize
// run's iterations, so the pch step runs once, for the first build that needs a build process.
// A step started ahead (PrepareBuildsAhead) belongs to the executor: when its last copy goes, the
// step is stopped and its thread joined, so nothing of a finished run goes on writing the cache.
struct Executor::BuildHeaders {
  std::mutex mutex;
  bool prepared = false;
  bool notes_given = false;  // the notes go to the first build that asks
  std::vector<std::string> notes;
  PrecompiledHeaders headers;               // empty `dir` when the step failed: nothing to offer
  std::thread ahead;                        // PrepareBuildsAhead's thread
  int stop_fd = ::eventfd(0, EFD_CLOEXEC);  // readable: the step started ahead ends

  ~BuildHeaders() {
    if (ahead.joinable()) {
      if (stop_fd >= 0) {
        const std::uint64_t one = 1;
        [[maybe_unused]] ssize_t n = ::write(stop_fd, &one, sizeof one);
      }
      ahead.join();
    }
    if (stop_fd >= 0) ::close(stop_fd);
  }

  // Runs the step once, the first time it is asked (under `mutex`: builds that come meanwhile
  // want its headers too, and a second step would only wait on the first's lock file).
  PrecompiledHeaders Prepare(const WorkerClient& worker, const EvalOptions& options,
                             std::vector<std::string>* wanted_notes) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!prepared) {
      prepared = true;
      // The build step's environment (no GPU lease): the flags a build sees are the ones to match.
      auto made = PreparePrecompiledHeaders(worker, options.cache_dir, options.device, {},
                                            options.build_timeout_s, stop_fd);
      if (made.ok()) {
        headers = std::move(*made);
        notes = headers.notes;
      } else {
        notes = {"no precompiled headers (builds compile torch's headers as text): " +
                 made.status().message()};
      }
    }
    if (wanted_notes && !notes_given) {
      *wanted_notes = notes;
      notes_given = true;
    }
    return headers;
  }
};

namespace {

// The evaluation's reference, computed or loaded from the cache on a leased GPU while the builds
// run; every result gets its time, and `shared` and `report` its metadata.
Status ComputeReference(Executor& executor, EvalReport& report, SharedReference& shared,
                        std::vector<EvalResult>& results) {
  auto reference_start = std::chrono::steady_clock::now();
  ProgressScope computing(executor.progress(), {0, 0, "reference", "computing"});
  auto reference = executor.PrepareReference(report.problem);
  if (!reference.ok()) {
    computing.set_outcome("failed");
    return reference.status();
  }
  if (JsonGet<bool>(*reference, "cached", false)) computing.set_outcome("cached");
  report.reference = *reference;
  shared.Set(*reference);
  for (EvalResult& r : results) {
    r.reference_seconds = SecondsSince(reference_start);
    r.step_costs.Add("referee", "reference", *reference);
  }
  return Status::Ok();
}

}  // namespace

Executor::Executor(WorkerClient worker, EvalOptions options)
    : build_headers_(std::make_shared<BuildHeaders>()),
      context_(std::move(worker), std::move(options)),
      referees_(std::make_shared<Referees>()),
      builder_(MakeWorkerBuilder()),
      device_runner_(MakeWorkerDeviceRunner(referees_)) {
  // Values and the shared headers, never the executor: a copy of the context holds the headers'
  // step (PrepareBuildsAhead's too) as a copy of the executor does.
  context_.headers_for_builds = [headers = build_headers_, worker = context_.worker,
                                 options = context_.options](std::vector<std::string>* notes) {
    return headers->Prepare(worker, options, notes);
  };
  context_.prepared_headers = [headers = build_headers_] {
    std::lock_guard<std::mutex> lock(headers->mutex);
    return headers->headers;
  };
}

Executor Executor::WithOptions(const EvalOptions& per_evaluation) const {
  EvalOptions options = per_evaluation;
  KeepProcessWorld(context_.options, options);
  Executor copy = *this;
  copy.context_.options = options;
  copy.context_.base_request = BaseRequestOf(options);
  return copy;
}

PrecompiledHeaders Executor::HeadersForBuilds(std::vector<std::string>* notes) {
  return eval::HeadersForBuilds(context_, notes);
}

void Executor::PrepareBuildsAhead() {
  if (!context_.options.precompiled_headers) return;
  BuildHeaders& h = *build_headers_;
  std::lock_guard<std::mutex> lock(h.mutex);
  if (h.prepared || h.ahead.joinable()) return;
  // The thread gets values and `h`, never a copy of the executor: ~BuildHeaders, run when the
  // last copy goes, stops and joins it.
  h.ahead = std::thread([&h, worker = context_.worker, options = context_.options] {
    h.Prepare(worker, options, nullptr);
  });
}

PrecompiledHeaders Executor::PreparedHeaders() const { return eval::PreparedHeaders(context_); }

Json Executor::CandidateRequest(const std::string& candidate, const Json& reference) const {
  return eval::CandidateRequest(context_, candidate, reference);
}

Result<Json> Executor::PrepareReference(const std::string& problem) {
  GpuPool::Lease lease = context_.gpu_pool->Acquire();
  return referees_->RunReference(context_, problem, lease.Env(), /*rebuild=*/false);
}

Status Executor::ProbeInputs(const std::string& problem) {
  GpuPool::Lease lease = context_.gpu_pool->Acquire();
  return referees_->ProbeInputs(context_, problem, lease.Env());
}

Result<BaselineTimes> Executor::MeasureBaselines(const std::string& problem) {
  GpuPool::Lease lease = context_.gpu_pool->Acquire();
  const std::map<std::string, std::string> env = lease.Env();
  // Loads the reference (its inputs) into this GPU's referee, from the cache when it is there.
  auto reference = referees_->RunReference(context_, problem, env, /*rebuild=*/false);
  if (!reference.ok()) return reference.status();
  auto referee = referees_->For(context_, env);
  if (!referee.ok()) return referee.status();
  return TimeBaselines(context_, problem, **referee, lease.gpu());
}

void Executor::Build(const std::string& candidate, EvalResult& result) {
  builder_->Build(context_, candidate, result);
}

Result<EvalReport> Executor::Evaluate(const std::string& problem_path,
                                      const std::vector<std::string>& candidate_paths) {
  auto total_start = std::chrono::steady_clock::now();
  const WorkerClient& worker = context_.worker;
  const EvalOptions& options = context_.options;
  ProgressSink* progress = context_.progress;
  EvalReport report;
  report.problem = AbsolutePath(problem_path);
  if (!std::filesystem::exists(report.problem))
    return Status::NotFound("problem file not found: " + problem_path);

  // Candidate code runs only in the sandbox, unless the user chose to run it unconfined.
  if (!worker.SandboxReady().ok()) return worker.SandboxReady();
  // With one GPU its referee starts now (torch's import, CUDA), beside the static checks; a
  // failure to start is reported by the reference step, which starts it again.
  if (context_.gpu_pool->size() == 1 && !options.build_only) {
    (void)referees_->For(context_, GpuPool::EnvFor(context_.gpu_pool->only_gpu()));
  }
  CandidateBatch batch = CandidateBatch::Of(candidate_paths);
  if (progress) progress->BatchStarted(static_cast<int>(batch.items.size()));
  for (EvalResult& r : batch.results) {
    r.sandbox = worker.sandbox().Describe();
    r.sandboxed = worker.sandbox().active();
    r.criterion = CorrectnessCriterion(options);
  }

  // 1. Static checks first: they cost no build and no device.
  Status checked =
      RunStaticChecks(worker, options, report.problem, candidate_paths, progress, batch);
  if (!checked.ok()) return checked;

  // 2. With one GPU, the first candidate's process starts now, beside the builds and the
  // reference, and starts CUDA there too: nothing is timed on the device before its turn.
  std::unique_ptr<DeviceRun> device;
  if (!options.build_only) device = device_runner_->Begin(context_, report.problem, batch);

  // 3. Builds in parallel (CPU-bound, one cache directory per source), while the referee starts
  // and prepares the reference on the device; but not before the problem has shown it can make
  // its inputs: a problem whose get_inputs() raises is refused without building anything.
  if (!options.build_only) {
    if (Status probed = ProbeInputs(report.problem); !probed.ok()) return probed;
  }
  SharedReference reference;
  std::thread building([&] { BuildAll(*builder_, context_, batch); });
  Status reference_status = Status::Ok();
  if (!options.build_only) {
    reference_status = ComputeReference(*this, report, reference, batch.results);
  }
  building.join();
  if (!reference_status.ok()) return reference_status;

  // 4. Device steps: check, compare and time each candidate still in the running on a GPU.
  if (!options.build_only) {
    device->RunAll(reference);
    report.reference = reference.Get();  // recomputed, if it was
  }
  for (EvalResult& r : batch.results) r.total_seconds = SecondsSince(total_start);
  report.results = std::move(batch.results);
  return report;
}

}  // namespace kernelpro::eval
