// The suite reports on one hand-made optimize suite of six problems in two levels (four correct,
// a compile error and an LLM failure), alone and compared with a second suite. The statistics are
// written out by hand (computed once with Python from the speedups listed below), so these tests
// check only the rendering, never report/suite_stats.cc. Each rendering is a golden file, reviewed
// as text; regenerate after an intended change with
//   KERNELPRO_UPDATE_GOLDEN=1 build/kernelpro_tests --gtest_filter='SuiteReportGolden*'
// and read the diff before committing it (open the .html files in a browser too).
#include "report/suite_report.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "report/suite_report_view.h"

namespace kernelpro::report {
namespace report_suite_report_test {

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

std::vector<SpeedupBand> Bands(std::vector<int> counts) {
  const std::vector<std::string> labels = {"failed", "< 0.5x", "0.5-0.8x", "0.8-1x", "1-1.5x",
                                           "1.5-2x", "2-5x",   "5-10x",    ">= 10x"};
  std::vector<SpeedupBand> bands;
  for (size_t i = 0; i < labels.size(); ++i) bands.push_back({labels[i], counts[i]});
  return bands;
}

GroupStats Group(int n, int correct, std::vector<double> fast_p, double geomean,
                 std::optional<double> correct_only, double median, std::optional<double> min,
                 std::optional<double> max, double cap2, std::vector<int> bands) {
  GroupStats g;
  g.n = n;
  g.correct = correct;
  g.correct_rate = static_cast<double>(correct) / n;
  g.fast_p = fast_p;
  g.geomean_speedup = geomean;
  g.geomean_speedup_correct_only = correct_only;
  g.median_speedup = median;
  g.min_speedup = min;
  g.max_speedup = max;
  // Only the 2x cap clamps anything here (the largest speedup is 2.85x).
  g.capped_geomean = {cap2, geomean, geomean, geomean, geomean, geomean, geomean};
  g.distribution = Bands(bands);
  return g;
}

SuiteProblemRow Row(std::string key, int level, std::string status) {
  SuiteProblemRow r;
  r.key = key;
  r.name = key.substr(key.find('/') + 1);
  r.level = level;
  r.status = status;
  r.correct = status == "correct";
  r.seeds = 3;
  r.run_report = "tasks/" + key + "/seed-1/run/report.html";
  r.seconds = 3 * 240.5;  // its three runs; an optimize run's memory is not known
  return r;
}

SuiteProblemRow Timed(SuiteProblemRow r, double speedup, double low, double high, double other,
                      double reference_ms) {
  r.speedup = speedup;
  r.speedup_low = low;
  r.speedup_high = high;
  r.other_speedup = other;
  r.reference_ms = reference_ms;
  r.kernel_ms = reference_ms / speedup;
  r.sol_fraction = 0.25 * speedup;  // the reference at 25 % of the speed of light
  r.best = "tasks/" + r.key + "/seed-1/run/best.py";
  return r;
}

// Speedups (over eager): level 1: 1.52, 0.62, compile_error; level 2: 2.85 (noisy), 1.05,
// llm_error.
SuiteReportInput Suite() {
  SuiteReportInput in;
  in.title = "kb-l12-mcts";
  in.mode = "optimize";
  in.baseline = "eager";
  in.measurement = {"GPU: NVIDIA H200 (driver 570.86.15)",
                    "clocks as found: SM 1980 MHz, memory 3201 MHz (not locked)",
                    "timing: CUDA events around each call, L2 flushed between calls",
                    "trials: 100 timed calls per side in 10 interleaved rounds",
                    "per problem: best of 3 seeds"};
  SuiteProblemRow relu1 = Timed(Row("level1/19_ReLU", 1, "correct"), 1.52, 1.48, 1.57, 1.10, 0.210);
  relu1.shapes = "shapes: 3/3";
  in.rows.push_back(relu1);
  in.rows.push_back(Timed(Row("level1/1_Square_matrix_multiplication_", 1, "correct"), 0.62, 0.60,
                          0.64, 0.55, 1.930));
  SuiteProblemRow softmax = Row("level1/23_Softmax", 1, "compile_error");
  softmax.message =
      "kernel.cu(12): error: no operator \"<\" matches, operands \"Vec<float, 4>\"\nand int";
  in.rows.push_back(softmax);
  SuiteProblemRow gemm =
      Timed(Row("level2/12_Gemm_Multiply_LeakyReLU", 2, "correct"), 2.85, 2.10, 3.90, 2.31, 0.520);
  gemm.noisy = true;
  gemm.shapes = "fixed-shape";
  in.rows.push_back(gemm);
  in.rows.push_back(Timed(Row("level2/40_Matmul_Scaling_ResidualAdd", 2, "correct"), 1.05, 1.01,
                          1.09, 0.97, 0.780));
  SuiteProblemRow relu = Row("level2/76_Gemm_Add_ReLU", 2, "llm_error");
  relu.message = "openai: 429 Too Many Requests <rate limit> & 'gave up' after 5 tries";
  relu.run_report = "/elsewhere/run/report.html";  // not inside the suite: shown, not linked
  in.rows.push_back(relu);

  const double third = 1.0 / 3, two_thirds = 2.0 / 3;
  in.stats.overall = Group(6, 4, {two_thirds, two_thirds, 0.5, 0.5, third, 1.0 / 6}, 1.1886251,
                           1.2958877, 1.025, 0.62, 2.85, 1.1204929, {2, 0, 1, 0, 1, 1, 1, 0, 0});
  in.stats.levels[1] = Group(3, 2, {two_thirds, two_thirds, third, third, third, 0}, 0.9804191,
                             0.9707729, 1.0, 0.62, 1.52, 0.9804191, {1, 0, 1, 0, 0, 1, 0, 0, 0});
  in.stats.levels[2] =
      Group(3, 2, {two_thirds, two_thirds, two_thirds, two_thirds, third, third}, 1.4410467,
            1.7298844, 1.05, 1.05, 2.85, 1.2805792, {1, 0, 0, 0, 1, 0, 1, 0, 0});
  return in;
}

PairedProblem Pair(std::string key, int level, double a, bool a_correct, double b, bool b_correct,
                   double log_ratio) {
  return PairedProblem{key, level, a, b, a_correct, b_correct, log_ratio};
}

// The same suite against an ablation "kb-l12-no-profiling" with scores 1.20, 0.62, failed, 1.90,
// 1.10, 1.30 and one more problem (failed) of its own. scipy.stats.wilcoxon on the four non-zero
// differences, alternative="greater": statistic 6.0, p 0.4375.
SuiteReportInput Compared() {
  SuiteReportInput in = Suite();
  SuiteComparisonView view;
  view.other_title = "kb-l12-no-profiling";
  view.other_dir = "/scratch/suites/kb-l12-no-profiling";
  view.other_stats.overall =
      Group(7, 5, {5.0 / 7, 5.0 / 7, 4.0 / 7, 4.0 / 7, 1.0 / 7, 0}, 1.1057733, 1.1511516, 1.1, 0.62,
            1.9, 1.1057733, {2, 0, 1, 0, 3, 1, 0, 0, 0});
  Comparison& c = view.comparison;
  c.pairs = {Pair("level1/19_ReLU", 1, 1.52, true, 1.20, true, 0.2363888),
             Pair("level1/1_Square_matrix_multiplication_", 1, 0.62, true, 0.62, true, 0),
             Pair("level1/23_Softmax", 1, 1, false, 1, false, 0),
             Pair("level2/12_Gemm_Multiply_LeakyReLU", 2, 2.85, true, 1.90, true, 0.4054651),
             Pair("level2/40_Matmul_Scaling_ResidualAdd", 2, 1.05, true, 1.10, true, -0.0465200),
             Pair("level2/76_Gemm_Add_ReLU", 2, 1, false, 1.30, true, -0.2623643)};
  c.only_in_b = {"level2/99_Extra"};
  c.a_wins = 2;
  c.b_wins = 2;
  c.ties = 2;
  c.geomean_ratio = 1.0570637;
  c.wilcoxon.pairs = 6;
  c.wilcoxon.zeros = 2;
  c.wilcoxon.n = 4;
  c.wilcoxon.statistic = 6;
  c.wilcoxon.p_value = 0.4375;
  c.wilcoxon.exact = true;
  in.comparison = view;
  return in;
}

TEST(SuiteReportGoldenTest, EachRenderingReadsAsReviewed) {
  const bool update = std::getenv("KERNELPRO_UPDATE_GOLDEN") != nullptr;
  const SuiteReportInput suite = Suite(), compared = Compared();
  const std::map<std::string, std::string> renderings = {
      {"suite.html", RenderSuiteHtml(suite)},
      {"suite.md", RenderSuiteMarkdown(suite)},
      {"suite.csv", RenderSuiteCsv(suite)},
      {"suite.json", DumpJson(SuiteReportJson(suite), 1) + "\n"},
      {"compared.html", RenderSuiteHtml(compared)},
      {"compared.md", RenderSuiteMarkdown(compared)},
      {"compared.json", DumpJson(SuiteReportJson(compared), 1) + "\n"},
  };
  const std::string dir = kRoot + "/tests/golden/suite_report";
  for (const auto& [name, text] : renderings) {
    const std::string golden = dir + "/" + name;
    if (update) {
      std::filesystem::create_directories(dir);
      std::ofstream(golden) << text;
      continue;
    }
    ASSERT_TRUE(std::filesystem::exists(golden))
        << golden << " missing: run with KERNELPRO_UPDATE_GOLDEN=1";
    EXPECT_EQ(text, ReadFile(golden)) << name << " changed; review, then regenerate";
  }
}

TEST(SuiteReportTest, TheSameInputRendersByteIdenticalText) {
  const SuiteReportInput in = Compared();
  EXPECT_EQ(RenderSuiteHtml(in), RenderSuiteHtml(Compared()));
  EXPECT_EQ(RenderSuiteMarkdown(in), RenderSuiteMarkdown(Compared()));
  EXPECT_EQ(RenderSuiteCsv(in), RenderSuiteCsv(Compared()));
  EXPECT_EQ(DumpJson(SuiteReportJson(in)), DumpJson(SuiteReportJson(Compared())));
}

// `suite report` writes all four from one view: the same text as each renderer alone.
TEST(SuiteReportTest, AllRenderingsAtOnceAreTheSameAsEachAlone) {
  const SuiteReportInput in = Compared();
  const SuiteReportTexts texts = RenderSuiteReports(in);
  EXPECT_EQ(texts.html, RenderSuiteHtml(in));
  EXPECT_EQ(texts.markdown, RenderSuiteMarkdown(in));
  EXPECT_EQ(texts.csv, RenderSuiteCsv(in));
  EXPECT_EQ(DumpJson(texts.json), DumpJson(SuiteReportJson(in)));
}

// Each fact is computed once, in the view: both renderers print what the view holds, whatever it
// holds, so a change to a fact is made in one place.
TEST(SuiteReportTest, BothRenderingsPrintTheFactsOfTheirOneView) {
  const SuiteReportInput in = Compared();
  SuiteReportView view = BuildSuiteReportView(in);
  EXPECT_EQ(RenderSuiteReportMarkdown(view), RenderSuiteMarkdown(in));
  EXPECT_EQ(RenderSuiteReportHtml(view), RenderSuiteHtml(in));
  ASSERT_TRUE(view.comparison);
  view.groups.back().geomean = "GEOMEAN-FROM-THE-VIEW";
  view.problems.front().speedup_text = "SPEEDUP-FROM-THE-VIEW";
  view.comparison->wilcoxon = "TEST-FROM-THE-VIEW";
  view.comparison->pairs.front().ratio = "RATIO-FROM-THE-VIEW";
  for (const std::string& text : {RenderSuiteReportMarkdown(view), RenderSuiteReportHtml(view)}) {
    for (const char* fact : {"GEOMEAN-FROM-THE-VIEW", "SPEEDUP-FROM-THE-VIEW", "TEST-FROM-THE-VIEW",
                             "RATIO-FROM-THE-VIEW"}) {
      EXPECT_TRUE(Contains(text, fact)) << fact << "\n" << text;
    }
  }
}

TEST(SuiteReportTest, HtmlIsOneOfflinePageWithEscapedText) {
  const std::string html = RenderSuiteHtml(Compared());
  // Nothing to fetch: no URL at all (inline SVG in HTML needs no xmlns), no script, no stylesheet.
  EXPECT_FALSE(Contains(html, "http")) << "the page must not reach the network";
  EXPECT_FALSE(Contains(html, "<script"));
  EXPECT_FALSE(Contains(html, "<link"));
  EXPECT_FALSE(Contains(html, "url("));
  EXPECT_FALSE(Contains(html, "@import"));
  // The messages' markup is shown as text.
  EXPECT_TRUE(Contains(html, "no operator &quot;&lt;&quot; matches"));
  EXPECT_TRUE(Contains(html, "&lt;rate limit&gt; &amp; &#39;gave up&#39;"));
  EXPECT_FALSE(Contains(html, "<rate limit>"));
  EXPECT_EQ(Count(html, "<svg"), 2) << "the fast_p curve and the distribution";
}

TEST(SuiteReportTest, HtmlOpensWithTheSuiteAndHowItWasMeasured) {
  const std::string html = RenderSuiteHtml(Suite());
  const size_t title = html.find("<h1>kernelpro suite: kb-l12-mcts</h1>");
  const size_t gpu = html.find("<li>GPU: NVIDIA H200 (driver 570.86.15)</li>");
  const size_t summary = html.find("<h2>Summary</h2>");
  ASSERT_NE(title, std::string::npos);
  ASSERT_NE(gpu, std::string::npos);
  EXPECT_LT(title, gpu);
  EXPECT_LT(gpu, summary);
  EXPECT_TRUE(Contains(html, "<th>Baseline</th><td>eager: every speedup"));
  EXPECT_TRUE(Contains(html, "<th>Problems</th><td>6, 4 correct (66.7%)</td>"));
}

TEST(SuiteReportTest, SummaryShowsBothGeomeansWithTheirConventions) {
  const std::string html = RenderSuiteHtml(Suite());
  EXPECT_TRUE(Contains(html, "<th>geomean (failures 1.0x)</th><th>geomean (correct only)</th>"));
  // overall: 6 problems, 4 correct; fast_0.8 = 3/6; geomeans 1.19x and 1.30x.
  EXPECT_TRUE(Contains(html,
                       "<tr class=\"overall\"><td>overall</td><td class=\"num\">6</td><td "
                       "class=\"num\">4 (66.7%)</td><td class=\"num\">66.7%</td><td "
                       "class=\"num\">66.7%</td><td class=\"num\">50.0%</td>"));
  EXPECT_TRUE(Contains(html, "<td class=\"num\">1.19x</td><td class=\"num\">1.30x</td>"));
  EXPECT_TRUE(Contains(html, "counted as 1.00x"));
  EXPECT_TRUE(Contains(html, "KernelBench&#39;s convention"));
  const std::string md = RenderSuiteMarkdown(Suite());
  EXPECT_TRUE(Contains(md,
                       "| **overall** | 6 | 4 (66.7%) | 66.7% | 66.7% | 50.0% | 50.0% | "
                       "33.3% | 16.7% | 1.19x | 1.30x | 1.02x | 0.62x | 2.85x |"));
  EXPECT_TRUE(Contains(md, "| level 2 | 1.28x | 1.44x | 1.44x |"));  // capping: 2x, then 5x
}

TEST(SuiteReportTest, ProblemsLinkToTheirRunsFromTheReportFolder) {
  const std::string html = RenderSuiteHtml(Suite());
  // report.html sits in SUITE/report/, the rows' paths are relative to SUITE.
  EXPECT_TRUE(Contains(html,
                       "<a href=\"../tasks/level1/19_ReLU/seed-1/run/report.html\">run "
                       "report</a> · <a href=\"../tasks/level1/19_ReLU/seed-1/run/"
                       "best.py\">best kernel</a>"));
  // A path outside the suite is shown, never linked.
  EXPECT_TRUE(Contains(html, "<code>/elsewhere/run/report.html</code>"));
  EXPECT_FALSE(Contains(html, "href=\"../elsewhere"));
  EXPECT_FALSE(Contains(html, "href=\"..//elsewhere"));
  EXPECT_TRUE(Contains(html, "<td><span class=\"fail\">compile_error</span>"));
  EXPECT_TRUE(Contains(html, "<td><span class=\"muted\">llm_error</span>"));
  EXPECT_TRUE(Contains(html,
                       "<td class=\"num\">2.85x [2.10, 3.90] <span class=\"noisy\">"
                       "noisy</span></td><td class=\"num\">2.31x"));
  EXPECT_TRUE(Contains(html, "<th>vs torch.compile</th>"));
  const std::string md = RenderSuiteMarkdown(Suite());
  EXPECT_TRUE(Contains(md, "[run report](../tasks/level1/19_ReLU/seed-1/run/report.html)"));
}

TEST(SuiteReportTest, ComparisonStatesTheTestAsASentence) {
  const std::string html = RenderSuiteHtml(Compared());
  EXPECT_TRUE(Contains(html,
                       "One-sided Wilcoxon signed-rank test on ln(a) - ln(b) (H1: kb-l12-mcts is "
                       "faster), n = 4 non-zero pairs (2 ties dropped): W+ = 6, p = 0.438 "
                       "(exact)."));
  EXPECT_TRUE(Contains(html,
                       "6 paired problems: kb-l12-mcts faster on 2, kb-l12-no-profiling "
                       "faster on 2, 2 ties. Geometric mean of the ratios a/b: 1.06x."));
  EXPECT_TRUE(Contains(html, "only in kb-l12-no-profiling: level2/99_Extra"));
  EXPECT_TRUE(Contains(html,
                       "<td class=\"num\">1.00x (failed)</td><td class=\"num\">1.30x</td>"
                       "<td class=\"num\">0.77x</td><td class=\"fail\">"
                       "kb-l12-no-profiling</td>"));
  EXPECT_TRUE(Contains(html, "class=\"curve compared\"")) << "the other suite's fast_p, dashed";
  EXPECT_FALSE(Contains(RenderSuiteHtml(Suite()), "Wilcoxon"));

  SuiteReportInput large = Compared();
  WilcoxonResult& w = large.comparison->comparison.wilcoxon;
  w = WilcoxonResult{80, 5, 75, 1850.5, 0.0000241, false, 4.06};
  EXPECT_TRUE(Contains(RenderSuiteMarkdown(large),
                       "n = 75 non-zero pairs (5 ties dropped): W+ = 1850.5, p = 2.4e-05 (normal "
                       "approximation with continuity correction, z = 4.06)."));
}

// RFC 4180 read back: fields split on commas outside quotes, "" inside quotes is one quote.
std::vector<std::vector<std::string>> ParseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        rows.back().back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        rows.back().back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().emplace_back();
    } else if (c == '\n') {
      rows.emplace_back(1);
    } else {
      rows.back().back() += c;
    }
  }
  if (rows.back().size() == 1 && rows.back()[0].empty()) rows.pop_back();
  return rows;
}

