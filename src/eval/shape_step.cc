#include "eval/shape_step.h"

#include <map>
#include <vector>

#include "eval/candidate_step.h"
#include "eval/referee.h"

namespace kernelpro::eval {

ShapeChecks PlannedShapeChecks(const Json& reference) {
  const Json record = JsonGet<Json>(reference, "shapes", Json::object());
  Json checked = Json::array();
  for (const Json& variant : JsonGet<Json>(record, "variants", Json::array())) {
    checked.push_back({{"label", JsonGet<std::string>(variant, "label", "")},
                       {"inputs", JsonGet<Json>(variant, "inputs", Json::array())}});
  }
  return ShapeChecksFromJson(
      Json{{"mode", JsonGet<std::string>(record, "mode", "off")}, {"checked", checked}});
}

void CheckShapes(const EvalContext& context, const std::string& problem, WorkerSession& referee,
                 WorkerSession& candidate_process, const Json& candidate_request,
                 const Json& reference, const std::string& work, EvalResult& result,
                 std::string& changed) {
  ShapeChecks shapes = PlannedShapeChecks(reference);
  const Json variants =
      JsonGet<Json>(JsonGet<Json>(reference, "shapes", Json::object()), "variants", Json::array());
  if (shapes.checked.empty()) {
    result.shapes = shapes;
    return;
  }
  const int timeout_s = context.options.step_timeout_s;
  auto fail_all = [&](const std::string& message) {
    for (ShapeVariantCheck& v : shapes.checked) {
      if (v.message.empty()) v.message = message;
    }
    result.shapes = shapes;
  };
  // The candidate's side: one request for all variants; a variant's failure is its row's.
  Json request = candidate_request;
  Json names = Json::array();
  for (const Json& variant : variants) names.push_back(JsonGet<std::string>(variant, "name", ""));
  request["shapes"] = names;
  request["out_dir"] = work + "/shapes";
  EvalResult scratch;  // a failed step is the variants' failure, never the verdict's
  auto ran = AskSession(candidate_process, "shapes", request, timeout_s, scratch, &changed);
  if (!ran) {
    if (changed.empty())
      fail_all("the candidate's process failed on the shapes: " + scratch.message);
    return;
  }
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < names.size(); ++i) index[names[i].get<std::string>()] = i;
  Json pairs = Json::array();
  std::vector<bool> recorded(names.size(), false);  // outputs saved, so the referee compares them
  for (const Json& row : JsonGet<Json>(*ran, "variants", Json::array())) {
    auto at = index.find(JsonGet<std::string>(row, "name", ""));
    if (at == index.end()) continue;
    ShapeVariantCheck& v = shapes.checked[at->second];
    const std::string status = JsonGet<std::string>(row, "status", "runtime_error");
    if (status == "ok") {
      pairs.push_back({"shapes/" + at->first, at->first});
      recorded[at->second] = true;
      continue;
    }
    v.status = status == "incorrect" ? "incorrect" : "runtime_error";
    v.message = JsonGet<std::string>(row, "message", status);
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    ShapeVariantCheck& v = shapes.checked[i];
    if (!recorded[i] && v.message.empty()) v.message = "no outputs were recorded";
  }
  if (pairs.empty()) {
    result.shapes = shapes;
    return;
  }
  // The referee compares, by the criterion of every other trial.
  Json compare = CompareRequest(context, problem, reference, work);
  compare["pairs"] = pairs;
  auto compared = AskSession(referee, "compare", compare, timeout_s, scratch, &changed);
  if (!compared) {
    if (changed.empty()) fail_all("the comparison failed: " + scratch.message);
    return;
  }
  for (const Json& row : JsonGet<Json>(*compared, "trials", Json::array())) {
    auto at = index.find(JsonGet<std::string>(row, "trial", ""));
    if (at == index.end()) continue;
    ShapeVariantCheck& v = shapes.checked[at->second];
    const bool passed = JsonGet<bool>(row, "passed", false);
    v.status = passed ? "correct" : "incorrect";
    v.message = passed ? "" : JsonGet<std::string>(row, "reason", "outputs differ");
  }
  result.shapes = shapes;
}

}  // namespace kernelpro::eval
