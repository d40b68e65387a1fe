// `kernelpro profile`: collects the three views of one candidate on a GPU.
//
//   build (cached) ─► cuobjdump/nm on the built .so ─► SASS view, entry kernel names
//                 ─► ncu over the worker's `run` step (NVTX range, entry kernels) ─► ncu view
//                 ─► torch.profiler over the worker's `trace` step ─► timeline view
//
// Every collector is optional: a missing ncu, missing counter permissions or a failed trace
// leave that view empty with a note, and the others still come back.
#pragma once

#include <string>

#include "eval/executor.h"
#include "profile/metrics.h"
#include "profile/ncu_runner.h"

namespace kernelpro::eval {

struct ProfileOptions {
  bool ncu = true;
  bool sass = true;
  bool timeline = true;
  // Where the timeline comes from: "torch" (the PyTorch profiler, the default) or "nsys" (Nsight
  // Systems around the run step, profile/nsys_runner.h; the profiler's when nsys makes no report).
  std::string timeline_source = "torch";
  profile::NcuOptions ncu_options;
  std::string artifacts_dir;  // if set, raw outputs are saved there as NAME.ncu.csv, ... (kernelpro
                              // collect --from)
  std::string artifacts_name = "candidate";
};

// Profiles `candidate` (or, when empty, the problem's reference Model). A non-OK status only when
// nothing could run at all (problem error, build failure).
//
// Its device steps (reference, ncu, trace) run on a GPU leased from executor.gpu_pool(), so they
// never share a GPU with an evaluation or another profile; the call blocks until one is free.
// Thread-safe: several profiles may run at once (one per GPU), also beside Executor::Evaluate.
// The caller must not hold a lease of that pool. With `artifacts_dir` set, concurrent calls need
// distinct `artifacts_name`s.
Result<profile::Metrics> ProfileCandidate(Executor& executor, const std::string& problem,
                                          const std::string& candidate,
                                          const ProfileOptions& options);

}  // namespace kernelpro::eval
