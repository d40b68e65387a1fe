// PrecompiledHeaders: the g++ precompiled torch/extension.h that candidates' builds may use.
//
// Most of a cold load_inline build is spent parsing torch's headers. The worker's trusted `pch`
// step (python/kernelpro_worker/pch.py) imports no candidate code; it makes one precompiled
// header per likely flag set under CACHE/pch/<key> (key: compiler, flags, torch) and returns the
// content hash of every file. The executor runs it once per Executor, unconfined, for the first
// build that needs a build process (Executor::HeadersForBuilds; a cached header costs a torch
// import and a hash), then offers its result to every build request and candidate process. The
// sandbox mounts `pch_dir` read-only for every step (MountsForRequest), so no candidate can change
// a header another one uses; the build checks the files against the hashes before use and, when
// they differ, a header is missing or g++ rejects it, compiles without one (noted in the
// extension's `build_notes`). A failed pch step is never fatal: builds simply get no offer. Plain
// data, safe to copy between threads.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/status.h"
#include "eval/worker_client.h"

namespace kernelpro::eval {

struct PrecompiledHeaders {
  std::string dir;                 // CACHE/pch; empty: nothing to offer
  Json manifest = Json::object();  // {"<key>/<file>": sha256}, from the trusted step
  std::vector<std::string> notes;  // what the step rebuilt or could not build, for the log
};

// Runs the `pch` step for `device` ("cpu" | "cuda") with headers under `cache_dir`/pch, outside
// the sandbox. `env` is the GPU lease's environment (the step reads TORCH_CUDA_ARCH_LIST and the
// device like a build does). A readable `cancel_fd` ends the step; what it had not finished is
// not used (each header is renamed into place whole).
Result<PrecompiledHeaders> PreparePrecompiledHeaders(const WorkerClient& worker,
                                                     const std::string& cache_dir,
                                                     const std::string& device,
                                                     const std::map<std::string, std::string>& env,
                                                     int timeout_s = 600, int cancel_fd = -1);

// The step's result as PrecompiledHeaders; a result that is not "ok" is an error.
Result<PrecompiledHeaders> PrecompiledHeadersFromResult(const Json& result);

// Adds `pch_dir` and `pch_manifest` to a build request (nothing when `headers.dir` is empty).
void OfferPrecompiledHeaders(const PrecompiledHeaders& headers, Json& request);

}  // namespace kernelpro::eval
