// How an evaluation runs: the executor's options (executor.h), with a commented default per field,
// and the form a run stores them in for `kernelpro resume`. Every part of the executor reads them
// (static checks, builder, referees, device runner, timing); none changes them.
//
// Threading: a plain value; copy it or share it read-only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/status.h"

namespace kernelpro::eval {

struct EvalOptions {
  std::string device = "cuda";  // "cuda" or "cpu" (C++ CPU extensions)
  int correctness_trials = 5;   // K: fresh inputs from different seeds
  int extra_trials = 2;         // signed, mixed-scale variants of the problem's inputs
  int fp64_trials = 2;          // check trials also compared against an fp64 reference
  int timing_inputs = 3;        // input sets the timed calls rotate through (each call rescaled)
  int timing_trials = 100;      // timed calls per side, spread over the rounds
  int timing_rounds = 10;       // interleaved rounds: a block of each side, order A B B A A B ...
  double time_budget_s = 10;    // per side: no new round past this (after >= 2 rounds)
  // Outputs of sampled timed calls the referee checks: at most this many bytes in all.
  long long verify_bytes = 512ll << 20;
  // Check trials' outputs crossing to the referee per batch (check_batches.h); one trial at least.
  long long check_batch_bytes = 2ll << 30;
  double atol = 1e-2;
  double rtol = 1e-3;
  double vacuous_rel_tol = 1e-2;  // relative L2 error bound on problems an all-zero output passes
  std::string precision_policy = "fail";  // fp32 problems vs fp64 reference: fail | warn | off
  double precision_bound = 1e-5;  // relative error floor of that check (TF32 lands near 1e-4)
  double precision_factor = 16;   // ... or this many times the fp32 reference's own error
  std::string torch_ops_policy =
      "forbid";                          // candidate calling the reference's ops: forbid|warn|allow
  std::vector<std::string> allowed_ops;  // ops exempt from that policy (e.g. "matmul")
  bool static_checks =
      true;  // false: skip the scan's 'fail' findings (tests of the runtime guards)
  bool compile_baseline = false;  // also time torch.compile(Model) (torch >= 2)
  // Shape variants checked (never timed) after the benchmark's trials (eval/shape_check.h):
  // "given" (the problem's get_input_variants), "derived" (from its size constants), "off", or
  // "auto": given when the problem has get_input_variants, derived otherwise.
  std::string shapes = "auto";
  // Passing every shape variant is required for a correct verdict (else: correct, fixed-shape).
  bool require_shape_generality = false;
  // Precompile torch's headers once per toolchain (CACHE/pch, trusted step) for later C++
  // builds: a minute and ~0.6 GB per flag set the first time, ~40 % off each C++ build after.
  // Pays off over many builds: on in optimize, off in a one-off eval.
  bool precompiled_headers = false;
  int jobs = 2;                // parallel builds
  std::uint64_t seed = 1;      // base seed of the trials' inputs
  int init_seed = 42;          // seed before constructing Model and ModelNew (same weights)
  long long flush_bytes = -1;  // L2 flush buffer per timed call; -1: twice the device's L2
  std::string cache_dir = ".kernelpro/cache";  // builds, inputs and references, shared across runs
  std::string work_dir = ".kernelpro/work";    // per-evaluation outputs
  int step_timeout_s = 300;                    // check, time, compare, run
  int build_timeout_s = 1200;
  int reference_timeout_s = 3600;
  bool build_only = false;  // scan and build; no reference, no device steps
  // GPUs the device steps run on, as device ordinals ("0", "1"), each at most once; empty: the
  // process's default device. Several: one candidate per GPU at a time (executor.h).
  std::vector<std::string> gpus;
  // Candidate code runs in the sandbox (eval/sandbox.h); true runs it unconfined, and every result
  // says so. Only --unsafe-no-sandbox sets it.
  bool unsafe_no_sandbox = false;
  std::vector<std::string> pass_env;           // extra environment names for workers (--pass-env)
  std::vector<std::string> sandbox_read_only;  // extra paths candidates may read (a CUTLASS tree)
  // The CUTLASS tree that candidates including CUTLASS/CuTe headers build against: the folder
  // holding cute/ and cutlass/ ("" = none known; such a candidate is then a compile error naming
  // how to give one) and its release ("4.2.0"), which is part of those builds' cache keys. Every
  // request to a process that imports a candidate carries them as `cutlass`, and the sandbox lets
  // that process read the tree (worker_client.h).
  std::string cutlass_include_dir;
  std::string cutlass_version;
};

// The correctness criterion the options judge by (--correctness), named in every result and report:
//   "strict"       allclose(atol 1e-2, rtol 1e-3) on every trial, and an fp32 problem must also
//                  match an fp64 reference within 16x fp32's own error (--precision-check fail):
//                  kernelpro's default, which refuses TF32/BF16 shortcuts of fp32 problems
//   "kernelbench"  KernelBench's and the paper's (§5): allclose(atol 1e-2, rtol 1e-3) on every
//                  trial; the fp64 precision is measured and reported, never failed
//   "custom (atol A, rtol R, precision-check P)" for any other tolerances or policy.
// In every criterion the same trials run (the problem's inputs, their signed and scaled variants)
// and the guards against cheating stay on; only what counts as close enough differs.
std::string CorrectnessCriterion(const EvalOptions& options);
// What a criterion means, in one line for reports ("allclose(atol 1e-2, rtol 1e-3); fp32 within
// 16x of fp32's own error against fp64").
std::string DescribeCorrectness(const EvalOptions& options);
// Sets the fields `name` ("strict" or "kernelbench") stands for; InvalidArgument for other names.
Status ApplyCorrectness(const std::string& name, EvalOptions& options);

// The options as a run stores them for `kernelpro resume`, and back; missing keys keep their
// defaults. unsafe_no_sandbox is never stored: running unconfined is chosen anew by each process.
// The options that name an executor's processes and their world, from `world` into `options`:
// device, GPUs, cache and work directories, sandbox, CUTLASS tree, parallel builds, precompiled
// headers. What stays are the options of one evaluation (trials, timing, tolerances, policies,
// shapes, seed, timeouts, build-only): Executor::WithOptions and the server's requests.
void KeepProcessWorld(const EvalOptions& world, EvalOptions& options);

Json ToJson(const EvalOptions& options);
EvalOptions EvalOptionsFromJson(const Json& json);

}  // namespace kernelpro::eval