TEST(SuiteReportTest, CsvParsesBackToTheRows) {
  const SuiteReportInput in = Suite();
  const auto rows = ParseCsv(RenderSuiteCsv(in));
  ASSERT_EQ(rows.size(), in.rows.size() + 1);
  EXPECT_EQ(rows[0],
            (std::vector<std::string>{"key", "level", "status", "correct", "speedup", "speedup_low",
                                      "speedup_high", "other_speedup", "reference_ms", "kernel_ms",
                                      "sol_fraction", "noisy", "seeds", "candidates", "best",
                                      "run_report", "message", "seconds", "peak_device_bytes"}));
  for (const auto& row : rows) EXPECT_EQ(row.size(), 19u) << row[0];
  EXPECT_EQ(rows[1][0], "level1/19_ReLU");
  EXPECT_EQ(rows[1][4], "1.52");
  EXPECT_EQ(rows[1][3], "true");
  EXPECT_EQ(rows[1][10], "0.38");  // sol_fraction
  // A failure: empty cells where nothing is known, its message whole (comma, quotes, newline).
  EXPECT_EQ(rows[3][2], "compile_error");
  EXPECT_EQ(rows[3][4], "");
  EXPECT_EQ(rows[3][16], in.rows[2].message);
  EXPECT_EQ(rows[4][11], "true");   // noisy
  EXPECT_EQ(rows[1][17], "721.5");  // seconds: three runs of 240.5 s
  EXPECT_EQ(rows[1][18], "");       // peak_device_bytes: unknown for optimize runs
}

