// Counter-verified work (issue 34): what a candidate's ncu counters say it did, against what
// Stage 1 says the problem needs. Two ratios:
//
//   read share   DRAM bytes read (dram__bytes_read.sum, summed over the profiled kernels of one
//                forward call) / the problem's minimum input bytes (inputs + parameters, each
//                read once). Below 1 only when data came from somewhere other than DRAM: ncu
//                replays every kernel with its caches flushed (`--cache-control all`, which
//                NcuArgv passes explicitly), so a kernel that reads its inputs reads them from
//                DRAM. Reading far less means the inputs stayed in L2 (caches not flushed), the
//                output does not depend on part of the inputs, or the kernel skipped work.
//   FLOP share   CUDA-core FLOPs executed (roofline::FlopsFromNcu: add + mul + 2 * fma thread
//                instructions per precision) / the problem's counted FLOPs (Stage 1's `flops`
//                less `flops_estimated`: GEMM and convolution counts are exact, per-element
//                estimates of activations or reductions are not and use ops such as MUFU or
//                FMNMX that the counters do not count). Tensor-core instructions carry no FLOP
//                count in these counters, so the share is not computed when the SASS shows
//                tensor-core instructions, nor without a SASS view to tell.
//
// Either ratio is left unset, with a reason, when its counters or its Stage-1 number are
// missing, or when ncu may not have seen every kernel of the forward call: ncu profiles only the
// candidate's own entry kernels, so a GPU timeline must be there and must count no more launches
// than ncu kept. Pure functions; safe from any thread.
#pragma once

#include <optional>
#include <string>

#include "profile/metrics.h"
#include "roofline/reference_analysis.h"
#include "tools/tool.h"

namespace kernelpro::tools {

// Stage 1's yardstick: inputs + parameters and the FLOPs with their estimated part.
ProblemWork ProblemWorkOf(const roofline::ReferenceAnalysis& analysis);

struct WorkCheck {
  // DRAM bytes against the minimum input bytes.
  std::optional<double> bytes_read;  // dram__bytes_read.sum over the kernels ncu kept
  double min_input_bytes = 0;        // Stage 1
  std::optional<double> read_share;  // bytes_read / min_input_bytes
  std::string read_unavailable;      // why read_share is unset ("" when set)
  // Executed FLOPs against the problem's counted FLOPs.
  std::optional<double> executed_flops;  // CUDA-core FLOPs (FlopsFromNcu)
  double counted_flops = 0;              // Stage 1's flops - flops_estimated
  double estimated_flops = 0;            // Stage 1's flops_estimated (left out of the share)
  bool tensor_core_work = false;         // the candidate's SASS has tensor-core instructions
  std::optional<double> flop_share;      // executed_flops / counted_flops
  std::string flops_unavailable;         // why flop_share is unset ("" when set)
};

// The check of one profiled candidate. Shares are computed whatever the problem's size; the
// verified_work tool applies its own floors before it speaks.
WorkCheck CheckWork(const profile::Metrics& metrics, const ProblemWork& work);

// One line for the user: "verified work: read 268 MB from DRAM = 100 % of the 268 MB minimum
// inputs; executed 17.2 GFLOP on CUDA cores = 100 % of the 17.2 GFLOP counted", with the reason in
// place of a share that could not be computed.
std::string RenderWorkCheck(const WorkCheck& check);

Json ToJson(const WorkCheck& check);

// 268435456 -> "268 MB" (unit "B"), 1.7e10 -> "17.2 GFLOP": three significant digits, SI prefixes.
std::string SiQuantity(double value, const std::string& unit);

}  // namespace kernelpro::tools
