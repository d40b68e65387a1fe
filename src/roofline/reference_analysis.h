// Stage 1 (paper §3.2.1): the reference analysis that classifies a problem's bottleneck once,
// before any candidate is written, and that later tells how close a timed kernel is to the bound.
//
// Two independent methods (paper, "Tool invocation pattern"):
//
//   theoretical   the worker's analyze step gives the reference's FLOPs and the fewest bytes it
//                 must move; with the GPU's peak for the precision the dominant operation runs
//                 in and its DRAM bandwidth this gives the arithmetic intensity, the ridge point
//                 and a roofline class (rules below);
//   measured      an ncu profile of the reference: SM throughput against compute-memory
//                 throughput (% of peak) of the kernels' duration-weighted aggregate.
//
// A Triton or CUDA program (docs/stage1-programs.md) has no operator count: its minimum bytes
// come from the launcher's tensors, its FLOPs from the PyTorch REFERENCE when it has one, else
// from ncu over its own kernels (confidence "pending" until then; "measured" when only ncu's
// throughput class is left), and its rationale opens with how the class was derived.
//
// Agreement gives confidence "high". On disagreement the theoretical class is kept (it is the
// problem's inherent ceiling, not the current, possibly poor, implementation's) with confidence
// "medium" (one side says mixed or latency: the two are neighbours) or "low" (compute against
// memory), and `rationale` says why. Without a measurement the confidence is "theoretical".
//
// Theoretical classification rules, in this order (defaults in RooflineOptions):
//   latency  the roofline time max(FLOPs / peak, bytes / bandwidth) is below
//            latency_threshold_s (5 µs: a kernel launch and its synchronisation cost a few µs,
//            so no kernel can get near the bound);
//   mixed    intensity within a factor mixed_factor (2) of the ridge point on either side;
//   memory   intensity below ridge / mixed_factor;
//   compute  intensity above ridge * mixed_factor.
// Measured classification rules, on the ncu aggregate (sm = SM throughput %, mem =
// compute-memory throughput %):
//   latency  both below ncu_latency_pct (60 %: ncu's own speed-of-light rule, "below 60 % of peak
//            typically indicates latency issues");
//   mixed    |sm - mem| below ncu_mixed_margin_pct (10 points);
//   compute  sm > mem;  memory  otherwise.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/status.h"
#include "profile/energy_proxy.h"
#include "profile/metrics.h"
#include "roofline/bottleneck.h"
#include "roofline/hardware.h"

