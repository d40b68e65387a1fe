// tensor_core_generation: which tensor-core instructions the candidate's compiled code emits
// (paper appendix B, WGMMAInstructionTool). Counts come from the SASS of the built .so; library
// calls from its dynamic symbols (nm -D): a candidate that calls cuBLAS/cuDNN gets tensor-core
// kernels chosen by the library at run time, which its own SASS cannot show.
//
// Triggers per the paper when tensor-core instructions or library calls are present (reporting
// the generation), and also on a compute-bound (compute or mixed) kernel with neither, where
// CUDA cores do the math. On Hopper (sm_major >= 9) warp-level HMMA reaches only about 63 % of
// the tensor cores' peak; warpgroup MMA (wgmma) is the instruction that reaches it.
#include <algorithm>
#include <string>
#include <vector>

#include "core/text.h"
#include "tools/builtin/system_tools.h"
#include "tools/builtin/system_tools_util.h"

namespace kernelpro::tools {
namespace {

using system_tools::Observe;

const char* const kSassNames[] = {"sass.tensor_wgmma", "sass.tensor_hmma", "sass.tensor_imma",
                                  "sass.tensor_dmma",  "sass.tensor_bmma", "sass.calls_cublas",
                                  "sass.calls_cudnn"};

bool HasSass(const MetricSet& m) {
  return std::all_of(std::begin(kSassNames), std::end(kSassNames),
                     [&](const char* n) { return m.Has(n); });
}

// Kernels named by cuBLAS/cuBLASLt/CUTLASS/cuDNN: Hopper's nvjet_* and sm90_xmma_*, CUTLASS
// instantiations, cuDNN's engines, and the classic *gemm* kernel names.
bool IsLibraryGemmKernel(const std::string& name) {
  const std::string lower = Lower(name);
  for (const char* marker : {"nvjet_", "xmma", "cutlass", "cublas", "cudnn", "gemm"}) {
    if (lower.find(marker) != std::string::npos) return true;
  }
  return false;
}

// What the candidate's SASS and dynamic symbols say about its tensor-core use.
struct TensorCoreEvidence {
  double wgmma = 0, hmma = 0, imma = 0, dmma = 0, bmma = 0;  // tensor-core instructions
  double cublas = 0, cudnn = 0;                              // library functions it calls

