#include "roofline/reference_analysis.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "core/text.h"
#include "profile/energy_proxy.h"
#include "profile/ncu_catalog.h"

namespace kernelpro::roofline {
namespace {

std::string Si(double value, const std::string& unit) { return FormatSi(value, unit); }
std::string Time(double seconds) { return FormatDuration(seconds); }

std::string Pct(double fraction) { return FormatFixed(fraction * 100, 0) + " %"; }

std::string Name(Bottleneck b) { return std::string(BottleneckName(b)); }

}  // namespace

RooflineBound ComputeRoofline(double flops, double bytes, double peak_flops, double bytes_per_s,
                              const RooflineOptions& options) {
  RooflineBound r;
  r.ridge_point = bytes_per_s > 0 ? peak_flops / bytes_per_s : 0;
  r.arithmetic_intensity = bytes > 0 ? flops / bytes : std::numeric_limits<double>::infinity();
  r.compute_time_s = peak_flops > 0 ? flops / peak_flops : 0;
  r.memory_time_s = bytes_per_s > 0 ? bytes / bytes_per_s : 0;
  r.attainable_time_s = std::max(r.compute_time_s, r.memory_time_s);
  r.attainable_flops = r.attainable_time_s > 0 ? flops / r.attainable_time_s : 0;
  const double f = options.mixed_factor;
  const std::string ai = FormatFixed(r.arithmetic_intensity, 2) + " FLOP/B";
  const std::string ridge = FormatFixed(r.ridge_point, 2) + " FLOP/B";
  if (r.attainable_time_s < options.latency_threshold_s) {
    r.bottleneck = Bottleneck::kLatency;
    r.reason = "the roofline time " + Time(r.attainable_time_s) + " is below " +
               Time(options.latency_threshold_s) +
               ": launch and synchronisation overheads (a few us per kernel) dominate";
  } else if (r.arithmetic_intensity >= r.ridge_point / f &&
             r.arithmetic_intensity <= r.ridge_point * f) {
    r.bottleneck = Bottleneck::kMixed;
    r.reason =
        "intensity " + ai + " is within " + FormatFixed(f, 1) + "x of the ridge point " + ridge;
  } else if (r.arithmetic_intensity < r.ridge_point) {
    r.bottleneck = Bottleneck::kMemory;
    r.reason = "intensity " + ai + " is " +
               FormatFixed(r.ridge_point / std::max(r.arithmetic_intensity, 1e-300), 1) +
               "x below the ridge point " + ridge;
  } else {
    r.bottleneck = Bottleneck::kCompute;
    r.reason = std::isinf(r.arithmetic_intensity)
                   ? "no bytes to move: only arithmetic"
                   : "intensity " + ai + " is " +
                         FormatFixed(r.arithmetic_intensity / r.ridge_point, 1) +
                         "x the ridge point " + ridge;
  }
  return r;
}

Precision ChoosePrecision(const std::string& dominant_category, const std::string& dtype,
                          const GpuSpec& gpu, bool allow_tf32, std::string* reason) {
  const bool matrix = dominant_category == "gemm" || dominant_category == "convolution";
  std::string why;
  Precision p = Precision::kFp32;
  if (matrix) {
    const std::string op = "the dominant operation is a " + dominant_category + " in " + dtype;
    if (dtype == "float16" && gpu.fp16_tensor > 0) {
      p = Precision::kFp16Tensor, why = op;
    } else if (dtype == "bfloat16" && gpu.bf16_tensor > 0) {
      p = Precision::kBf16Tensor, why = op;
    } else if (dtype.starts_with("float8")) {
      if (gpu.fp8_tensor > 0) {
        p = Precision::kFp8Tensor, why = op;
      } else {
        p = Precision::kFp16Tensor,
        why = op + "; " + gpu.key + " has no fp8 tensor cores: fp16 rate";
      }
    } else if ((dtype == "int8" || dtype == "uint8") && gpu.int8_tensor > 0) {
      p = Precision::kInt8Tensor, why = op;
    } else if (dtype == "float64") {
      p = gpu.fp64_tensor > 0 ? Precision::kFp64Tensor : Precision::kFp64, why = op;
    } else if (allow_tf32 && gpu.tf32_tensor > 0) {
      p = Precision::kTf32Tensor, why = op + " and TF32 is allowed";
    } else {
      p = Precision::kFp32, why = op + " (TF32 not allowed: exact fp32 math on CUDA cores)";
    }
  } else {
    if (dtype == "float16")
      p = Precision::kFp16;
    else if (dtype == "bfloat16")
      p = Precision::kBf16;
    else if (dtype == "float64")
      p = Precision::kFp64;
    why = "the dominant operation (" +
          (dominant_category.empty() ? std::string("none") : dominant_category) + ", " +
          (dtype.empty() ? std::string("no floating-point data") : dtype) + ") runs on CUDA cores";
  }
  if (reason) *reason = why;
  return p;
}

std::optional<MeasuredThroughput> MeasureFromNcu(const profile::NcuView& ncu,
                                                 const RooflineOptions& options) {
  const auto& values = ncu.aggregate.values;
  auto sm = values.find(std::string(profile::kNcuSmThroughputPct));
  auto mem = values.find(std::string(profile::kNcuMemoryThroughputPct));
  if (sm == values.end() || mem == values.end()) return std::nullopt;
  MeasuredThroughput m;
  m.sm_pct = sm->second;
  m.memory_pct = mem->second;
  m.duration_s = ncu.aggregate.duration_ns() * 1e-9;
  m.kernel_count = static_cast<int>(ncu.kernels.size());
  const std::string numbers =
      "SM " + FormatFixed(m.sm_pct, 1) + " %, memory " + FormatFixed(m.memory_pct, 1) + " %";
  if (m.sm_pct < options.ncu_latency_pct && m.memory_pct < options.ncu_latency_pct) {
    m.bottleneck = Bottleneck::kLatency;
    m.reason = numbers + ": both below " + FormatFixed(options.ncu_latency_pct, 0) + " % of peak";
  } else if (std::fabs(m.sm_pct - m.memory_pct) < options.ncu_mixed_margin_pct) {
    m.bottleneck = Bottleneck::kMixed;
    m.reason = numbers + ": within " + FormatFixed(options.ncu_mixed_margin_pct, 0) +
               " points of each other";
  } else if (m.sm_pct > m.memory_pct) {
    m.bottleneck = Bottleneck::kCompute;
    m.reason = numbers + ": SM throughput leads";
  } else {
    m.bottleneck = Bottleneck::kMemory;
    m.reason = numbers + ": memory throughput leads";
  }
  return m;
}

std::optional<MeasuredFlops> FlopsFromNcu(const profile::NcuView& ncu) {
  const auto& values = ncu.aggregate.values;
  auto count = [&](const char* op, bool* found) {
    auto it = values.find(std::string("smsp__sass_thread_inst_executed_op_") + op + "_pred_on.sum");
    if (it == values.end()) return 0.0;
    *found = true;
    return it->second;
  };
  // add + mul + 2 * fma per precision: what ncu's own roofline charts count.
  auto flops = [&](const char* add, const char* mul, const char* fma, bool* found) {
    return count(add, found) + count(mul, found) + 2 * count(fma, found);
  };
  bool fp32_found = false, other_found = false;
  MeasuredFlops f;
  f.fp32 = flops("fadd", "fmul", "ffma", &fp32_found);
  if (!fp32_found) return std::nullopt;
  f.fp16 = flops("hadd", "hmul", "hfma", &other_found);
  f.fp64 = flops("dadd", "dmul", "dfma", &other_found);
  f.flops = f.fp32 + f.fp16 + f.fp64;
  if (auto it = values.find("sm__inst_executed_pipe_tensor_op_hmma.sum"); it != values.end())
    f.tensor_instructions = it->second;
  f.kernel_count = static_cast<int>(ncu.kernels.size());
  return f;
}

namespace {

// "the program's 3 kernels", "the program's kernel".
std::string ProgramKernels(int count) {
  return count == 1 ? std::string("the program's kernel")
                    : "the program's " + std::to_string(count) + " kernels";
}

// How a program's class was derived: "memory-bound at 0.80 FLOP/B: FLOPs measured by ncu over
// the program's 3 kernels (2.10 GFLOP), bytes from the launcher's tensors (268.44 MB)".
std::string ProgramDerivation(const ReferenceAnalysis& a) {
  const ProgramStageOne& p = *a.program;
  std::string flops;
  if (p.flops_pending) {
    flops = "FLOPs not yet measured (the program's kernels are opaque to torch's operator counter)";
  } else if (p.measured_flops) {
    flops = "FLOPs measured by ncu over " + ProgramKernels(p.measured_flops->kernel_count) + " (" +
            Si(a.flops, "FLOP") + ")";
  } else {
    flops = "FLOPs counted on the PyTorch reference (" + Si(a.flops, "FLOP") + ")";
  }
  std::string bytes = p.bytes_known
                          ? "bytes from the launcher's tensors (" + Si(a.min_bytes, "B") + ")"
                          : "bytes unknown (" + p.bytes_source + ")";
  std::string head;
  if (!p.bytes_known) {
    head = "no theoretical class";
  } else if (p.flops_pending) {
    head = Name(a.roofline.bottleneck) + "-bound on the minimum bytes alone";
  } else {
    head = Name(a.roofline.bottleneck) + "-bound";
    if (!std::isinf(a.roofline.arithmetic_intensity))
      head += " at " + FormatFixed(a.roofline.arithmetic_intensity, 2) + " FLOP/B";
  }
  return head + ": " + flops + ", " + bytes;
}

}  // namespace

Result<ReferenceAnalysis> AnalyzeReference(const Json& worker_result, const std::string& problem,
                                           const GpuSpec& gpu, const RooflineOptions& options) {
  if (!worker_result.is_object())
    return Status::InvalidArgument("the analyze step returned no object");
  std::string status = JsonGet<std::string>(worker_result, "status", "ok");
  if (status != "ok") {
    return Status::InvalidArgument(status + ": " +
                                   JsonGet<std::string>(worker_result, "message", ""));
  }
  ReferenceAnalysis a;
  a.options = options;
  a.problem = problem;
  ReadWorkloadFields(worker_result, a);
  ReadProgramFields(worker_result, a);
  a.gpu = gpu.key;
  a.gpu_name = gpu.name;
  for (const Json& note : JsonGet<Json>(worker_result, "flops_notes", Json::array())) {
    if (note.is_string()) a.notes.push_back(note.get<std::string>());
  }
  if (JsonGet<bool>(worker_result, "tf32_allowed", false) && !options.allow_tf32) {
    a.notes.push_back(
        "torch allows TF32 matmuls in this environment, but the roofline assumes exact fp32 "
        "(pass --allow-tf32 to use the TF32 tensor-core peak)");
  }

  Precision precision = ChoosePrecision(a.dominant_category, a.dominant_dtype, gpu,
                                        options.allow_tf32, &a.precision_reason);
  a.precision = std::string(PrecisionName(precision));
  a.peak_flops = PeakFlops(gpu, precision);
  a.dram_bytes_per_s = gpu.dram_bytes_per_s;
  a.roofline = ComputeRoofline(a.flops, a.min_bytes, a.peak_flops, a.dram_bytes_per_s, options);
  a.bottleneck = a.roofline.bottleneck;
  a.confidence = "theoretical";
  a.rationale = "theoretical roofline only (no ncu measurement)";
  if (a.flops_estimated > 0 && a.flops > 0 && a.flops_estimated / a.flops > 0.5) {
    a.notes.push_back("most FLOPs are per-element estimates; the intensity is approximate");
  }
  if (a.program) {
    if (a.program->flops_pending || !a.program->bytes_known) {
      a.confidence = "pending";
      a.rationale = ProgramDerivation(a) + ". Waiting for the measured side: ncu over " +
                    "the program's own kernels gives " +
                    (a.program->flops_pending ? "its FLOPs and " : "") + "the measured class";
    } else {
      a.rationale = ProgramDerivation(a) + ". " + a.rationale;
    }
  }
  return a;
}

namespace {

// A program's FLOPs from ncu over its own kernels, when the worker had none (no REFERENCE):
// the roofline is recomputed with them and the launcher's minimum bytes.
void MeasureProgramFlops(ReferenceAnalysis& a, const profile::NcuView& ncu) {
  ProgramStageOne& p = *a.program;
  std::optional<MeasuredFlops> f = FlopsFromNcu(ncu);
  if (!f) {
    if (p.flops_pending)
      a.notes.push_back(
          "ncu gave no FP32 op counts for the program's kernels: its FLOPs stay "
          "unknown");
    return;
  }
  const std::string kernels = ProgramKernels(f->kernel_count);
  if (!p.flops_pending) {
    a.notes.push_back("ncu counted " + Si(f->flops, "FLOP") + " of CUDA-core arithmetic over " +
                      kernels + "; the class uses the reference's count");
    return;
  }
  p.measured_flops = f;
  if (f->tensor_instructions > 0) {
    a.notes.push_back(
        kernels + " issued " + Si(f->tensor_instructions, "") +
        " tensor-core instructions whose FLOPs ncu's counters here do not give: the measured "
        "FLOPs are CUDA-core arithmetic only, a lower bound on the intensity");
    if (a.dominant_category.empty()) {
      // The peak that bounds a program on tensor cores is theirs, not the CUDA cores'.
      if (auto gpu = FindGpu(a.gpu); gpu.ok()) {
        Precision precision =
            ChoosePrecision("gemm", a.dominant_dtype, *gpu, a.options.allow_tf32, nullptr);
        a.precision = std::string(PrecisionName(precision));
        a.precision_reason =
            "the program's kernels run on tensor cores (ncu) with " + a.dominant_dtype + " data";
        a.peak_flops = PeakFlops(*gpu, precision);
      }
    }
    if (f->flops == 0) return;  // nothing countable: the FLOPs stay unknown
  }
  p.flops_pending = false;
  a.flops = f->flops;
  a.flops_estimated = 0;
  a.flops_source = "ncu over " + kernels + ": add + mul + 2 x fma thread instructions";
  if (p.bytes_known) {
    a.roofline = ComputeRoofline(a.flops, a.min_bytes, a.peak_flops, a.dram_bytes_per_s, a.options);
    a.bottleneck = a.roofline.bottleneck;
  }
}

void ValidateMeasured(ReferenceAnalysis& a, const profile::Metrics& metrics);

}  // namespace

void ValidateWithProfile(ReferenceAnalysis& a, const profile::Metrics& metrics) {
  const profile::EnergyProxyEstimate energy = profile::ComputeEnergyProxy(metrics);
  if (energy.proxy) a.energy_proxy_pj = energy.proxy->total_pj;
  const profile::EnergyProxyEstimate paper =
      profile::ComputeEnergyProxy(metrics, profile::EnergyProxyOptionsNamed("paper"));
  if (paper.proxy) a.energy_proxy_paper_pj = paper.proxy->total_pj;
  a.energy_proxy_missing = energy.missing;
  if (!a.program) {
    ValidateMeasured(a, metrics);
    return;
  }
  if (metrics.ncu) MeasureProgramFlops(a, *metrics.ncu);
  ValidateMeasured(a, metrics);
  const ProgramStageOne& p = *a.program;
  if (!p.flops_pending && p.bytes_known) {
    a.rationale = ProgramDerivation(a) + ". " + a.rationale;
    return;
  }
  // No theoretical class to keep: ncu's measured one is all there is.
  if (a.measured) {
    a.bottleneck = a.measured->bottleneck;
    a.confidence = "measured";
    a.rationale = ProgramDerivation(a) +
                  ". No theoretical class: the class is ncu's measured "
                  "one (" +
                  a.measured->reason + ")";
  } else {
    a.confidence = "pending";
    a.rationale = ProgramDerivation(a) + ". No class: neither the FLOPs nor a measurement";
  }
}

namespace {

void ValidateMeasured(ReferenceAnalysis& a, const profile::Metrics& metrics) {
  std::optional<MeasuredThroughput> m;
  if (metrics.ncu) m = MeasureFromNcu(*metrics.ncu, a.options);
  if (!m) {
    std::string why = "no ncu throughput percentages for the reference";
    for (const std::string& note : metrics.notes) {
      if (note.starts_with("ncu")) {
        why = note;
        break;
      }
    }
    a.notes.push_back(why + "; the classification is theoretical only");
    return;
  }
  a.measured = m;
  const Bottleneck theory = a.roofline.bottleneck;
  const Bottleneck seen = m->bottleneck;
  a.bottleneck = theory;  // the theoretical bound always wins
  if (seen == theory) {
    a.confidence = "high";
    a.rationale = "theoretical (" + a.roofline.reason + ") and measured (" + m->reason +
                  ") both say " + Name(theory);
    return;
  }
  const bool neighbours = seen == Bottleneck::kMixed || theory == Bottleneck::kMixed ||
                          seen == Bottleneck::kLatency || theory == Bottleneck::kLatency;
  a.confidence = neighbours ? "medium" : "low";
  std::string why;
  if (seen == Bottleneck::kLatency) {
    why =
        "the reference's kernels saturate neither compute nor memory (launch overheads, little "
        "parallelism or poor occupancy in the current implementation)";
  } else if (theory == Bottleneck::kCompute && seen == Bottleneck::kMemory) {
    why =
        "the reference's kernels move far more data than the minimum (no reuse or extra passes), "
        "so a "
        "better kernel can become compute-bound";
  } else if (theory == Bottleneck::kMemory && seen == Bottleneck::kCompute) {
    why =
        "the reference's kernels do more arithmetic per byte than the problem needs "
        "(recomputation, "
        "expensive instructions or an implementation that does not stream at bandwidth)";
  } else if (theory == Bottleneck::kLatency) {
    why =
        "the problem is too small for either roof to matter; the measured utilisation is of one "
        "short launch";
  } else {
    why = "the implementation leans on one unit more than the problem's intensity implies";
  }
  a.rationale = "theoretical says " + Name(theory) + " (" + a.roofline.reason + "), ncu says " +
                Name(seen) + " (" + m->reason + "): " + why +
                ". Keeping the theoretical class: it reflects the "
                "problem's inherent ceiling, not the current implementation";
}

}  // namespace

std::optional<double> ReferenceEnergyProxy(const ReferenceAnalysis& a,
                                           const profile::EnergyProxyOptions& options) {
  return options.baseline == profile::CoalescedBaseline::kPaper ? a.energy_proxy_paper_pj
                                                                : a.energy_proxy_pj;
}

RooflinePosition PositionAgainstRoofline(const ReferenceAnalysis& a, double measured_time_s) {
  RooflinePosition p;
  p.measured_time_s = measured_time_s;
  p.attainable_time_s = a.roofline.attainable_time_s;
  if (measured_time_s > 0) {
    p.fraction_of_bound = p.attainable_time_s / measured_time_s;
    p.achieved_flops = a.flops / measured_time_s;
    p.achieved_bytes_per_s = a.min_bytes / measured_time_s;
  }
  p.summary = "reaches " + Pct(p.fraction_of_bound) + " of the attainable bound (" +
              Time(measured_time_s) + " measured, " + Time(p.attainable_time_s) + " roofline; " +
              Si(p.achieved_flops, "FLOP/s") + ", " + Si(p.achieved_bytes_per_s, "B/s") + ")";
  if (p.fraction_of_bound > 1.0) {
    // Faster than the bound of the reference's own operations: the kernel does less work than
    // the reference (skips zeros, fuses away traffic, reuses results), so the FLOP/s and B/s
    // above are the reference's work per second, not the kernel's.
    p.summary += "; beyond 100 % the kernel does less work than the reference's operations";
  }
  return p;
}

std::string RenderReferenceAnalysis(const ReferenceAnalysis& a) {
  std::ostringstream out;
  auto row = [&](const char* label, const std::string& text) {
    std::string l = label;
    out << l << std::string(l.size() < 12 ? 12 - l.size() : 1, ' ') << text << "\n";
  };
  row("problem", a.problem);
  if (a.program) {
    row("program",
        a.program->kind + " program, entry " + a.program->entry +
            (a.program->reference.empty() ? std::string("; no PyTorch reference")
                                          : "; reference " + a.program->reference + " (PyTorch)"));
  }
  std::string gpu = a.gpu_name + " [" + a.gpu + "]";
  if (a.device == "cuda" && !a.device_name.empty())
    gpu += ", detected as \"" + a.device_name + "\"";
  if (a.device != "cuda") gpu += ", reference run on " + a.device;
  row("gpu", gpu);
  std::string ops;
  for (const OperationCount& op : a.operations) {
    if (!ops.empty()) ops += "\n            ";
    ops += op.category + ": " + op.op + " x" + std::to_string(op.count) +
           (op.flops > 0 ? " (" + Si(op.flops, "FLOP") + ")" : std::string());
  }
  row("operations", ops.empty() ? "none detected" : ops);
  std::string flops = Si(a.flops, "FLOP");
  if (a.flops > 0) {
    flops += " (" + a.flops_source +
             (a.flops_estimated > 0 ? "; " + Si(a.flops_estimated, "FLOP") + " estimated" : "") +
             ")";
  }
  if (a.program && a.program->flops_pending) flops = "unknown (" + a.flops_source + ")";
  row("flops", flops);
  if (a.program && !a.program->bytes_known) {
    row("min bytes", a.program->bytes_source);
  } else {
    row("min bytes", Si(a.min_bytes, "B") + " (inputs " + Si(a.input_bytes, "B") + ", parameters " +
                         Si(a.parameter_bytes, "B") + ", outputs " + Si(a.output_bytes, "B") + ")");
    if (a.program) row("bytes from", a.program->bytes_source);
  }
  std::string precision =
      a.precision.empty() ? "" : DescribePrecision(*ParsePrecision(a.precision));
  row("precision", precision + ", peak " + Si(a.peak_flops, "FLOP/s") + ": " + a.precision_reason);
  const RooflineBound& r = a.roofline;
  row("intensity", (std::isinf(r.arithmetic_intensity) ? std::string("inf")
                                                       : FormatFixed(r.arithmetic_intensity, 2)) +
                       " FLOP/B; ridge point " + FormatFixed(r.ridge_point, 2) + " FLOP/B (" +
                       Si(a.peak_flops, "FLOP/s") + " / " + Si(a.dram_bytes_per_s, "B/s") + ")");
  row("roofline", Time(r.attainable_time_s) + " attainable (compute " + Time(r.compute_time_s) +
                      ", memory " + Time(r.memory_time_s) + "), " +
                      Si(r.attainable_flops, "FLOP/s"));
  row("class", Name(a.bottleneck) + "-bound: " + r.reason);
  if (a.measured) {
    std::string m = "ncu, " + std::to_string(a.measured->kernel_count) +
                    " kernel(s): " + Name(a.measured->bottleneck) + " (" + a.measured->reason + ")";
    if (a.measured->duration_s > 0)
      m += "; the reference " + PositionAgainstRoofline(a, a.measured->duration_s).summary;
    row("measured", m);
  }
  row("confidence", a.confidence + ": " + a.rationale);
  for (const std::string& note : a.notes) row("note", note);
  return out.str();
}

namespace {

// What a class asks of a design, in one sentence.
const char* DesignAdvice(Bottleneck b) {
  switch (b) {
    case Bottleneck::kMemory:
      return "Memory traffic sets the time, not arithmetic: move each byte once (fuse, keep "
             "intermediates in registers or shared memory), use wide coalesced accesses, and "
             "spend FLOPs freely where they save bytes.";
    case Bottleneck::kCompute:
      return "Arithmetic sets the time: run the dominant operation on the fastest units for its "
             "precision (tensor cores where it allows), keep them fed by tiling and pipelining; "
             "memory traffic matters less.";
    case Bottleneck::kLatency:
      return "The work is too small to fill the GPU: launch overhead and dependent steps set the "
             "time, so launch fewer kernels (fuse), avoid host synchronisation and keep enough "
             "blocks for every SM.";
    case Bottleneck::kMixed:
      return "Neither roof dominates: cut bytes and FLOPs together; fusion pays twice.";
  }
  return "";
}

}  // namespace

std::string RenderStageOneBrief(const ReferenceAnalysis& a) {
  std::ostringstream out;
  const RooflineBound& r = a.roofline;
  out << "- Class: " << Name(a.bottleneck) << "-bound, confidence " << a.confidence << ".\n";
  auto parsed_precision = ParsePrecision(a.precision);
  const std::string precision =
      parsed_precision.ok() ? DescribePrecision(*parsed_precision) : a.precision;
  const bool flops_known = !(a.program && a.program->flops_pending);
  const bool bytes_known = !(a.program && !a.program->bytes_known);
  if (flops_known && bytes_known) {
    out << "- Arithmetic intensity "
        << (std::isinf(r.arithmetic_intensity) ? std::string("inf")
                                               : FormatFixed(r.arithmetic_intensity, 2))
        << " FLOP/B against a ridge point of " << FormatFixed(r.ridge_point, 2) << " FLOP/B ("
        << a.gpu_name << ", " << precision << ": " << Si(a.peak_flops, "FLOP/s") << " over "
        << Si(a.dram_bytes_per_s, "B/s") << ").\n";
    out << "- Work: " << Si(a.flops, "FLOP") << " and at least " << Si(a.min_bytes, "B")
        << " moved; the bound is " << Time(r.attainable_time_s) << " (compute "
        << Time(r.compute_time_s) << ", memory " << Time(r.memory_time_s) << ").\n";
  } else {
    out << "- Work: " << (flops_known ? Si(a.flops, "FLOP") : std::string("FLOPs not counted"))
        << "; "
        << (bytes_known ? "at least " + Si(a.min_bytes, "B") + " moved"
                        : std::string("bytes not sized"))
        << " (" << (a.program ? a.program->bytes_source : std::string()) << ").\n";
  }
  if (a.measured) {
    out << "- Measured on the reference (ncu, " << a.measured->kernel_count << " kernel"
        << (a.measured->kernel_count == 1 ? "" : "s") << "): " << Name(a.measured->bottleneck)
        << "-bound";
    if (a.measured->duration_s > 0 && flops_known && bytes_known) {
      out << "; it " << PositionAgainstRoofline(a, a.measured->duration_s).summary;
    }
    out << ".\n";
  }
  if (!a.rationale.empty()) out << "- Why: " << AsSentence(a.rationale) << "\n";
  out << "- For the design: " << DesignAdvice(a.bottleneck) << "\n";
  return out.str();
}

}  // namespace kernelpro::roofline
