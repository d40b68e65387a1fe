#include "report/svg.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kernelpro::report::svg {
namespace report_svg_test {

bool Contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(SvgEscapeTest, RunTextCannotOpenAnElementOrEndAnAttribute) {
  EXPECT_EQ(Escape("<script>a & \"b\" 'c'</script>"),
            "&lt;script&gt;a &amp; &quot;b&quot; &#39;c&#39;&lt;/script&gt;");
  EXPECT_EQ(Escape("red\x1b[31m tab\tline\n"), "red[31m tab\tline\n");
  EXPECT_EQ(Escape("‘quoted’ µs"), "‘quoted’ µs");  // UTF-8 passes
}

TEST(SvgNumTest, CoordinatesHaveAtMostTwoDecimalsAndNoTrailingZeros) {
  EXPECT_EQ(Num(12), "12");
  EXPECT_EQ(Num(12.5), "12.5");
  EXPECT_EQ(Num(-0.254), "-0.25");
  EXPECT_EQ(Num(-0.001), "0");
  EXPECT_EQ(Num(1.0 / 3), "0.33");
}

TEST(SvgScaleTest, LinearAndLogScalesMapTheirDomainOntoTheRange) {
  Scale y = Scale::Linear(0, 2, 200, 0);  // a y axis: up is smaller
  EXPECT_DOUBLE_EQ(y(0), 200);
  EXPECT_DOUBLE_EQ(y(1), 100);
  EXPECT_DOUBLE_EQ(y(2), 0);
  Scale x = Scale::Log(0.1, 1000, 0, 400);
  EXPECT_DOUBLE_EQ(x(0.1), 0);
  EXPECT_DOUBLE_EQ(x(1), 100);
  EXPECT_DOUBLE_EQ(x(1000), 400);
  EXPECT_DOUBLE_EQ(x(-5), 0) << "a log scale puts what it cannot place at its start";
}

TEST(SvgTicksTest, NiceTicksAreOneTwoFiveStepsInsideTheRange) {
  EXPECT_EQ(NiceTicks(0, 4, 4), (std::vector<double>{0, 1, 2, 3, 4}));
  EXPECT_EQ(NiceTicks(0, 30, 10), (std::vector<double>{0, 5, 10, 15, 20, 25, 30}));
  EXPECT_EQ(NiceTicks(0, 2, 5), (std::vector<double>{0, 0.5, 1, 1.5, 2}));
  std::vector<double> tenths = NiceTicks(0.1, 0.7, 6);
  ASSERT_EQ(tenths.size(), 7u);
  EXPECT_EQ(TickLabel(tenths[2]), "0.3") << "multiples are not accumulated sums";
  EXPECT_EQ(NiceTicks(3, 3), (std::vector<double>{3}));

  double lo = 0, hi = 1.93;
  NiceDomain(lo, hi);
  EXPECT_EQ(lo, 0);
  EXPECT_DOUBLE_EQ(hi, 2);
}

TEST(SvgTicksTest, DecadesCoverALogRange) {
  EXPECT_EQ(DecadeTicks(0.1, 100), (std::vector<double>{0.1, 1, 10, 100}));
  double lo = 0.03, hi = 250;
  DecadeDomain(lo, hi);
  EXPECT_DOUBLE_EQ(lo, 0.01);
  EXPECT_DOUBLE_EQ(hi, 1000);
  EXPECT_TRUE(DecadeTicks(-1, 10).empty());
}

TEST(SvgTickLabelTest, LabelsAreShortWithSiPrefixes) {
  EXPECT_EQ(TickLabel(0), "0");
  EXPECT_EQ(TickLabel(0.5), "0.5");
  EXPECT_EQ(TickLabel(1.25), "1.25");
  EXPECT_EQ(TickLabel(250), "250");
  EXPECT_EQ(TickLabel(1000), "1k");
  EXPECT_EQ(TickLabel(4.8e12), "4.8T");
  EXPECT_EQ(TickLabel(6.7e13), "67T");
  EXPECT_EQ(TickLabel(0.001), "0.001");
  EXPECT_EQ(TickLabel(1e-4), "1e-4");
  EXPECT_EQ(WithUnit(6.67e10, "FLOP/s"), "66.7 GFLOP/s");
  EXPECT_EQ(WithUnit(4.8e12, "B/s"), "4.8 TB/s");
  EXPECT_EQ(WithUnit(250, "B"), "250 B");
}

TEST(SvgDocumentTest, ShapesTextAndTooltipsRenderAsEscapedElements) {
  Document doc(200, 100, "A <test> figure");
  doc.BeginGroup("marks");
  doc.Circle(10, 20, 4.5, Style{"#2da44e", "#000", 2, "", 1, "node status-correct"},
             "n1: 1.5x & more");
  doc.Line(0, 0, 10, 10, Style{"none", "", 1, "4 3", 1, "grid"});
  doc.Rect(1, 2, 3, 4, Style{"red", "", 1, "", 0.5, ""});
  doc.Polyline({{0, 0}, {1, 1}}, Style{"none", "blue", 1, "", 1, ""}, true);
  doc.Text(5, 6, "a < b", TextStyle{10, Anchor::kMiddle, "#111", true, -90, "label"});
  doc.EndGroup();
  doc.EndGroup();  // unpaired: ignored
  const std::string svg = doc.Render();
  EXPECT_EQ(svg.rfind("<svg viewBox=\"0 0 200 100\"", 0), 0u) << svg;
  EXPECT_TRUE(Contains(svg, "aria-label=\"A &lt;test&gt; figure\""));
  EXPECT_TRUE(Contains(svg, "<title>A &lt;test&gt; figure</title>"));
  EXPECT_TRUE(Contains(svg,
                       "<circle cx=\"10\" cy=\"20\" r=\"4.5\" class=\"node status-correct\" "
                       "fill=\"#2da44e\" stroke=\"#000\" stroke-width=\"2\"><title>n1: 1.5x "
                       "&amp; more</title></circle>"))
      << svg;
  EXPECT_TRUE(Contains(svg, "stroke=\"#1f2328\" stroke-dasharray=\"4 3\"/>"))
      << "a line gets a stroke by default";
  EXPECT_TRUE(Contains(svg, "fill=\"red\" fill-opacity=\"0.5\"/>"));
  EXPECT_TRUE(Contains(svg, "<polygon points=\"0,0 1,1\""));
  EXPECT_TRUE(Contains(svg,
                       "<text x=\"5\" y=\"6\" class=\"label\" font-size=\"10\" "
                       "text-anchor=\"middle\" font-weight=\"bold\" fill=\"#111\" "
                       "transform=\"rotate(-90 5 6)\">a &lt; b</text>"))
      << svg;
  EXPECT_TRUE(Contains(svg, "</g>\n</svg>\n"));
  EXPECT_EQ(svg.find("</g>"), svg.rfind("</g>")) << "one group, closed once";
}

TEST(SvgDocumentTest, AGroupLeftOpenIsClosedSoTheMarkupBalances) {
  Document doc(10, 10, "t");
  doc.BeginGroup("a");
  doc.BeginGroup("b");
  const std::string svg = doc.Render();
  EXPECT_TRUE(Contains(svg, "<g class=\"b\">\n</g>\n</g>\n</svg>\n")) << svg;
}

TEST(SvgAxesTest, AxesLabelEveryTickAndTitleBothAxes) {
  Document doc(300, 200, "axes");
  Frame frame{40, 10, 240, 150};
  Scale x = Scale::Log(0.1, 10, frame.left, frame.right());
  Scale y = Scale::Linear(0, 2, frame.bottom(), frame.top);
  DrawAxes(doc, frame, x, y, DecadeTicks(0.1, 10), NiceTicks(0, 2, 2), "intensity", "speedup");
  const std::string svg = doc.Render();
  for (const char* label : {">0.1</text>", ">1</text>", ">10</text>", ">0</text>", ">2</text>"}) {
    EXPECT_TRUE(Contains(svg, label)) << label << "\n" << svg;
  }
  EXPECT_TRUE(Contains(svg, ">intensity</text>"));
  EXPECT_TRUE(Contains(svg, "transform=\"rotate(-90") && Contains(svg, ">speedup</text>"));
  // The tick at 1 sits in the middle of the log axis.
  EXPECT_TRUE(Contains(svg, "<line x1=\"160\" y1=\"10\" x2=\"160\" y2=\"160\" class=\"grid\""))
      << svg;
}

}  // namespace report_svg_test
}  // namespace kernelpro::report::svg