namespace kernelpro::roofline {

inline constexpr int kReferenceAnalysisSchemaVersion = 1;

struct RooflineOptions {
  bool allow_tf32 = false;            // fp32 GEMMs/convolutions on TF32 tensor cores
  double latency_threshold_s = 5e-6;  // roofline time below this: latency
  double mixed_factor = 2.0;          // mixed when ridge/f <= intensity <= ridge*f
  double ncu_latency_pct = 60;        // measured: both throughputs below this: latency
  double ncu_mixed_margin_pct = 10;   // measured: throughputs closer than this: mixed
};

struct OperationCount {
  std::string category;  // gemm, convolution, softmax, normalization, elementwise, reduction, other
  std::string op;        // aten operator: "mm", "sigmoid"
  std::int64_t count = 0;
  double flops = 0;
};

// The roofline of one (FLOPs, bytes) pair on one (peak, bandwidth) pair.
struct RooflineBound {
  double arithmetic_intensity = 0;  // FLOP per byte; +inf when bytes == 0
  double ridge_point = 0;           // peak / bandwidth, FLOP per byte
  double compute_time_s = 0;        // flops / peak
  double memory_time_s = 0;         // bytes / bandwidth
  double attainable_time_s = 0;     // max of the two
  double attainable_flops = 0;      // flops / attainable time (FLOP/s)
  Bottleneck bottleneck = Bottleneck::kMemory;
  std::string reason;  // which rule fired, with the numbers
};

RooflineBound ComputeRoofline(double flops, double bytes, double peak_flops, double bytes_per_s,
                              const RooflineOptions& options = {});

// The precision the dominant operation runs in: tensor cores for GEMM/convolution in fp16, bf16,
// fp8, int8 and fp64 (where the GPU has them) and fp32 only with allow_tf32; CUDA cores otherwise.
Precision ChoosePrecision(const std::string& dominant_category, const std::string& dtype,
                          const GpuSpec& gpu, bool allow_tf32, std::string* reason = nullptr);

struct MeasuredThroughput {
  double sm_pct = 0;      // sm__throughput.avg.pct_of_peak_sustained_elapsed
  double memory_pct = 0;  // gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed
  double duration_s = 0;  // summed kernel time of the profiled forward call (0 if unknown)
  int kernel_count = 0;
  Bottleneck bottleneck = Bottleneck::kMemory;
  std::string reason;
};

// The measured class from an ncu view's aggregate; nullopt when it lacks either percentage.
std::optional<MeasuredThroughput> MeasureFromNcu(const profile::NcuView& ncu,
                                                 const RooflineOptions& options = {});

// FLOPs ncu counted over a program's own kernels (docs/stage1-programs.md): per precision,
// add + mul + 2 * fma thread instructions (sass op counters, predicated on). Tensor-core
// instructions are counted but carry no FLOP count in these counters, so where they occur the
// FLOPs are CUDA-core arithmetic only, a lower bound.
struct MeasuredFlops {
  double flops = 0;  // fp32 + fp16 + fp64
  double fp32 = 0, fp16 = 0, fp64 = 0;
  double tensor_instructions = 0;  // sm__inst_executed_pipe_tensor_op_hmma.sum (0 if absent)
  int kernel_count = 0;
};

// The FLOPs in an ncu view; nullopt when it has none of the FP32 op counters.
std::optional<MeasuredFlops> FlopsFromNcu(const profile::NcuView& ncu);

// A Triton or CUDA program given where a problem goes (docs/programs.md); absent for a PyTorch
// problem, whose analysis (and its JSON form) is unchanged.
struct ProgramStageOne {
  std::string kind;            // "triton", "cuda" or "python"
  std::string entry;           // the launcher
  std::string reference;       // the PyTorch REFERENCE file, "" when none
  std::string bytes_source;    // how min_bytes was obtained (the worker's words)
  bool bytes_known = true;     // false: the worker could not size the outputs (cpu, no REFERENCE)
  bool flops_pending = false;  // no FLOPs yet: waiting for ncu over the program's kernels
  std::optional<MeasuredFlops> measured_flops;  // ncu's count, when it was taken
};

struct ReferenceAnalysis {
  int schema_version = kReferenceAnalysisSchemaVersion;
  std::string problem;
  std::string device;       // where the worker ran the reference: "cuda" or "cpu"
  std::string device_name;  // torch's name of the GPU the worker saw ("" on cpu)
  std::string gpu;          // hardware-table key the roofline uses ("h200")
  std::string gpu_name;     // its human name
  std::string precision;    // PrecisionName ("fp32", "fp16_tensor")
  std::string precision_reason;
  std::vector<OperationCount> operations;
  std::string dominant_category;  // of the operation with the most FLOPs
  std::string dominant_dtype;     // "float32"
  double flops = 0;               // counted + estimated
  double flops_estimated = 0;     // elementwise/reduction/softmax/normalisation estimates
  std::string flops_source;       // "torch.utils.flop_counter.FlopCounterMode" or "shape formulas"
  double input_bytes = 0, parameter_bytes = 0, output_bytes = 0;
  double min_bytes = 0;   // inputs + parameters read once, outputs written once
  double peak_flops = 0;  // of `precision` on `gpu`
  double dram_bytes_per_s = 0;
  RooflineBound roofline;                       // intensity, ridge, times, theoretical class
  Bottleneck bottleneck = Bottleneck::kMemory;  // the class downstream stages use (= theoretical)
  std::optional<MeasuredThroughput> measured;
  // The energy proxy of the reference's own ncu profile (profile/energy_proxy.h: the sum over its
  // kernels), the numerator of every candidate's energy_reduction; unset without that profile or
  // with a counter missing from it (then energy_proxy_missing names the counters).
  std::optional<double> energy_proxy_pj;
  // The same with Eq. 4's printed baseline (--energy-proxy paper), for runs that reproduce it.
  std::optional<double> energy_proxy_paper_pj;
  std::vector<std::string> energy_proxy_missing;
  std::string confidence = "theoretical";  // high | medium | low | theoretical
  std::string rationale;
  std::vector<std::string> notes;
  RooflineOptions options;
  std::optional<ProgramStageOne> program;
};

// Builds the theoretical analysis from the worker's `analyze` result.
Result<ReferenceAnalysis> AnalyzeReference(const Json& worker_result, const std::string& problem,
                                           const GpuSpec& gpu, const RooflineOptions& options = {});

// Adds the measured side from an ncu profile of the reference and sets confidence/rationale.
// Without usable ncu numbers the analysis stays theoretical with a note (from `metrics.notes`).
// For a program whose FLOPs are pending (no REFERENCE), the profile is of the program's own
// kernels: their FLOPs (FlopsFromNcu) replace the missing count, the roofline is recomputed
// with the launcher's minimum bytes, and the rationale opens with how the class was derived.
void ValidateWithProfile(ReferenceAnalysis& analysis, const profile::Metrics& metrics);

// Where a timed kernel stands against the roofline: fraction = attainable time / measured time.
struct RooflinePosition {
  double measured_time_s = 0;
  double attainable_time_s = 0;
  double fraction_of_bound = 0;     // 0.71: "reaches 71 % of the attainable bound"
  double achieved_flops = 0;        // FLOP/s
  double achieved_bytes_per_s = 0;  // minimum bytes / measured time
  std::string summary;
};
RooflinePosition PositionAgainstRoofline(const ReferenceAnalysis& analysis, double measured_time_s);

// The reference's energy proxy under `options` (energy_proxy_pj or energy_proxy_paper_pj).
std::optional<double> ReferenceEnergyProxy(const ReferenceAnalysis& analysis,
                                           const profile::EnergyProxyOptions& options);

Json ToJson(const ReferenceAnalysis& analysis);
// The workload fields (operations, FLOPs, bytes) and the program fields (Triton or CUDA programs)
// that the worker's analyze result and a saved ReferenceAnalysis share, under the same names.
void ReadWorkloadFields(const Json& j, ReferenceAnalysis& a);
void ReadProgramFields(const Json& j, ReferenceAnalysis& a);

Result<ReferenceAnalysis> ReferenceAnalysisFromJson(const Json& json);
// A saved `kernelpro analyze --json` file.
Result<ReferenceAnalysis> ReadReferenceAnalysisFile(const std::string& path);

// The human summary `kernelpro analyze` prints.
std::string RenderReferenceAnalysis(const ReferenceAnalysis& analysis);

// Stage 1 for the programmer (paper §3.2.1: the analysis guides the programmer as well as the
// profiling agent): a Markdown list of the class, its confidence, the intensity against the ridge
// point, the bound and what it means for the design, the prompt's "stage1" part.
std::string RenderStageOneBrief(const ReferenceAnalysis& analysis);

}  // namespace kernelpro::roofline
