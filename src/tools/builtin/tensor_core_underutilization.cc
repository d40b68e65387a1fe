// tensor_core_underutilization: a compute-heavy kernel that leaves the tensor pipe idle (paper
// appendix B, TensorCoreUnderutilizationTool: low 10 %, moderate 50 %).
//
// Utilisation is sm__pipe_tensor_op_hmma_cycles_active (on Hopper it includes warpgroup MMA, see
// ncu_catalog.h). The tool runs only when the kernel is compute-heavy: Stage-1 class compute or
// mixed, or, with no class known, SM throughput above memory throughput. Elementwise and
// reduction kernels (softmax, norms) have no matrix product to move onto tensor cores, so when the
// FP32 work per DRAM byte is known and small (below `min_flop_per_byte`) the tool stays quiet.
// When the SASS shows MMA instructions the kernel already uses tensor cores: the finding then
// says they are starved, not absent.
#include "tools/builtin/ncu_common.h"
#include "tools/builtin/ncu_tools.h"

namespace kernelpro::tools {
namespace {

using ncu_tools::Pct;

constexpr const char* kFfma = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum";
constexpr const char* kFadd = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum";
constexpr const char* kFmul = "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum";

class TensorCoreUnderutilizationTool : public ProfilingTool {
 public:
  std::string name() const override { return "tensor_core_underutilization"; }
  ToolSource source() const override { return ToolSource::kNcu; }
  std::string description() const override {
    return "Compute-heavy kernel whose tensor pipe is idle or barely used";
  }
  std::vector<std::string> required_metrics() const override {
    return {std::string(profile::kNcuTensorPipePct), std::string(profile::kNcuSmThroughputPct),
            std::string(profile::kNcuMemoryThroughputPct)};
  }
  std::vector<ThresholdSpec> thresholds() const override {
    return {
        {"low", 10, "%", "tensor-pipe utilisation below this is critical (tensor cores unused)"},
        {"moderate", 50, "%", "below this (and at or above low) is a medium finding"},
        {"min_flop_per_byte", 8, "FLOP/byte",
         "FP32 FLOP per DRAM byte below this means no matrix-like work (tool stays quiet)"}};
  }
  std::vector<roofline::Bottleneck> bottlenecks() const override {
    return {roofline::Bottleneck::kCompute, roofline::Bottleneck::kMixed};
  }
  int priority() const override { return 85; }

