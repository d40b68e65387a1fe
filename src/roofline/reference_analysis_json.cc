// ReferenceAnalysis to and from JSON: the stored form of Stage 1's analysis (analysis.json of a
// run, --json of `kernelpro analyze`), read back forgivingly with defaults for absent fields.
#include <limits>
#include <string>

#include "core/json_io.h"
#include "roofline/reference_analysis.h"

namespace kernelpro::roofline {
namespace {

std::string BottleneckText(Bottleneck b) { return std::string(BottleneckName(b)); }

Json BoundJson(const RooflineBound& r) {
  return Json{{"arithmetic_intensity",
               std::isinf(r.arithmetic_intensity) ? Json(nullptr) : Json(r.arithmetic_intensity)},
              {"ridge_point", r.ridge_point},
              {"compute_time_s", r.compute_time_s},
              {"memory_time_s", r.memory_time_s},
              {"attainable_time_s", r.attainable_time_s},
              {"attainable_flops", r.attainable_flops},
              {"class", BottleneckText(r.bottleneck)},
              {"reason", r.reason}};
}

}  // namespace

// The workload fields the worker's analyze result and a saved ReferenceAnalysis share (same names).
void ReadWorkloadFields(const Json& j, ReferenceAnalysis& a) {
  a.device = JsonGet<std::string>(j, "device", "");
  a.device_name = JsonGet<std::string>(j, "device_name", "");
  for (const Json& op : JsonGet<Json>(j, "operations", Json::array())) {
    a.operations.push_back(
        {JsonGet<std::string>(op, "category", "other"), JsonGet<std::string>(op, "op", ""),
         JsonGet<std::int64_t>(op, "count", 0), JsonNumber(op, "flops").value_or(0)});
  }
  a.dominant_category = JsonGet<std::string>(j, "dominant_category", "");
  a.dominant_dtype = JsonGet<std::string>(j, "dominant_dtype", "");
  a.flops = JsonNumber(j, "flops").value_or(0);
  a.flops_estimated = JsonNumber(j, "flops_estimated").value_or(0);
  a.flops_source = JsonGet<std::string>(j, "flops_source", "");
  a.input_bytes = JsonNumber(j, "input_bytes").value_or(0);
  a.parameter_bytes = JsonNumber(j, "parameter_bytes").value_or(0);
  a.output_bytes = JsonNumber(j, "output_bytes").value_or(0);
  a.min_bytes =
      JsonNumber(j, "min_bytes").value_or(a.input_bytes + a.parameter_bytes + a.output_bytes);
}

// The program fields, present in both forms only for a Triton or CUDA program; null flops and
// min_bytes mean "not known yet" there, where a PyTorch problem always has both.
void ReadProgramFields(const Json& j, ReferenceAnalysis& a) {
  const Json p = JsonGet<Json>(j, "program", Json());
  if (!p.is_object()) return;
  ProgramStageOne program;
  program.kind = JsonGet<std::string>(p, "kind", "");
  program.entry = JsonGet<std::string>(p, "entry", "");
  if (p.contains("reference") && p["reference"].is_string())
    program.reference = p["reference"].get<std::string>();
  program.bytes_source = JsonGet<std::string>(j, "bytes_source", "");
  program.bytes_known = j.contains("min_bytes") && j["min_bytes"].is_number();
  program.flops_pending = !(j.contains("flops") && j["flops"].is_number());
  if (!program.bytes_known) a.min_bytes = 0;
  if (const Json m = JsonGet<Json>(j, "flops_measured", Json()); m.is_object()) {
    MeasuredFlops f;
    f.flops = JsonNumber(m, "flops").value_or(0);
    f.fp32 = JsonNumber(m, "fp32").value_or(0);
    f.fp16 = JsonNumber(m, "fp16").value_or(0);
    f.fp64 = JsonNumber(m, "fp64").value_or(0);
    f.tensor_instructions = JsonNumber(m, "tensor_instructions").value_or(0);
    f.kernel_count = JsonGet<int>(m, "kernel_count", 0);
    program.measured_flops = f;
  }
  a.program = program;
}

Json ToJson(const ReferenceAnalysis& a) {
  Json ops = Json::array();
  for (const OperationCount& op : a.operations) {
    ops.push_back(
        {{"category", op.category}, {"op", op.op}, {"count", op.count}, {"flops", op.flops}});
  }
  Json measured = nullptr;
  if (a.measured) {
    measured = {{"sm_throughput_pct", a.measured->sm_pct},
                {"memory_throughput_pct", a.measured->memory_pct},
                {"duration_s", a.measured->duration_s},
                {"kernel_count", a.measured->kernel_count},
                {"class", BottleneckText(a.measured->bottleneck)},
                {"reason", a.measured->reason}};
    if (a.measured->duration_s > 0) {
      measured["fraction_of_bound"] =
          PositionAgainstRoofline(a, a.measured->duration_s).fraction_of_bound;
    }
  }
  Json j{{"schema_version", a.schema_version},
         {"problem", a.problem},
         {"device", a.device},
         {"device_name", a.device_name},
         {"gpu", a.gpu},
         {"gpu_name", a.gpu_name},
         {"precision", a.precision},
         {"precision_description",
          a.precision.empty() ? "" : DescribePrecision(*ParsePrecision(a.precision))},
         {"precision_reason", a.precision_reason},
         {"operations", ops},
         {"dominant_category", a.dominant_category},
         {"dominant_dtype", a.dominant_dtype},
         {"flops", a.flops},
         {"flops_estimated", a.flops_estimated},
         {"flops_source", a.flops_source},
         {"input_bytes", a.input_bytes},
         {"parameter_bytes", a.parameter_bytes},
         {"output_bytes", a.output_bytes},
         {"min_bytes", a.min_bytes},
         {"peak_flops", a.peak_flops},
         {"dram_bytes_per_s", a.dram_bytes_per_s},
         {"roofline", BoundJson(a.roofline)},
         {"theoretical_class", BottleneckText(a.roofline.bottleneck)},
         {"bottleneck", BottleneckText(a.bottleneck)},
         {"measured", measured},
         {"confidence", a.confidence},
         {"rationale", a.rationale},
         {"notes", a.notes},
         {"thresholds",
          {{"allow_tf32", a.options.allow_tf32},
           {"latency_threshold_s", a.options.latency_threshold_s},
           {"mixed_factor", a.options.mixed_factor},
           {"ncu_latency_pct", a.options.ncu_latency_pct},
           {"ncu_mixed_margin_pct", a.options.ncu_mixed_margin_pct}}}};
  // Only when the reference was profiled: analyses without a profile read as they always did.
  if (a.energy_proxy_pj) j["energy_proxy_pj"] = *a.energy_proxy_pj;
  if (a.energy_proxy_paper_pj) j["energy_proxy_paper_pj"] = *a.energy_proxy_paper_pj;
  if (!a.energy_proxy_missing.empty()) j["energy_proxy_missing"] = a.energy_proxy_missing;
  if (a.program) {
    const ProgramStageOne& p = *a.program;
    j["program"] = {{"kind", p.kind},
                    {"entry", p.entry},
                    {"reference", p.reference.empty() ? Json(nullptr) : Json(p.reference)}};
    j["bytes_source"] = p.bytes_source;
    if (p.flops_pending) j["flops"] = nullptr;
    if (!p.bytes_known) j["min_bytes"] = nullptr;
    j["flops_measured"] = nullptr;
    if (p.measured_flops) {
      const MeasuredFlops& f = *p.measured_flops;
      j["flops_measured"] = {{"flops", f.flops},
                             {"fp32", f.fp32},
                             {"fp16", f.fp16},
                             {"fp64", f.fp64},
                             {"tensor_instructions", f.tensor_instructions},
                             {"kernel_count", f.kernel_count}};
    }
  }
  return j;
}

Result<ReferenceAnalysis> ReferenceAnalysisFromJson(const Json& j) {
  if (!j.is_object()) return Status::InvalidArgument("a reference analysis must be a JSON object");
  int version = JsonGet<int>(j, "schema_version", 0);
  if (version != kReferenceAnalysisSchemaVersion) {
    return Status::InvalidArgument("reference analysis schema_version " + std::to_string(version) +
                                   " (this kernelpro reads " +
                                   std::to_string(kReferenceAnalysisSchemaVersion) + ")");
  }
  ReferenceAnalysis a;
  a.problem = JsonGet<std::string>(j, "problem", "");
  ReadWorkloadFields(j, a);
  ReadProgramFields(j, a);
  a.gpu = JsonGet<std::string>(j, "gpu", "");
  a.gpu_name = JsonGet<std::string>(j, "gpu_name", "");
  a.precision = JsonGet<std::string>(j, "precision", "");
  a.precision_reason = JsonGet<std::string>(j, "precision_reason", "");
  a.peak_flops = JsonNumber(j, "peak_flops").value_or(0);
  a.dram_bytes_per_s = JsonNumber(j, "dram_bytes_per_s").value_or(0);
  const Json r = JsonGet<Json>(j, "roofline", Json::object());
  a.roofline.arithmetic_intensity =
      JsonNumber(r, "arithmetic_intensity").value_or(std::numeric_limits<double>::infinity());
  a.roofline.ridge_point = JsonNumber(r, "ridge_point").value_or(0);
  a.roofline.compute_time_s = JsonNumber(r, "compute_time_s").value_or(0);
  a.roofline.memory_time_s = JsonNumber(r, "memory_time_s").value_or(0);
  a.roofline.attainable_time_s = JsonNumber(r, "attainable_time_s").value_or(0);
  a.roofline.attainable_flops = JsonNumber(r, "attainable_flops").value_or(0);
  a.roofline.bottleneck =
      ParseBottleneckOr(JsonGet<std::string>(r, "class", ""), Bottleneck::kMemory);
  a.roofline.reason = JsonGet<std::string>(r, "reason", "");
  a.bottleneck =
      ParseBottleneckOr(JsonGet<std::string>(j, "bottleneck", ""), a.roofline.bottleneck);
  if (const Json m = JsonGet<Json>(j, "measured", Json()); m.is_object()) {
    MeasuredThroughput t;
    t.sm_pct = JsonNumber(m, "sm_throughput_pct").value_or(0);
    t.memory_pct = JsonNumber(m, "memory_throughput_pct").value_or(0);
    t.duration_s = JsonNumber(m, "duration_s").value_or(0);
    t.kernel_count = JsonGet<int>(m, "kernel_count", 0);
    t.bottleneck = ParseBottleneckOr(JsonGet<std::string>(m, "class", ""), Bottleneck::kMemory);
    t.reason = JsonGet<std::string>(m, "reason", "");
    a.measured = t;
  }
  a.energy_proxy_pj = JsonNumber(j, "energy_proxy_pj");
  a.energy_proxy_paper_pj = JsonNumber(j, "energy_proxy_paper_pj");
  a.energy_proxy_missing = JsonGet<std::vector<std::string>>(j, "energy_proxy_missing", {});
  a.confidence = JsonGet<std::string>(j, "confidence", "theoretical");
  a.rationale = JsonGet<std::string>(j, "rationale", "");
  a.notes = JsonGet<std::vector<std::string>>(j, "notes", {});
  const Json t = JsonGet<Json>(j, "thresholds", Json::object());
  a.options.allow_tf32 = JsonGet<bool>(t, "allow_tf32", false);
  a.options.latency_threshold_s =
      JsonNumber(t, "latency_threshold_s").value_or(a.options.latency_threshold_s);
  a.options.mixed_factor = JsonNumber(t, "mixed_factor").value_or(a.options.mixed_factor);
  a.options.ncu_latency_pct = JsonNumber(t, "ncu_latency_pct").value_or(a.options.ncu_latency_pct);
  a.options.ncu_mixed_margin_pct =
      JsonNumber(t, "ncu_mixed_margin_pct").value_or(a.options.ncu_mixed_margin_pct);
  return a;
}

Result<ReferenceAnalysis> ReadReferenceAnalysisFile(const std::string& path) {
  auto json = ReadJsonFile(path);
  if (!json.ok()) return json.status();
  return ReferenceAnalysisFromJson(*json);
}

}  // namespace kernelpro::roofline