  double tensor_instructions() const { return wgmma + hmma + imma + dmma + bmma; }
  bool calls_library() const { return cublas + cudnn > 0; }
  // "WGMMA 0, HMMA 24, IMMA 0, DMMA 0, BMMA 0".
  std::string Mix() const {
    return "WGMMA " + FormatNumber(wgmma) + ", HMMA " + FormatNumber(hmma) + ", IMMA " +
           FormatNumber(imma) + ", DMMA " + FormatNumber(dmma) + ", BMMA " + FormatNumber(bmma);
  }
};

TensorCoreEvidence ReadEvidence(const MetricSet& m) {
  TensorCoreEvidence e;
  e.wgmma = m.Get("sass.tensor_wgmma");
  e.hmma = m.Get("sass.tensor_hmma");
  e.imma = m.Get("sass.tensor_imma");
  e.dmma = m.Get("sass.tensor_dmma");
  e.bmma = m.Get("sass.tensor_bmma");
  e.cublas = m.Get("sass.calls_cublas");
  e.cudnn = m.Get("sass.calls_cudnn");
  return e;
}

// No tensor-core instructions of its own, but cuBLAS/cuDNN calls: the library picks the kernels.
void ExplainLibraryCalls(const TensorCoreEvidence& e, const ToolContext& c, ToolOutput* out) {
  // cuBLAS/cuDNN choose their own kernels; the question is whether the call lets them use
  // tensor cores.
  bool fp32_gemm = false;
  if (c.metrics != nullptr && c.metrics->sass) {
    for (const std::string& call : c.metrics->sass->library_calls) {
      if (call.starts_with("cublasSgemm") || call.starts_with("cublasSgemv")) fp32_gemm = true;
    }
  }
  out->severity = fp32_gemm ? Severity::kMedium : Severity::kLow;
  out->title = "Tensor cores come from a library call (" + FormatNumber(e.cublas + e.cudnn) +
               " cuBLAS/cuDNN symbols)";
  out->summary = "The candidate's own SASS has no tensor-core instructions (" + e.Mix() +
                 "), but it calls " + FormatNumber(e.cublas) + " cuBLAS and " +
                 FormatNumber(e.cudnn) +
                 " cuDNN functions, which select tensor-core kernels at run time" +
                 (fp32_gemm ? "; an fp32 SGEMM only does so when TF32 math is allowed." : ".");
  out->root_cause =
      "The matrix work is delegated to a library, so the tensor-core generation is the "
      "library's choice; it depends on the data type and math mode passed in.";
  if (fp32_gemm) {
    out->recommendations.push_back(
        {"Allow TF32 for the fp32 GEMM (cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH) "
         "or "
         "cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32) if the tolerance permits, or pass "
         "bf16/fp16 "
         "operands",
         "several x on the GEMM: fp32 SGEMM runs on CUDA cores"});
  }
  out->recommendations.push_back(
      {"Keep the library GEMM and fuse the surrounding elementwise work into its epilogue "
       "(cublasLt epilogues) or into one kernel around it",
       "saves the extra passes over the GEMM's output"});
}

// No tensor-core instructions and no library in a compute-bound kernel: CUDA cores do the math.
void ExplainNoTensorCores(const TensorCoreEvidence& e, const std::string& arch, bool hopper,
                          ToolOutput* out) {
  out->severity = Severity::kHigh;
  out->title = "No tensor-core instructions in a compute-bound kernel";
  out->summary = "The kernel is compute-bound but its SASS has no tensor-core instructions (" +
                 e.Mix() + ") and it calls no library: all arithmetic runs on CUDA cores.";
  out->root_cause =
      "Matrix products written as scalar loops compile to FFMA on CUDA cores, which offer a "
      "small fraction of the tensor cores' throughput on " +
      arch + ".";
  out->recommendations = {
      {std::string("If the work is a matrix product or convolution, compute it on tensor cores: ") +
           (hopper ? "warpgroup MMA (wgmma via CUTLASS/CuTe SM90 atoms)"
                   : "mma.sync / WMMA fragments") +
           " in bf16/fp16/tf32, or call cuBLAS/CUTLASS",
       "several x for GEMM-like kernels"},
      {"If fp32 accuracy is needed, use TF32 tensor-core math or split-precision (3xTF32) "
       "instead of FFMA",
       "2-4x over CUDA-core fp32"}};
}

// Only warp-level MMA on Hopper, where warpgroup MMA is the instruction that reaches the peak.
void ExplainWarpLevelMmaOnHopper(const TensorCoreEvidence& e, const std::string& arch,
                                 ToolOutput* out) {
  out->severity = Severity::kHigh;
  out->title = "Warp-level MMA (HMMA/IMMA) on " + arch + ": switch to warpgroup MMA";
  out->summary = "The SASS uses warp-level tensor-core instructions (" + e.Mix() +
                 ") and no warpgroup MMA; on Hopper warp-level MMA tops out near 63 % of the "
                 "tensor cores' peak.";
  out->root_cause =
      "mma.sync / WMMA compile to HMMA or IMMA, the Ampere-generation instructions. Hopper's "
      "full "
      "tensor-core rate needs wgmma.mma_async, issued by a warpgroup of 4 warps with "
      "operands in shared memory, overlapped with TMA loads.";
  out->recommendations = {
      {"Rewrite the main loop with warpgroup MMA: CuTe SM90 GMMA atoms (e.g. "
       "SM90_64x128x16_F32BF16BF16_SS) "
       "or a CUTLASS 3 sm90 GEMM, with shared-memory tiles in the GMMA swizzled layouts",
       "1.3-1.5x on the GEMM part"},
      {"Feed the tiles with TMA (cp.async.bulk.tensor) in a multi-stage mbarrier pipeline",
       "keeps the warpgroup MMA busy; needed to reach the gain above"}};
  out->code_example =
      "using Atom = SM90_64x128x16_F32BF16BF16_SS<GMMA::Major::K, GMMA::Major::K>;\n"
      "TiledMMA mma = make_tiled_mma(Atom{});\n"
      "warpgroup_arrive();\n"
      "cute::gemm(mma, tCrA, tCrB, tCrC);  // wgmma.mma_async\n"
      "warpgroup_commit_batch();\n"
      "warpgroup_wait<0>();\n";
}

// The generation matches the architecture: report it, no switch to recommend.
void ExplainGenerationInUse(const TensorCoreEvidence& e, const std::string& arch, bool hopper,
                            ToolOutput* out) {
  out->severity = Severity::kLow;
  std::string generation = e.wgmma > 0  ? "warpgroup MMA"
                           : e.hmma > 0 ? "warp-level HMMA"
                           : e.imma > 0 ? "IMMA"
                           : e.dmma > 0 ? "DMMA"
                                        : "BMMA";
  out->title = "Tensor cores in use: " + generation + " (" + FormatNumber(e.tensor_instructions()) +
               " instructions)";
  out->summary =
      "The SASS emits " + FormatNumber(e.tensor_instructions()) + " tensor-core instructions (" +
      e.Mix() + "), " +
      (e.wgmma > 0 && hopper ? "the generation that reaches Hopper's full tensor-core rate."
                             : "the right generation for " + arch + ".");
  out->root_cause = "Tensor cores are used with the instruction generation " + arch +
                    " supports best; remaining gains come from keeping them fed, not from the "
                    "instruction choice.";
  out->recommendations = {
      {"Keep this instruction path; if the tensor pipe is not busy, deepen the load pipeline "
       "(more stages, "
       "TMA on Hopper) and overlap the epilogue with the next tile's MMAs",
       "depends on the tensor-pipe utilisation; no instruction change needed"}};
}

class TensorCoreGenerationTool : public ProfilingTool {
 public:
  std::string name() const override { return "tensor_core_generation"; }
  ToolSource source() const override { return ToolSource::kSass; }
  std::string description() const override {
    return "which tensor-core generation the compiled code uses (warpgroup MMA, HMMA, none, or a "
           "library)";
  }
  // The SASS counts are the evidence; without them (a profile of the reference, or of code
  // kernelpro did not build) Analyze falls back to the library kernels ncu profiled, and reports
  // itself skipped when neither exists. So nothing is required up front.
  std::vector<std::string> required_metrics() const override { return {}; }
  std::vector<ThresholdSpec> thresholds() const override {
    return {{"warpgroup_sm_major", 9, "",
             "from this compute capability on, warpgroup MMA is the fast path"}};
  }
  std::vector<roofline::Bottleneck> bottlenecks() const override {
    return {roofline::Bottleneck::kCompute, roofline::Bottleneck::kMixed};
  }
  int priority() const override { return 80; }

