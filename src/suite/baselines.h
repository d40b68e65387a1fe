// The problem's own baselines, eager PyTorch and torch.compile, measured once per problem and GPU
// model and kept in the cache (CACHE/baselines/<GPU model>/<problem hash>-<timing digest>.json),
// so every suite, seed and candidate of a problem on that GPU model is labelled against the same
// torch.compile time without compiling it again. The measurement is Executor::MeasureBaselines:
// eager and compiled timed in interleaved rounds in one process, so their ratio is honest; a
// kernel's speedup over torch.compile is then its (interleaved) speedup over eager divided by
// that ratio.
#pragma once

#include <string>

#include "core/json_io.h"
#include "core/status.h"
#include "eval/executor.h"

namespace kernelpro::suite {

// {"eager_ms", "compile_ms", "compile_speedup", "compile_speedup_interval": [low, high],
//  "method", "gpu_name", "measured_at", "cached": bool, "file"}. `gpu_name` names the GPU model
// (the cache's folder); the executor's GPUs are taken to be that model.
Result<Json> CachedBaselines(eval::Executor& executor, const std::string& problem_path,
                             const std::string& problem_sha256, const std::string& gpu_name);

}  // namespace kernelpro::suite
