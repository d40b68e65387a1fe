// The report's figures on small fixed inputs. Each figure is also a golden file
// (tests/golden/report/*.svg), reviewed as text and in a browser; regenerate after an intended
// change with
//   KERNELPRO_UPDATE_GOLDEN=1 build/kernelpro_tests --gtest_filter='ChartsGolden*'
#include "report/charts.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace kernelpro::report {
namespace report_charts_test {

const std::string kRoot = KERNELPRO_SOURCE_DIR;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

bool Contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The elements of `svg` whose start tag holds `needle` (start tag through its end).
std::vector<std::string> ElementsWith(const std::string& svg, const std::string& needle) {
  std::vector<std::string> found;
  for (size_t at = svg.find(needle); at != std::string::npos; at = svg.find(needle, at + 1)) {
    size_t begin = svg.rfind('<', at);
    size_t end = svg.find('\n', at);
    found.push_back(svg.substr(begin, end - begin));
  }
  return found;
}

RatioInterval Interval(double estimate, double low, double high) {
  return RatioInterval{estimate, low, high, 0.95};
}

// Three iterations: two failed seeds, a repair at 1.5x, an optimisation at 1.8x beside a slower
// one.
std::vector<SpeedupChartCandidate> SpeedupCandidates() {
  return {
      {1, "n1", "incorrect", std::nullopt},          {1, "n2", "compile_error", std::nullopt},
      {2, "n3", "correct", Interval(1.5, 1.4, 1.6)}, {2, "n4", "correct", Interval(1.2, 1.1, 1.3)},
      {3, "n5", "correct", Interval(1.8, 1.7, 1.9)}, {3, "n6", "runtime_error", std::nullopt},
  };
}

//   ROOT ─┬─ n1 incorrect ─┬─ n3 correct ─┬─ n5 correct (best)
//         │                │              └─ n6 runtime_error
//         │                └─ n4 correct
//         └─ n2 compile_error
std::vector<TreeChartNode> TreeNodes() {
  return {
      {0, -1, "ROOT", "reference", 6, ""},
      {1, 0, "n1", "incorrect", 5, ""},
      {2, 0, "n2", "compile_error", 1, ""},
      {3, 1, "n3", "correct", 3, "n3 (iteration 2, debug): correct 1.50x"},
      {4, 1, "n4", "correct", 1, ""},
      {5, 3, "n5", "correct", 1, "n5 <fast> & \"vectorised\""},
      {6, 3, "n6", "runtime_error", 1, ""},
  };
}

RooflineChartInput H200Roofline() {
  RooflineChartInput in;
  in.gpu_name = "NVIDIA H200 SXM 141GB";
  in.precision = "fp32";
  in.peak_flops = 67e12;
  in.dram_bytes_per_s = 4.8e12;
  // The demo's swish: 33.5 MFLOP, 134 MB at least; the reference at 0.108 ms, candidates moving
  // 111-115 MB in 0.058-0.071 ms.
  in.points = {
      {"reference", 0.25, 33.5e6 / 0.108e-3, true, false, "the reference"},
      {"n4", 33.5e6 / 114e6, 33.5e6 / 0.071e-3, false, false, "n4"},
      {"n8", 33.5e6 / 111e6, 33.5e6 / 0.058e-3, false, true, "n8"},
  };
  return in;
}

TEST(ChartsGoldenTest, EachFigureReadsAsReviewed) {
  const bool update = std::getenv("KERNELPRO_UPDATE_GOLDEN") != nullptr;
  const std::map<std::string, std::string> figures = {
      {"speedup_chart.svg", SpeedupChart(3, SpeedupCandidates())},
      {"tree_chart.svg", TreeChart(TreeNodes(), 5)},
      {"roofline_chart.svg", RooflineChart(H200Roofline())},
  };
  for (const auto& [name, svg] : figures) {
    const std::string golden = kRoot + "/tests/golden/report/" + name;
    if (update) {
      std::ofstream(golden) << svg;
      continue;
    }
    ASSERT_TRUE(std::filesystem::exists(golden))
        << golden << " missing: run with KERNELPRO_UPDATE_GOLDEN=1";
    EXPECT_EQ(svg, ReadFile(golden)) << name << " changed; review, then regenerate";
  }
}

TEST(SpeedupChartTest, EveryCandidateIsAPointAndTheBestLineClimbsWithIt) {
  const std::string svg = SpeedupChart(3, SpeedupCandidates());
  EXPECT_EQ(Count(svg, "class=\"candidate correct\""), 3) << svg;
  // A failed candidate is a cross of two strokes; the second carries its tooltip.
  EXPECT_EQ(Count(svg, "class=\"candidate failed\""), 6);
  EXPECT_TRUE(Contains(svg, "<title>n2 (iteration 1): compile_error</title>"));
  EXPECT_TRUE(Contains(svg, "<title>n5 (iteration 3): correct 1.80x [1.70, 1.90]</title>"));
  // The best so far changes after iterations 2 and 3, not after 1 (nothing correct yet).
  EXPECT_TRUE(Contains(svg, "<title>best after iteration 2: n3 1.50x [1.40, 1.60]</title>"));
  EXPECT_TRUE(Contains(svg, "<title>best after iteration 3: n5 1.80x [1.70, 1.90]</title>"));
  EXPECT_FALSE(Contains(svg, "best after iteration 1"));
  EXPECT_EQ(Count(svg, "class=\"best-interval\""), 1);
  EXPECT_EQ(Count(svg, "class=\"reference-line\""), 1);
  EXPECT_TRUE(Contains(svg, ">1x reference</text>"));
  EXPECT_TRUE(Contains(svg, ">iteration (0: the reference)</text>"));
  EXPECT_TRUE(Contains(svg, ">speedup over the reference (x)</text>"));
  EXPECT_EQ(SpeedupChart(0, {}), "");
}

TEST(SpeedupChartTest, ARunWithNothingCorrectStaysOnTheReference) {
  const std::string svg =
      SpeedupChart(2, {{1, "n1", "compile_error", std::nullopt}, {2, "n2", "llm_error", {}}});
  EXPECT_FALSE(Contains(svg, "best after iteration"));
  EXPECT_EQ(Count(svg, "class=\"candidate failed\""), 4);
  EXPECT_TRUE(Contains(svg, "stroke=\"" + StatusColour("llm_error") + "\""));
}

TEST(TreeChartTest, EveryNodeIsACircleColouredByItsStatusWithAnEdgeFromItsParent) {
  const std::vector<TreeChartNode> nodes = TreeNodes();
  const std::string svg = TreeChart(nodes, 5);
  EXPECT_EQ(Count(svg, "class=\"node status-"), 7) << svg;
  EXPECT_EQ(Count(svg, "class=\"edge\""), 6);
  for (const TreeChartNode& n : nodes) {
    EXPECT_TRUE(Contains(svg, ">" + n.label + "</text>")) << n.label;
  }
  // A failed node is drawn red, a correct one green.
  for (const std::string& element : ElementsWith(svg, "class=\"node status-compile_error\"")) {
    EXPECT_TRUE(Contains(element, "fill=\"#cf222e\"")) << element;
  }
  for (const std::string& element : ElementsWith(svg, "class=\"node status-correct\"")) {
    EXPECT_TRUE(Contains(element, "fill=\"#2da44e\"")) << element;
  }
  // Bigger for more visits: ROOT (6 visits) over n2 (1).
  const std::regex radius("r=\"([0-9.]+)\"");
  std::smatch root_r, leaf_r;
  const std::string root = ElementsWith(svg, "class=\"node status-reference\"").at(0);
  const std::string leaf = ElementsWith(svg, "class=\"node status-compile_error\"").at(0);
  ASSERT_TRUE(std::regex_search(root, root_r, radius));
  ASSERT_TRUE(std::regex_search(leaf, leaf_r, radius));
  EXPECT_GT(std::stod(root_r[1]), std::stod(leaf_r[1]));
  // The best is ringed, once; the legend names the statuses present and the ring.
  EXPECT_EQ(Count(svg, "class=\"best\""), 1);
  for (const char* entry :
       {">correct</text>", ">incorrect</text>", ">compile_error</text>", ">runtime_error</text>",
        ">the best kernel</text>", ">size: MCTS visits</text>"}) {
    EXPECT_TRUE(Contains(svg, entry)) << entry;
  }
  EXPECT_FALSE(Contains(svg, ">timeout</text>")) << "no timeout in this tree";
  EXPECT_TRUE(Contains(svg, "<title>n5 &lt;fast&gt; &amp; &quot;vectorised&quot;</title>"));
}

TEST(TreeChartTest, AParentSitsAboveTheMiddleOfItsChildren) {
  const std::string svg = TreeChart(TreeNodes(), std::nullopt);
  auto cx = [&](const std::string& label) {
    // Each node's circle comes right before its label.
    size_t text = svg.find(">" + label + "</text>");
    size_t circle = svg.rfind("<circle cx=\"", text);
    return std::stod(svg.substr(circle + 12));
  };
  EXPECT_DOUBLE_EQ(cx("n3"), (cx("n5") + cx("n6")) / 2);
  EXPECT_DOUBLE_EQ(cx("n1"), (cx("n3") + cx("n4")) / 2);
  EXPECT_LT(cx("n4"), cx("n2"));
  EXPECT_FALSE(Contains(svg, "class=\"best\""));
}

TEST(TreeChartTest, AnUnknownStatusIsGreyAndInTheLegend) {
  const std::string svg =
      TreeChart({{0, -1, "ROOT", "reference", 2, ""}, {1, 0, "n1", "vanished", 1, ""}}, 1);
  EXPECT_EQ(StatusColour("vanished"), "#d0d7de");
  EXPECT_TRUE(Contains(svg, "fill=\"#d0d7de\""));
  EXPECT_TRUE(Contains(svg, ">vanished</text>"));
  EXPECT_EQ(TreeChart({}, std::nullopt), "");
}

TEST(RooflineChartTest, RoofsAndPointsSitWhereTheNumbersPutThem) {
  const std::string svg = RooflineChart(H200Roofline());
  EXPECT_TRUE(Contains(svg, ">fp32 peak 67 TFLOP/s</text>")) << svg;
  EXPECT_TRUE(Contains(svg, ">DRAM 4.8 TB/s</text>"));
  EXPECT_TRUE(Contains(svg, ">ridge 14.0 FLOP/B</text>"));
  EXPECT_TRUE(Contains(svg, ">arithmetic intensity (FLOP per DRAM byte)</text>"));
  EXPECT_TRUE(Contains(svg, ">achieved FLOP/s</text>"));
  EXPECT_EQ(Count(svg, "class=\"point reference\""), 1);
  EXPECT_EQ(Count(svg, "class=\"point candidate\""), 2);
  EXPECT_TRUE(Contains(svg, ">reference</text>") && Contains(svg, ">n8</text>"));
  EXPECT_FALSE(Contains(svg, ">n4</text>")) << "only the reference and the best are labelled";
  // Decades on both axes, around the points and the ridge: 0.1 ... 100 FLOP/B, 100 G ... 100 T
  // FLOP/s (the peak's decade closes the top).
  for (const char* tick : {">0.1</text>", ">100</text>", ">100G</text>", ">100T</text>"}) {
    EXPECT_TRUE(Contains(svg, tick)) << tick;
  }
  EXPECT_FALSE(Contains(svg, ">1P</text>"));
  // Every point is below the roof: memory-bound kernels at 0.25-0.3 FLOP/B under 4.8 TB/s.
  // (Their heights are 0.31-0.58 TFLOP/s against a roof of 1.2-1.45 TFLOP/s there.)
  RooflineChartInput above = H200Roofline();
  above.points = {{"impossible", 0.25, 1e15, false, false, ""}};
  EXPECT_NE(RooflineChart(above), "") << "drawn as measured, even above the roof";
}

TEST(RooflineChartTest, NothingToDrawWithoutRoofsOrPoints) {
  RooflineChartInput in = H200Roofline();
  in.peak_flops = 0;
  EXPECT_EQ(RooflineChart(in), "");
  in = H200Roofline();
  in.points = {{"bad", 0, 1e12, false, false, ""}};
  EXPECT_EQ(RooflineChart(in), "");
}

TEST(DramBytesTest, ReadPlusWriteFromTheNcuAggregate) {
  Json metrics = Json::parse(
      R"({"ncu": {"aggregate": {"values": {"dram__bytes_read.sum": 67118592.0,
                                             "dram__bytes_write.sum": 47843840.0}}}})");
  ASSERT_TRUE(DramBytesFromMetrics(metrics).has_value());
  EXPECT_DOUBLE_EQ(*DramBytesFromMetrics(metrics), 67118592.0 + 47843840.0);
  EXPECT_FALSE(DramBytesFromMetrics(Json::parse(R"({"ncu": null, "sass": {}})")).has_value());
  EXPECT_FALSE(DramBytesFromMetrics(Json::parse(
                                        R"({"ncu": {"aggregate": {"values":
                                           {"dram__bytes_read.sum": 5}}}})"))
                   .has_value());
}

}  // namespace report_charts_test
}  // namespace kernelpro::report
