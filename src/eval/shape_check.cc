#include "eval/shape_check.h"

namespace kernelpro::eval {

bool ShapeChecks::AllCorrect() const { return !FirstFailure().has_value(); }

std::optional<std::size_t> ShapeChecks::FirstFailure() const {
  for (std::size_t i = 0; i < checked.size(); ++i) {
    if (checked[i].status != "correct") return i;
  }
  return std::nullopt;
}

Json ToJson(const ShapeChecks& s) {
  Json checked = Json::array();
  for (const ShapeVariantCheck& v : s.checked) {
    Json inputs = Json::array();
    for (const auto& input : v.inputs) {
      inputs.push_back(input ? Json{{"shape", input->shape}, {"dtype", input->dtype}}
                             : Json(nullptr));
    }
    checked.push_back(
        {{"label", v.label}, {"inputs", inputs}, {"status", v.status}, {"message", v.message}});
  }
  return Json{{"mode", s.mode}, {"all_correct", s.AllCorrect()}, {"checked", checked}};
}

ShapeChecks ShapeChecksFromJson(const Json& j) {
  ShapeChecks s;
  s.mode = JsonGet<std::string>(j, "mode", "off");
  for (const Json& row : JsonGet<Json>(j, "checked", Json::array())) {
    ShapeVariantCheck v;
    v.label = JsonGet<std::string>(row, "label", "");
    v.status = JsonGet<std::string>(row, "status", "runtime_error");
    v.message = JsonGet<std::string>(row, "message", "");
    for (const Json& input : JsonGet<Json>(row, "inputs", Json::array())) {
      if (!input.is_object()) {
        v.inputs.push_back(std::nullopt);
        continue;
      }
      v.inputs.push_back(ShapeInputSpec{JsonGet<std::vector<long long>>(input, "shape", {}),
                                        JsonGet<std::string>(input, "dtype", "")});
    }
    s.checked.push_back(std::move(v));
  }
  return s;
}

namespace {

// The benchmark is shape 1: variant i is shape i + 2 of checked.size() + 1.
std::string FailureSentence(const ShapeChecks& s, std::size_t i) {
  const ShapeVariantCheck& v = s.checked[i];
  std::string text = "fails shape " + std::to_string(i + 2) + " of " +
                     std::to_string(s.checked.size() + 1) + " (" + v.label + ")";
  if (!v.message.empty()) text += ": " + v.message;
  return text;
}

}  // namespace

std::string ShapeStatusText(const ShapeChecks& s) {
  if (s.checked.empty()) return "";
  if (auto failed = s.FirstFailure())
    return "(fixed-shape: correct on the benchmark shape; " + FailureSentence(s, *failed) + ")";
  return "(all " + std::to_string(s.checked.size() + 1) + " shapes)";
}

std::string ShapeFailureText(const ShapeChecks& s) {
  auto failed = s.FirstFailure();
  if (!failed) return "";
  return "not shape-general, as --require-shape-generality requires: " +
         FailureSentence(s, *failed) + " (correct on the benchmark shape)";
}

std::string ShapeGeneralityText(const Json& shapes) {
  if (!shapes.is_object()) return "";
  const ShapeChecks s = ShapeChecksFromJson(shapes);
  if (s.checked.empty()) return "";
  if (!s.AllCorrect()) return "fixed-shape";
  const std::string n = std::to_string(s.checked.size() + 1);
  return "shapes: " + n + "/" + n;
}

}  // namespace kernelpro::eval
