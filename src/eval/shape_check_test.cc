// The shape record of a verdict: its JSON (read by other tools, so its form is fixed), the status
// text `kernelpro eval` prints, and what the reports say of a kernel's shape generality.
#include "eval/shape_check.h"

#include <gtest/gtest.h>

#include "eval/verdict.h"

namespace kernelpro::eval {
namespace eval_shape_check_test {

ShapeChecks TwoVariants(const std::string& second_status) {
  ShapeChecks s;
  s.mode = "derived";
  s.checked.push_back(
      {"batch_size=8, dim=8192", {ShapeInputSpec{{8, 8192}, "float32"}}, "correct", ""});
  s.checked.push_back({"batch_size=9, dim=8193",
                       {ShapeInputSpec{{9, 8193}, "float32"}, std::nullopt},
                       second_status,
                       second_status == "correct" ? "" : "max abs error 0.5"});
  return s;
}

TEST(ShapeCheckTest, TheVerdictJsonCarriesTheShapesInTheirFixedForm) {
  EvalResult r;
  r.status = EvalStatus::kCorrect;
  r.shapes = TwoVariants("incorrect");
  const Json j = ToJson(r)["shapes"];
  EXPECT_EQ(j["mode"], "derived");
  EXPECT_EQ(j["all_correct"], false);
  ASSERT_EQ(j["checked"].size(), 2u);
  EXPECT_EQ(j["checked"][1],
            Json::parse(R"({"label": "batch_size=9, dim=8193", "status": "incorrect",
                            "message": "max abs error 0.5",
                            "inputs": [{"shape": [9, 8193], "dtype": "float32"}, null]})"));
  // And back, as the reports read a stored verdict.
  const ShapeChecks back = ShapeChecksFromJson(j);
  EXPECT_EQ(back.mode, "derived");
  ASSERT_EQ(back.checked.size(), 2u);
  EXPECT_FALSE(back.checked[1].inputs[1].has_value());
  EXPECT_EQ(back.checked[1].inputs[0]->shape, (std::vector<long long>{9, 8193}));
  // No variants checked: mode off, nothing failed.
  EXPECT_EQ(ToJson(EvalResult{})["shapes"],
            Json::parse(R"({"mode": "off", "all_correct": true, "checked": []})"));
}

TEST(ShapeCheckTest, TheStatusTextCountsTheBenchmarkAsShapeOne) {
  EXPECT_EQ(ShapeStatusText(TwoVariants("correct")), "(all 3 shapes)");
  EXPECT_EQ(ShapeStatusText(TwoVariants("runtime_error")),
            "(fixed-shape: correct on the benchmark shape; fails shape 3 of 3 (batch_size=9, "
            "dim=8193): max abs error 0.5)");
  EXPECT_EQ(ShapeFailureText(TwoVariants("incorrect")),
            "not shape-general, as --require-shape-generality requires: fails shape 3 of 3 "
            "(batch_size=9, dim=8193): max abs error 0.5 (correct on the benchmark shape)");
  EXPECT_EQ(ShapeFailureText(TwoVariants("correct")), "");
  EXPECT_EQ(ShapeStatusText(ShapeChecks{}), "");
}

TEST(ShapeCheckTest, ReportsCallAKernelShapeGeneralOrFixedShape) {
  EXPECT_EQ(ShapeGeneralityText(ToJson(TwoVariants("correct"))), "shapes: 3/3");
  EXPECT_EQ(ShapeGeneralityText(ToJson(TwoVariants("incorrect"))), "fixed-shape");
  // Nothing checked, or a verdict stored before shapes were: nothing to say.
  EXPECT_EQ(ShapeGeneralityText(ToJson(ShapeChecks{})), "");
  EXPECT_EQ(ShapeGeneralityText(Json()), "");
}

}  // namespace eval_shape_check_test
}  // namespace kernelpro::eval
