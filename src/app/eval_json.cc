#include "app/eval_json.h"

#include "agents/problem_source.h"

namespace kernelpro::app {
namespace {

Json PositionJson(const roofline::RooflinePosition& p) {
  return {{"measured_time_s", p.measured_time_s},
          {"attainable_time_s", p.attainable_time_s},
          {"fraction_of_bound", p.fraction_of_bound},
          {"summary", p.summary}};
}

}  // namespace

std::optional<roofline::RooflinePosition> RooflinePlace(
    const std::optional<roofline::ReferenceAnalysis>& stage1,
    const std::optional<eval::TimingSummary>& time) {
  if (!stage1 || !time || time->summary.median <= 0) return std::nullopt;
  return roofline::PositionAgainstRoofline(*stage1, time->summary.median * 1e-3);
}

Json EvalResultJson(const eval::EvalReport& report, const eval::EvalResult& result,
                    const std::optional<roofline::ReferenceAnalysis>& stage1, bool build_only) {
  Json j = eval::ToJson(result);
  if (auto p = RooflinePlace(stage1, result.candidate_time)) j["roofline"] = PositionJson(*p);
  if (auto p = RooflinePlace(stage1, result.reference_time)) {
    j["reference_roofline"] = PositionJson(*p);
  }
  if (build_only && result.status == eval::EvalStatus::kCorrect) j["status"] = "built";
  j["problem"] = report.problem;
  if (auto source = agents::ReadProblemSource(report.problem); source.ok() && source->program) {
    j["program"] = {{"kind", agents::ToString(source->kind)},
                    {"entry", source->entry},
                    {"baseline", source->path},
                    {"reference", source->reference_path.empty() ? Json(nullptr)
                                                                 : Json(source->reference_path)}};
  }
  const Json& reference = report.reference;
  j["reference"] = {{"vacuous", JsonGet<std::string>(reference, "vacuous", "")},
                    {"notes", JsonGet<Json>(reference, "notes", Json::array())},
                    {"fp32", JsonGet<bool>(reference, "fp32", false)},
                    {"fp64_error", JsonGet<Json>(reference, "reference_fp64_error", nullptr)}};
  return j;
}

}  // namespace kernelpro::app
