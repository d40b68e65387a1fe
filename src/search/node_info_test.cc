// A node's shape generality travels from its verdict to the node record the reports read.
#include "search/node_info.h"

#include <gtest/gtest.h>

namespace kernelpro::search {
namespace search_node_info_test {

eval::EvalResult CorrectOnTheBenchmark(const std::string& variant_status) {
  eval::EvalResult r;
  r.status = eval::EvalStatus::kCorrect;
  r.speedup = RatioInterval{2.0, 1.9, 2.1, 0.95};
  r.shapes.mode = "derived";
  r.shapes.checked.push_back({"N=2048", {}, "correct", ""});
  r.shapes.checked.push_back({"N=2049", {}, variant_status, ""});
  return r;
}

NodeInfo Applied(const eval::EvalResult& result) {
  NodeInfo info;
  ApplyVerdict(VerdictPayload(EvaluationRow(1, result), 1), info);
  return info;
}

TEST(NodeInfoShapesTest, ANodeRecordsWhetherItsKernelIsShapeGeneral) {
  EXPECT_EQ(Applied(CorrectOnTheBenchmark("correct")).shapes, "shapes: 3/3");
  const NodeInfo fixed = Applied(CorrectOnTheBenchmark("runtime_error"));
  EXPECT_EQ(fixed.shapes, "fixed-shape");
  // It survives the record step's payload, and a verdict without shape checks says nothing.
  EXPECT_EQ(NodeInfoFromJson(ToJson(3, fixed)).shapes, "fixed-shape");
  eval::EvalResult unchecked = CorrectOnTheBenchmark("correct");
  unchecked.shapes = {};
  const Json payload = VerdictPayload(EvaluationRow(1, unchecked), 1);
  EXPECT_FALSE(payload.contains("shapes")) << payload.dump();
  EXPECT_FALSE(ToJson(3, Applied(unchecked)).contains("shapes"));
}

}  // namespace search_node_info_test
}  // namespace kernelpro::search