  ToolOutput Analyze(const MetricSet& m, const ToolContext& c) const override {
    ToolOutput out = NewOutput(c);
    if (!HasSass(m)) return FromNcuKernelNames(m, c, std::move(out));
    const TensorCoreEvidence e = ReadEvidence(m);
    const double tc = e.tensor_instructions();
    const bool library = e.calls_library();
    const bool hopper = c.sm_major > 0 && c.sm_major >= Threshold(c, "warpgroup_sm_major");
    const bool compute_bound = c.bottleneck && (*c.bottleneck == roofline::Bottleneck::kCompute ||
                                                *c.bottleneck == roofline::Bottleneck::kMixed);
    if (tc <= 0 && !library && !compute_bound) return out;

    out.triggered = true;
    for (const char* name : {"sass.tensor_wgmma", "sass.tensor_hmma", "sass.tensor_imma",
                             "sass.tensor_dmma", "sass.tensor_bmma"}) {
      Observe(out, m, name, "instructions");
    }
    Observe(out, m, "sass.calls_cublas", "symbols");
    Observe(out, m, "sass.calls_cudnn", "symbols");
    Observe(out, m, "sass.instructions", "instructions");
    const std::string arch = c.arch.empty() ? "this GPU" : c.arch;
    if (tc <= 0 && library) {
      ExplainLibraryCalls(e, c, &out);
    } else if (tc <= 0) {
      ExplainNoTensorCores(e, arch, hopper, &out);
    } else if (hopper && (e.hmma > 0 || e.imma > 0) && e.wgmma <= 0) {
      // Warp-level fp16/bf16/tf32 (HMMA) and int8 (IMMA) MMA both have warpgroup forms on Hopper
      // (HGMMA, IGMMA); fp64 DMMA and 1-bit BMMA do not.
      ExplainWarpLevelMmaOnHopper(e, arch, &out);
    } else {
      ExplainGenerationInUse(e, arch, hopper, &out);
    }
    return out;
  }

