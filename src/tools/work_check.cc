#include "tools/work_check.h"

#include <algorithm>
#include <cmath>

#include "core/text.h"
#include "tools/metric_set.h"

namespace kernelpro::tools {
namespace {

constexpr const char* kDramBytesRead = "dram__bytes_read.sum";

// Why ncu's sums may miss part of the forward call's work, "" when they cover all of it. ncu
// profiles only the candidate's own entry kernels when their names are known, so kernels it
// launches through libtorch (at::matmul, a torch op in its Python forward) are only visible in
// the timeline: without one, or when it counted more launches than ncu kept, the sums are partial.
std::string MissingLaunches(const profile::Metrics& metrics) {
  if (!metrics.ncu) return "";
  if (!metrics.timeline || metrics.timeline->kernel_count <= 0)
    return "no GPU timeline to confirm ncu saw every kernel launch of the forward call";
  const std::size_t kept = metrics.ncu->kernels.size();
  const int launched = metrics.timeline->kernel_count;
  if (static_cast<std::size_t>(launched) <= kept) return "";
  return "ncu kept " + std::to_string(kept) + " of the forward call's " + std::to_string(launched) +
         " kernel launches, so its sums miss the others' work";
}

std::string Percent(double share) { return FormatNumber(share * 100, 3) + " %"; }

}  // namespace

std::string SiQuantity(double value, const std::string& unit) {
  // 999.5 rather than 1000: what three significant digits would round up to "1000" takes the
  // next prefix instead.
  const auto [scaled, prefix] = SiScaled(value, 999.5);
  return FormatNumber(scaled, 3) + " " + prefix + unit;
}

ProblemWork ProblemWorkOf(const roofline::ReferenceAnalysis& analysis) {
  ProblemWork work;
  work.min_input_bytes = analysis.input_bytes + analysis.parameter_bytes;
  // A program whose launcher's tensors could not be sized has no byte count to hold a kernel to.
  if (analysis.program && !analysis.program->bytes_known) work.min_input_bytes = 0;
  work.flops = analysis.flops;
  work.flops_estimated = analysis.flops_estimated;
  if (analysis.program && analysis.program->flops_pending) work.flops = work.flops_estimated = 0;
  return work;
}

WorkCheck CheckWork(const profile::Metrics& metrics, const ProblemWork& work) {
  WorkCheck check;
  check.min_input_bytes = work.min_input_bytes;
  check.counted_flops = std::max(0.0, work.flops - work.flops_estimated);
  check.estimated_flops = work.flops_estimated;
  const std::string missing_launches = MissingLaunches(metrics);

  // Bytes.
  if (metrics.ncu) {
    const auto& values = metrics.ncu->aggregate.values;
    if (auto it = values.find(kDramBytesRead); it != values.end()) check.bytes_read = it->second;
  }
  if (!metrics.ncu) {
    check.read_unavailable = "no ncu counters";
  } else if (!check.bytes_read) {
    check.read_unavailable = std::string("no ") + kDramBytesRead + " counter";
  } else if (work.min_input_bytes <= 0) {
    check.read_unavailable = "Stage 1 gives no input bytes";
  } else if (!missing_launches.empty()) {
    check.read_unavailable = missing_launches;
  } else {
    check.read_share = *check.bytes_read / work.min_input_bytes;
  }

  // FLOPs.
  std::optional<roofline::MeasuredFlops> executed;
  if (metrics.ncu) executed = roofline::FlopsFromNcu(*metrics.ncu);
  if (executed) check.executed_flops = executed->flops;
  if (metrics.sass) {
    for (const profile::SassKernel* k : SassEntryKernels(*metrics.sass)) {
      for (const auto& [category, count] : k->categories) {
        if (category.starts_with("tensor_") && count > 0) check.tensor_core_work = true;
      }
    }
  }
  if (!metrics.ncu) {
    check.flops_unavailable = "no ncu counters";
  } else if (!executed) {
    check.flops_unavailable = "no smsp__sass_thread_inst_executed_op_f{add,mul,fma}_pred_on.sum";
  } else if (check.counted_flops <= 0) {
    check.flops_unavailable =
        work.flops > 0 ? "Stage 1's FLOPs are per-element estimates only, which the op counters "
                         "do not reproduce"
                       : "Stage 1 gives no FLOPs";
  } else if (!metrics.sass) {
    check.flops_unavailable =
        "no SASS to tell whether tensor cores (whose FLOPs these counters miss) did the work";
  } else if (check.tensor_core_work) {
    check.flops_unavailable =
        "the SASS has tensor-core instructions, whose FLOPs these counters do not count";
  } else if (!metrics.sass->library_calls.empty()) {
    check.flops_unavailable =
        "the candidate calls a library (" + metrics.sass->library_calls.front() +
        ") whose kernels may use tensor cores, whose FLOPs these counters do not count";
  } else if (!missing_launches.empty()) {
    check.flops_unavailable = missing_launches;
  } else {
    check.flop_share = *check.executed_flops / check.counted_flops;
  }
  return check;
}

std::string RenderWorkCheck(const WorkCheck& c) {
  std::string line = "verified work: ";
  if (c.read_share) {
    line += "read " + SiQuantity(*c.bytes_read, "B") + " from DRAM = " + Percent(*c.read_share) +
            " of the " + SiQuantity(c.min_input_bytes, "B") + " minimum inputs";
  } else {
    line += "DRAM reads not checked (" + c.read_unavailable + ")";
  }
  line += "; ";
  if (c.flop_share) {
    line += "executed " + SiQuantity(*c.executed_flops, "FLOP") +
            " on CUDA cores = " + Percent(*c.flop_share) + " of the " +
            SiQuantity(c.counted_flops, "FLOP") + " counted";
    if (c.estimated_flops > 0)
      line += " (" + SiQuantity(c.estimated_flops, "FLOP") + " of estimates left out)";
  } else {
    line += "FLOPs not checked (" + c.flops_unavailable + ")";
  }
  return line;
}

Json ToJson(const WorkCheck& c) {
  auto opt = [](const std::optional<double>& v) { return v ? Json(*v) : Json(); };
  return {{"dram_bytes_read", opt(c.bytes_read)},    {"min_input_bytes", c.min_input_bytes},
          {"read_share", opt(c.read_share)},         {"read_unavailable", c.read_unavailable},
          {"executed_flops", opt(c.executed_flops)}, {"counted_flops", c.counted_flops},
          {"estimated_flops", c.estimated_flops},    {"tensor_core_work", c.tensor_core_work},
          {"flop_share", opt(c.flop_share)},         {"flops_unavailable", c.flops_unavailable}};
}

}  // namespace kernelpro::tools