  ToolOutput Analyze(const MetricSet& m, const ToolContext& c) const override {
    ToolOutput out = NewOutput(c);
    const double util = m.Get(profile::kNcuTensorPipePct);
    const double sm = m.Get(profile::kNcuSmThroughputPct);
    const double mem = m.Get(profile::kNcuMemoryThroughputPct);
    out.observed = {{std::string(profile::kNcuTensorPipePct), util, "%"},
                    {std::string(profile::kNcuSmThroughputPct), sm, "%"},
                    {std::string(profile::kNcuMemoryThroughputPct), mem, "%"}};
    if (!ncu_tools::ComputeHeavy(m, c))
      return out;  // memory/latency kernels: not this tool's business
    // Matrix-like work: FP32 FLOP per DRAM byte, when both are known.
    std::optional<double> intensity;
    if (m.Has(kFfma) && m.Has(profile::kNcuDramBytesRead) && m.Has(profile::kNcuDramBytesWrite)) {
      double flop = 2 * m.Get(kFfma) + m.Get(kFadd) + m.Get(kFmul);
      double bytes = m.Get(profile::kNcuDramBytesRead) + m.Get(profile::kNcuDramBytesWrite);
      if (bytes > 0) intensity = flop / bytes;
    }
    if (intensity) out.observed.push_back({"fp32_flop_per_dram_byte", *intensity, "FLOP/byte"});
    const double mma = m.Get("sass.tensor_hmma") + m.Get("sass.tensor_wgmma") +
                       m.Get("sass.tensor_imma") + m.Get("sass.tensor_dmma");
    const bool has_mma = mma > 0;
    // FP32 intensity says nothing about a kernel whose math already runs as MMA.
    if (!has_mma && intensity && *intensity < Threshold(c, "min_flop_per_byte")) return out;
    const double low = Threshold(c, "low");
    const double moderate = Threshold(c, "moderate");
    if (util >= moderate) return out;
    out.triggered = true;
    const bool hopper = c.sm_major >= 9;
    out.severity = util < low ? Severity::kCritical : Severity::kMedium;
    if (has_mma) out.observed.push_back({"sass.tensor_mma_instructions", mma, "instructions"});
    if (has_mma) {
      out.title = "Tensor cores are used but mostly idle (" + Pct(util) + " busy)";
      out.summary = "The kernel issues MMA instructions, yet the tensor pipe is busy only " +
                    Pct(util) + " of the time (moderate line " + Pct(moderate) +
                    "); SM throughput " + Pct(sm) + ", memory throughput " + Pct(mem) + ".";
      out.root_cause =
          "The tensor cores wait for operands: tiles are loaded from global memory or shared "
          "memory too "
          "slowly (no multi-stage pipelining, narrow loads, bank conflicts), so each MMA is "
          "separated by "
          "long data-movement phases.";
      out.recommendations = {
          {"Stage A/B tiles through shared memory with a multi-stage cp.async (or TMA on Hopper) "
           "pipeline "
           "so MMAs never wait for loads",
           "1.5-3x"},
          {"Enlarge the per-warp tile (more MMAs per loaded byte) and load fragments with ldmatrix",
           "1.2-2x"},
      };
      if (hopper && m.Get("sass.tensor_wgmma") == 0) {
        out.recommendations.push_back(
            {"On Hopper, move from warp-level mma.sync/WMMA to warpgroup MMA "
             "(wgmma.mma_async), which HMMA cannot match in peak throughput",
             "up to 1.5x of the tensor peak"});
      }
    } else {
      out.title =
          util < low ? "Tensor cores unused by a compute-heavy kernel" : "Tensor cores underused";
      out.summary = "Tensor-pipe utilisation is " + Pct(util) + " (critical below " + Pct(low) +
                    ", medium below " + Pct(moderate) + ") while SM throughput is " + Pct(sm) +
                    ": the arithmetic runs on the "
                    "FP32 CUDA cores.";
      if (intensity)
        out.summary += " The kernel does " + FormatNumber(*intensity) + " FP32 FLOP per DRAM byte.";
      out.root_cause =
          "Matrix-multiply-like arithmetic is done with scalar FFMA on CUDA cores. Tensor cores "
          "deliver "
          "far higher throughput (on H100/H200 roughly 15x the FP32 CUDA-core rate in BF16), and "
          "the "
          "kernel leaves them idle.";
      out.recommendations = {
          {"Call cuBLAS/cuBLASLt (or a CUTLASS GEMM) for the matrix product and fuse the rest as "
           "an epilogue",
           "5-20x on the GEMM part"},
          {hopper ? "If writing the kernel by hand, use warpgroup MMA (wgmma.mma_async) with "
                    "TMA-loaded "
                    "shared-memory tiles on Hopper; mma.sync/WMMA otherwise"
                  : "If writing the kernel by hand, use WMMA or mma.sync on shared-memory tiles",
           "5-15x"},
          {"Use TF32 (or BF16/FP16 inputs with FP32 accumulation) if the accuracy budget allows; "
           "torch.backends.cuda.matmul.allow_tf32 for library calls",
           "required for tensor cores on FP32 data"},
      };
      out.code_example =
          "#include <mma.h>\nusing namespace nvcuda;\n"
          "wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;\n"
          "wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;\n"
          "wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;\n"
          "wmma::fill_fragment(acc, 0.f);\n"
          "for (int k = 0; k < K; k += 16) {\n"
          "  wmma::load_matrix_sync(a, A_tile + k, lda);\n"
          "  wmma::load_matrix_sync(b, B_tile + k, ldb);\n"
          "  wmma::mma_sync(acc, a, b, acc);\n}";
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<ProfilingTool> MakeTensorCoreUnderutilizationTool() {
  return std::make_unique<TensorCoreUnderutilizationTool>();
}

}  // namespace kernelpro::tools