// An eval suite on a GPU: each problem's wall time and peak device memory, in every rendering.
TEST(SuiteReportTest, EachProblemShowsItsWallTimeAndPeakDeviceMemory) {
  SuiteReportInput in = Suite();
  in.mode = "eval";
  for (SuiteProblemRow& row : in.rows) row.candidates = 2;
  in.rows[0].seconds = 160.599;
  in.rows[0].peak_device_bytes = 43415240704;  // 40.43 GiB: referee 18.67 + candidate 21.77
  in.rows[1].seconds.reset();                  // a result from before times were kept
  in.rows[1].peak_device_bytes.reset();
  const std::string md = RenderSuiteMarkdown(in);
  EXPECT_TRUE(Contains(md, "| candidates | wall s | peak GiB | files | why it failed |")) << md;
  EXPECT_TRUE(Contains(md, "| 38 % | 2 | 160.6 | 40.4 | [run report]")) << md;
  EXPECT_TRUE(Contains(md, "| 16 % | 2 | - | - | [run report]")) << md;
  const std::string html = RenderSuiteHtml(in);
  EXPECT_TRUE(Contains(html, "<th>candidates</th><th>wall s</th><th>peak GiB</th><th>files</th>"));
  EXPECT_TRUE(Contains(html,
                       "<td class=\"num\">2</td><td class=\"num\">160.6</td><td "
                       "class=\"num\">40.4</td><td class=\"files\">"))
      << html;
  const auto csv = ParseCsv(RenderSuiteCsv(in));
  EXPECT_EQ(csv[1][17], "160.599");
  EXPECT_EQ(csv[1][18], "43415240704");
  EXPECT_EQ(csv[2][17], "");
  EXPECT_EQ(csv[2][18], "");
  const Json json = SuiteReportJson(in);
  EXPECT_DOUBLE_EQ(json["problems"][0]["seconds"].get<double>(), 160.599);
  EXPECT_EQ(json["problems"][0]["peak_device_bytes"].get<long long>(), 43415240704);
  EXPECT_TRUE(json["problems"][1]["seconds"].is_null());
  EXPECT_TRUE(json["problems"][1]["peak_device_bytes"].is_null());
  EXPECT_DOUBLE_EQ(json["problems"][2]["seconds"].get<double>(), 721.5);
}