 private:
  // No SASS view: the library kernels among the profiled launches still tell the path.
  ToolOutput FromNcuKernelNames(const MetricSet& m, const ToolContext& c, ToolOutput out) const {
    std::vector<std::string> library;
    if (c.metrics != nullptr && c.metrics->ncu) {
      for (const profile::NcuKernel& k : c.metrics->ncu->kernels) {
        if (IsLibraryGemmKernel(k.name) &&
            std::find(library.begin(), library.end(), k.name) == library.end()) {
          library.push_back(k.name);
        }
      }
    }
    if (library.empty()) {
      out.skipped = true;
      out.skip_reason =
          "no SASS of the candidate (sass.tensor_*) and no library GEMM kernel among the profiled "
          "launches";
      return out;
    }
    out.triggered = true;
    const char* pipe = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active";
    if (m.Has(pipe)) out.observed.push_back({pipe, m.Get(pipe), "%"});
    // cuBLAS's fp32 SGEMM without TF32 runs SIMT kernels: no tensor cores at all.
    bool simt = std::any_of(library.begin(), library.end(), [](const std::string& n) {
      return n.find("simt") != std::string::npos;
    });
    if (simt || (m.Has(pipe) && m.Get(pipe) < 1.0)) {
      out.severity = Severity::kMedium;
      out.title = "Library GEMM on CUDA cores (" + library.front().substr(0, 48) + ")";
      out.summary = "ncu profiled library GEMM kernels that leave the tensor cores idle" +
                    (m.Has(pipe) ? " (tensor pipe " + FormatQuantity(m.Get(pipe), "%") + ")"
                                 : std::string()) +
                    ": an fp32 GEMM without TF32 runs on CUDA cores.";
      out.root_cause =
          "cuBLAS only uses tensor cores for fp32 data when TF32 math is allowed; otherwise it "
          "picks a "
          "SIMT kernel, bounded by the CUDA cores' fp32 rate.";
      out.recommendations = {
          {"If the tolerance allows, let the GEMM use TF32 (torch.backends.cuda.matmul.allow_tf32, "
           "CUBLAS_COMPUTE_32F_FAST_TF32) or bf16/fp16 operands with fp32 accumulation",
           "several x on the GEMM"},
          {"If exact fp32 is required, exploit structure the library cannot see (e.g. skip "
           "known-zero blocks) "
           "or use split-precision 3xTF32 on tensor cores",
           "up to 2-6x depending on the structure"}};
      return out;
    }
    out.severity = Severity::kLow;
    out.title = "Tensor cores come from library kernels (" + FormatNumber(library.size()) +
                " profiled: " + library.front().substr(0, 48) + ")";
    out.summary =
        "There is no SASS of the candidate's own code, but ncu profiled library GEMM kernels" +
        (m.Has(pipe)
             ? " with the tensor pipe busy " + FormatQuantity(m.Get(pipe), "%") + " of the time"
             : std::string()) +
        ": the library chose a tensor-core kernel for the data type it was given.";
    out.root_cause = "The matrix work runs in cuBLAS/CUTLASS kernels" +
                     std::string(c.sm_major >= Threshold(c, "warpgroup_sm_major")
                                     ? " (on Hopper, nvjet/sm90 kernels use warpgroup MMA)"
                                     : "") +
                     "; the instruction generation is the library's choice.";
    out.recommendations = {
        {"Keep the library GEMM; fuse the elementwise work around it into its epilogue (cublasLt "
         "epilogues, "
         "CUTLASS epilogue visitors) instead of separate kernels",
         "saves the extra passes over the GEMM's output"},
        {"If the tensor pipe is far from busy, check the shapes: pad M/N/K to multiples of 16 (64 "
         "on Hopper) and "
         "keep operands contiguous so the library can pick its fastest tile",
         "up to the gap between the measured and the peak tensor-pipe utilisation"}};
    return out;
  }
};

}  // namespace

std::unique_ptr<ProfilingTool> MakeTensorCoreGenerationTool() {
  return std::make_unique<TensorCoreGenerationTool>();
}

}  // namespace kernelpro::tools
