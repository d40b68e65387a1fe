#include "app/eval_json.h"

#include <gtest/gtest.h>

namespace kernelpro::app {

TEST(EvalResultJsonTest, IsTheVerdictWithTheProblemAndTheReferencesFacts) {
  eval::EvalReport report;
  report.problem = "/nowhere/problem.py";  // not a program: no "program" field
  report.reference = {{"vacuous", "every output is zero"},
                      {"notes", {"inputs are made on the CPU"}},
                      {"fp32", true},
                      {"reference_fp64_error", 1e-7},
                      {"manifest_digest", "not shown"}};
  eval::EvalResult result;
  result.candidate = "/c/candidate.py";
  result.status = eval::EvalStatus::kCorrect;
  const Json verdict = eval::ToJson(result);

  const Json j = EvalResultJson(report, result, std::nullopt, /*build_only=*/false);
  for (const auto& [key, value] : verdict.items()) EXPECT_EQ(j.at(key), value) << key;
  EXPECT_EQ(j["problem"], "/nowhere/problem.py");
  EXPECT_EQ(j["reference"], (Json{{"vacuous", "every output is zero"},
                                  {"notes", {"inputs are made on the CPU"}},
                                  {"fp32", true},
                                  {"fp64_error", 1e-7}}));
  EXPECT_FALSE(j.contains("program"));
  EXPECT_FALSE(j.contains("roofline"));  // no Stage-1 analysis given
  EXPECT_FALSE(j.contains("reference_roofline"));
}

TEST(EvalResultJsonTest, WithBuildOnlyACorrectCandidateIsBuiltAndAFailedOneKeepsItsStatus) {
  eval::EvalReport report;
  report.problem = "/nowhere/problem.py";
  eval::EvalResult result;
  result.status = eval::EvalStatus::kCorrect;
  EXPECT_EQ(EvalResultJson(report, result, std::nullopt, true)["status"], "built");
  result.status = eval::EvalStatus::kCompileError;
  EXPECT_EQ(EvalResultJson(report, result, std::nullopt, true)["status"],
            eval::ToJson(result)["status"]);
}

}  // namespace kernelpro::app