TEST(SuiteReportTest, JsonHasTheKeysScriptsReadAndNullsWhereNothingIsKnown) {
  SuiteReportInput in = Suite();
  in.stats.levels[1].geomean_speedup_correct_only.reset();  // as if no level-1 kernel were correct
  const Json json = SuiteReportJson(in);
  for (const char* key :
       {"title", "mode", "baseline", "measurement", "overall", "levels", "problems"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
  EXPECT_FALSE(json.contains("wilcoxon"));
  EXPECT_FALSE(json.contains("compare"));
  const Json& overall = json["overall"];
  for (const char* key :
       {"n", "correct", "correct_rate", "fast_p", "geomean_speedup", "geomean_speedup_correct_only",
        "median_speedup", "min_speedup", "max_speedup", "capped_geomean", "distribution"}) {
    EXPECT_TRUE(overall.contains(key)) << key;
  }
  std::set<std::string> fast_p_keys;
  for (const auto& [key, value] : overall["fast_p"].items()) fast_p_keys.insert(key);
  EXPECT_EQ(fast_p_keys, (std::set<std::string>{"0", "0.5", "0.8", "1.0", "1.5", "2.0"}));
  EXPECT_DOUBLE_EQ(overall["fast_p"]["0.8"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(overall["correct_rate"].get<double>(), 4.0 / 6);  // a fraction, not percent
  EXPECT_TRUE(json["levels"].contains("1"));
  EXPECT_TRUE(json["levels"].contains("2"));
  EXPECT_TRUE(json["levels"]["1"]["geomean_speedup_correct_only"].is_null());
  EXPECT_DOUBLE_EQ(overall["capped_geomean"]["2"].get<double>(), 1.1204929);
  EXPECT_TRUE(json["problems"][2]["speedup"].is_null());

  const Json compared = SuiteReportJson(Compared());
  ASSERT_TRUE(compared.contains("wilcoxon"));
  EXPECT_EQ(compared["wilcoxon"]["n"], 4);
  EXPECT_DOUBLE_EQ(compared["wilcoxon"]["statistic"].get<double>(), 6);
  EXPECT_DOUBLE_EQ(compared["wilcoxon"]["p_value"].get<double>(), 0.4375);
  EXPECT_EQ(compared["wilcoxon"]["alternative"], "greater");
  EXPECT_EQ(compared["compare"]["other"], "kb-l12-no-profiling");
  EXPECT_EQ(compared["compare"]["pairs"].size(), 6u);
  EXPECT_TRUE(compared["compare"]["cap"].is_null());
}

}  // namespace report_suite_report_test
}  // namespace kernelpro::report
