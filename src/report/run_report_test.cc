// The run reports on one synthetic three-iteration run (a seed accepted, a failed seed repaired
// into a slower kernel, the seed optimised into the best), rendered as Markdown and as HTML. Each
// rendering is a golden file, reviewed as text; regenerate after an intended change with
//   KERNELPRO_UPDATE_GOLDEN=1 build/kernelpro_tests --gtest_filter='RunReportGolden*'
// and read the diff before committing it (open the .html in a browser too).
#include "report/run_report.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "report/run_report_view.h"

namespace kernelpro::report {
namespace report_run_report_test {

const std::string kRoot = KERNELPRO_SOURCE_DIR;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

search::CandidateOutcome Correct(double estimate, double low, double high) {
  search::CandidateOutcome o;
  o.status = eval::EvalStatus::kCorrect;
  o.speedup = RatioInterval{estimate, low, high, 0.95};
  return o;
}

search::CandidateOutcome Failed(eval::EvalStatus status) {
  search::CandidateOutcome o;
  o.status = status;
  return o;
}

// The tree, what the orchestrator knows of each node, and a report input over both.
//
//   ROOT ─┬─ n1 initial   correct 1.20x [1.10, 1.30] accepted ─┬─ n5 optimize correct 2.00x (best)
//         │                                                     └─ n6 optimize runtime_error
//         └─ n2 initial   compile_error ─┬─ n3 debug incorrect
//                                         └─ n4 debug correct 0.90x [0.85, 0.95] not accepted
struct SyntheticRun {
  SyntheticRun() {
    EXPECT_TRUE(
        tree.AddExpansion(search::Tree::kRootId, agents::PromptMode::kInitial,
                          {Correct(1.20, 1.10, 1.30), Failed(eval::EvalStatus::kCompileError)},
                          {0.18, -1.0})
            .ok());
    EXPECT_TRUE(tree.AddExpansion(2, agents::PromptMode::kDebug,
                                  {Failed(eval::EvalStatus::kIncorrect), Correct(0.90, 0.85, 0.95)},
                                  {-0.5, -0.1})
                    .ok());
    EXPECT_TRUE(
        tree.AddExpansion(1, agents::PromptMode::kOptimize,
                          {Correct(2.00, 1.90, 2.10), Failed(eval::EvalStatus::kRuntimeError)},
                          {0.69, -1.0})
            .ok());
    tree.MarkTerminal(6);

    auto info = [this](int id, int iteration, const std::string& strategy) -> search::NodeInfo& {
      search::NodeInfo& n = nodes[id];
      n.node_id = id + 1;
      n.candidate_id = id;
      n.iteration = iteration;
      n.strategy = strategy;
      n.file = "candidates/000" + std::to_string(id) + ".py";
      return n;
    };
    search::NodeInfo& n1 = info(1, 1, "one thread per element, float4 loads");
    n1.verdict = "accepted";
    n1.candidate_ms = 0.100;
    n1.tools_fired = {"memory_coalescing"};
    search::NodeInfo& n2 = info(2, 1, "shared-memory tiles | cp.async");
    n2.errors =
        "kernel.cu(12): error: no operator \"<\" matches these operands\n"
        "            operand types are: Vec<float, 4> < int\n"
        "  if (v < 0 && idx < n) {\n"
        "        ^\n"
        "1 error detected in the compilation of \"kernel.cu\".";
    search::NodeInfo& n3 = info(3, 2, "fix the comparison with a lane-wise any()");
    n3.errors = "outputs differ from the reference: max_abs_err 0.25 at [3, 17]";
    search::NodeInfo& n4 = info(4, 2, "compare component by component");
    n4.verdict = "not accepted";
    n4.shapes = "fixed-shape";  // correct on the benchmark's shape only
    n4.candidate_ms = 0.133;
    search::NodeInfo& n5 = info(5, 3, "grid-stride loop, __expf, 8 elements per thread");
    n5.verdict = "accepted";
    n5.shapes = "shapes: 3/3";
    n5.candidate_ms = 0.060;
    n5.tools_fired = {"fast_math_intrinsics", "warp_stall"};
    search::NodeInfo& n6 = info(6, 3, "persistent kernel with a global atomic counter");
    n6.errors = "CUDA error: an illegal memory access was encountered";

    input.config.problem = "/work/problems/swish.py";
    input.config.run_dir = "/work/runs/swish-20250101";
    input.config.iterations = 3;
    input.config.candidates = 2;
    input.config.search = "mcts";
    input.config.device = "cuda";
    input.config.memory = false;
    input.summary.stop = search::StopReason::kIterations;
    input.summary.stop_message = "3 iterations done";
    input.summary.iterations_done = 3;
    input.summary.best = 5;
    input.summary.cost_usd = 0.0421;
    input.summary.exchanges = 6;
    input.summary.notes = {"memory: off (--no-memory)",
                           "profiling n6: ncu exited with 1 (<no kernels profiled>)"};
    input.tree = &tree;
    input.nodes = &nodes;
    input.environment = {"cuda", "NVIDIA H200", "570.86.15", "torch 2.11.0, CUDA 13.0"};
    input.llm = "openai:gpt-4o";

    roofline::ReferenceAnalysis stage1;
    stage1.problem = input.config.problem;
    stage1.device = "cuda";
    stage1.gpu = "h200";
    stage1.gpu_name = "NVIDIA H200 SXM";
    stage1.precision = "fp32";
    stage1.bottleneck = roofline::Bottleneck::kMemory;
    stage1.confidence = "high";
    stage1.flops = 4.0e6;
    stage1.min_bytes = 8.0e6;
    stage1.roofline.attainable_time_s = 1.7e-6;
    stage1.peak_flops = 67e12;
    stage1.dram_bytes_per_s = 4.8e12;
    input.stage1 = stage1;
    // ncu's DRAM traffic of two of the three correct kernels (n4 was not profiled).
    input.dram_bytes = {{1, 9.0e6}, {5, 8.2e6}};
    input.best_source = "class ModelNew(torch.nn.Module):\n    pass  # `x` < y && z\n";
  }

  search::Tree tree;
  std::map<int, search::NodeInfo> nodes;
  RunReportInput input;
};

// Offsets of each of `needles` in `text`, npos where missing.
std::vector<size_t> Positions(const std::string& text, const std::vector<std::string>& needles) {
  std::vector<size_t> at;
  for (const std::string& n : needles) at.push_back(text.find(n));
  return at;
}

bool Contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(RunReportGoldenTest, EachRenderingReadsAsReviewed) {
  const bool update = std::getenv("KERNELPRO_UPDATE_GOLDEN") != nullptr;
  SyntheticRun run;
  const std::map<std::string, std::string> renderings = {
      {"synthetic_run.md", RenderMarkdownReport(run.input)},
      {"synthetic_run.html", RenderHtmlReport(run.input)},
  };
  for (const auto& [name, text] : renderings) {
    std::string golden = kRoot + "/tests/golden/report/" + name;
    if (update) {
      std::filesystem::create_directories(kRoot + "/tests/golden/report");
      std::ofstream(golden) << text;
      continue;
    }
    ASSERT_TRUE(std::filesystem::exists(golden))
        << golden << " missing: run with KERNELPRO_UPDATE_GOLDEN=1";
    EXPECT_EQ(text, ReadFile(golden)) << name << " changed; review, then regenerate";
  }
}

// The part of `text` from `begin` up to `end` (or its end), "" when `begin` is missing.
std::string Section(const std::string& text, const std::string& begin, const std::string& end) {
  size_t from = text.find(begin);
  if (from == std::string::npos) return "";
  size_t to = text.find(end, from);
  return text.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

TEST(RunReportTest, HtmlShowsTheBestSpeedupWithItsIntervalAndTheLineageInOrder) {
  SyntheticRun run;
  const std::string html = RenderHtmlReport(run.input);
  EXPECT_TRUE(Contains(html,
                       "Best kernel: <strong><a href=\"#n5\">n5</a></strong> (<a "
                       "href=\"candidates/0005.py\"><code>candidates/0005.py</code></a>, saved "
                       "as <a href=\"best.py\"><code>best.py</code></a>), "
                       "<strong>2.00x</strong> over the reference, 95% interval "
                       "[1.90, 2.10]."))
      << html;
  EXPECT_TRUE(Contains(html,
                       "n5 is faster than its parent n1 (1.20x [1.10, 1.30]) beyond the "
                       "timing noise"));
  EXPECT_TRUE(Contains(html, "Roofline: reaches 3 % of the attainable bound"));

  const std::string lineage = Section(html, "<h3>Best lineage</h3>", "</table>");
  std::vector<size_t> at =
      Positions(lineage, {"<td>ROOT</td>", ">n1</a></td><td>1</td>", ">n5</a></td><td>3</td>"});
  for (size_t i = 0; i < at.size(); ++i) ASSERT_NE(at[i], std::string::npos) << i << lineage;
  EXPECT_LT(at[0], at[1]);
  EXPECT_LT(at[1], at[2]);
  EXPECT_TRUE(Contains(lineage, "2.00x [1.90, 2.10]"));
  EXPECT_TRUE(Contains(lineage, "grid-stride loop, __expf, 8 elements per thread"));
  EXPECT_FALSE(Contains(lineage, "n4")) << "n4 is not on the best lineage";

  // Each node's bar is its speedup relative to the best's (2.00x); the reference is 1x.
  EXPECT_TRUE(Contains(lineage, "width:60.0%")) << "n1: 1.20 / 2.00";
  EXPECT_TRUE(Contains(lineage, "width:100.0%")) << "n5 is the best";
  EXPECT_TRUE(Contains(lineage, "width:50.0%")) << "ROOT";
  EXPECT_TRUE(Contains(Section(html, "<li id=\"n4\">", "</li>"), "width:45.0%"));
}

TEST(RunReportTest, HtmlTreeShowsEveryNodeAndTheErrorsOfFailedOnes) {
  SyntheticRun run;
  const std::string html = RenderHtmlReport(run.input);
  const std::string tree = Section(html, "<h2>Search tree</h2>", "<h2>Notes</h2>");
  for (int id = 1; id <= 6; ++id) {
    EXPECT_TRUE(Contains(tree, "<li id=\"n" + std::to_string(id) + "\">")) << id;
  }
  // n1's children sit inside n1's item: the tree's shape survives.
  EXPECT_LT(tree.find("id=\"n1\""), tree.find("id=\"n5\""));
  EXPECT_LT(tree.find("id=\"n5\""), tree.find("id=\"n2\""));
  const std::string n4 = Section(tree, "<li id=\"n4\">", "</li>");
  EXPECT_TRUE(Contains(n4, "correct 0.90x [0.85, 0.95]</span> · not accepted")) << n4;
  const std::string n5 = Section(tree, "<li id=\"n5\">", "</li>");
  EXPECT_TRUE(Contains(n5, "Tools that fired: fast_math_intrinsics, warp_stall")) << n5;
  const std::string n6 = Section(tree, "<li id=\"n6\">", "</li>");
  EXPECT_TRUE(Contains(n6, "runtime_error")) << n6;
  EXPECT_TRUE(Contains(n6, "terminal")) << n6;
  EXPECT_TRUE(Contains(n6, "<pre>CUDA error: an illegal memory access was encountered</pre>"))
      << n6;

  // A compiler's message, escaped, whole lines kept.
  const std::string n2 = Section(tree, "<li id=\"n2\">", "<ul>");
  EXPECT_TRUE(Contains(n2, "compile_error")) << n2;
  EXPECT_TRUE(Contains(n2,
                       "kernel.cu(12): error: no operator &quot;&lt;&quot; matches these "
                       "operands\n            operand types are: Vec&lt;float, 4&gt; &lt; "
                       "int\n  if (v &lt; 0 &amp;&amp; idx &lt; n) {"))
      << n2;
  EXPECT_FALSE(Contains(html, "Vec<float"));
  EXPECT_FALSE(Contains(html, "&& idx"));
}

TEST(RunReportTest, HtmlEscapesEveryTextFromTheRun) {
  const std::string hostile = "<script>alert(1)</script> & \"quotes\" 'too'";
  const std::string escaped =
      "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot; &#39;too&#39;";
  SyntheticRun run;
  run.nodes[5].strategy = hostile;  // on the best lineage and in the tree
  run.nodes[5].tools_fired = {hostile};
  run.nodes[6].errors = hostile;
  run.nodes[1].file = hostile;
  run.input.llm = hostile;
  run.input.config.problem = "/tmp/" + hostile + ".py";
  run.input.config.run_dir = hostile;
  run.input.environment.toolchain = hostile;
  run.input.summary.stop_message = hostile;
  run.input.summary.notes = {hostile};
  const std::string html = RenderHtmlReport(run.input);

  std::string lower = html;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  EXPECT_FALSE(Contains(lower, "<script")) << html;
  EXPECT_FALSE(Contains(html, "\"quotes\""));
  EXPECT_FALSE(Contains(html, "'too'"));
  // Each piece shows up, escaped: lineage, tree, tools, errors, iteration table, header, notes.
  size_t count = 0;
  for (size_t at = html.find(escaped); at != std::string::npos; at = html.find(escaped, at + 1))
    ++count;
  EXPECT_GE(count, 10u) << html;
  EXPECT_TRUE(Contains(Section(html, "<h3>Best lineage</h3>", "</table>"), escaped));
  EXPECT_TRUE(Contains(Section(html, "<h2>Notes</h2>", "</ul>"), "<li>" + escaped + "</li>"));
  EXPECT_TRUE(Contains(Section(html, "<li id=\"n6\">", "</li>"), "<pre>" + escaped + "</pre>"));
}

// Honest wording: a cost without a price, a run on cpu, a noisy best timing.
TEST(RunReportTest, CostWithoutAPriceIsUnknownNotZero) {
  SyntheticRun run;
  run.input.cost_known = false;
  run.input.summary.cost_usd = 0;
  for (const std::string& text : {RenderMarkdownReport(run.input), RenderHtmlReport(run.input)}) {
    EXPECT_TRUE(Contains(text, "6, cost unknown (no price for the model")) << text;
    EXPECT_FALSE(Contains(text, "$0.0000"));
  }
}

TEST(RunReportTest, ToolCallsPastTheCapAreCountedOnceAcrossIterations) {
  SyntheticRun run;
  // 150 calls in each of two iterations: 200 are listed, 100 counted, in both renderings.
  for (int iteration : {1, 2}) {
    for (int i = 0; i < 150; ++i) {
      run.input.tool_calls[iteration].push_back(
          {"search_cutlass",
           Json{{"regex", "call" + std::to_string(iteration) + "_" + std::to_string(i)}}, "1 match",
           false});
    }
  }
  const std::string markdown = RenderMarkdownReport(run.input);
  EXPECT_EQ(Count(markdown, "- iteration "), 200) << markdown;
  EXPECT_TRUE(Contains(markdown, "- ... 100 more (the run store keeps them all)"));
  EXPECT_EQ(Count(markdown, "call2_"), 50);
  const std::string html = RenderHtmlReport(run.input);
  EXPECT_EQ(Count(html, "call2_"), 50) << html;
  EXPECT_TRUE(Contains(html, "... 100 more (the run store keeps them all)"));
}

TEST(RunReportTest, ACpuRunSaysItProfiledNothing) {
  SyntheticRun run;
  const std::string what = "no profiling (no ncu counters, no SASS, no timeline), no roofline";
  EXPECT_FALSE(Contains(RenderMarkdownReport(run.input), what));  // the cuda run did profile
  run.input.config.device = "cpu";
  run.input.environment = {"cpu", "", "", "torch 1.13.0"};
  run.input.stage1.reset();
  for (const std::string& text : {RenderMarkdownReport(run.input), RenderHtmlReport(run.input)}) {
    EXPECT_TRUE(Contains(text, "Not done on cpu")) << text;
    EXPECT_TRUE(Contains(text, what)) << text;
  }
}

TEST(RunReportTest, ANoisyBestSaysSoInWordsThatFollowItsInterval) {
  SyntheticRun run;
  run.nodes[5].noisy_timing = true;  // its calls spread more than their median
  run.nodes[5].verdict = "not accepted";
  auto verdict = JudgeBest(run.tree, &run.nodes);
  ASSERT_TRUE(verdict);
  EXPECT_TRUE(verdict->noisy);
  // 2.00x [1.90, 2.10] lies above its parent's [1.10, 1.30]: the words say so, and that the
  // margin is uncertain; they never say "not shown to be faster".
  EXPECT_TRUE(verdict->clearly_faster);
  EXPECT_TRUE(Contains(verdict->text, "its interval lies above, though its timing is noisy"))
      << verdict->text;
  EXPECT_TRUE(Contains(verdict->text, "the margin is uncertain")) << verdict->text;
  for (const std::string& text : {RenderMarkdownReport(run.input), RenderHtmlReport(run.input)}) {
    EXPECT_TRUE(Contains(text, "though its timing is noisy")) << text;
    EXPECT_TRUE(Contains(text, "not accepted (noisy timing)")) << text;
    EXPECT_FALSE(Contains(text, "not shown to be faster")) << text;
  }
}

TEST(RunReportTest, WhenNoKernelIsShownFasterTheReferenceIsTheAnswerAndNoBestPyIsWritten) {
  search::Tree tree;
  ASSERT_TRUE(tree.AddExpansion(search::Tree::kRootId, agents::PromptMode::kInitial,
                                {Correct(0.88, 0.63, 1.28), Correct(0.40, 0.33, 0.50)}, {0, 0})
                  .ok());
  SyntheticRun run;
  run.input.tree = &tree;
  run.input.summary.best = tree.BestNode();
  EXPECT_EQ(run.input.summary.best, std::nullopt);
  EXPECT_EQ(JudgeBest(tree), std::nullopt);
  const std::string says =
      "Best: the reference; no kernel was shown faster than the reference: "
      "the fastest correct one, n1 (0.88x [0.63, 1.28]), does not have its "
      "whole interval above 1x";
  EXPECT_TRUE(Contains(RenderMarkdownReport(run.input), says)) << RenderMarkdownReport(run.input);
  EXPECT_TRUE(Contains(RenderHtmlReport(run.input), says));
  EXPECT_FALSE(Contains(RenderMarkdownReport(run.input), "No correct kernel was found"));
}

// Each fact is computed once, in the view: both renderers print what the view holds, whatever it
// holds, so a change to a fact is made in one place.
TEST(RunReportTest, BothRenderingsPrintTheFactsOfTheirOneView) {
  SyntheticRun run;
  RunReportView view = BuildRunReportView(run.input);
  EXPECT_EQ(RenderRunReportMarkdown(view), RenderMarkdownReport(run.input));
  EXPECT_EQ(RenderRunReportHtml(view), RenderHtmlReport(run.input));
  ASSERT_TRUE(view.best);
  view.best->verdict = "VERDICT-FROM-THE-VIEW";
  view.header.push_back({"Planted", "HEADER-FROM-THE-VIEW"});
  view.nodes[3].first_error_line = "ERROR-LINE-FROM-THE-VIEW";
  view.iterations[1].outcome = "OUTCOME-FROM-THE-VIEW";
  view.notes = {"NOTE-FROM-THE-VIEW"};
  for (const std::string& text : {RenderRunReportMarkdown(view), RenderRunReportHtml(view)}) {
    for (const char* fact :
         {"VERDICT-FROM-THE-VIEW", "HEADER-FROM-THE-VIEW", "ERROR-LINE-FROM-THE-VIEW",
          "OUTCOME-FROM-THE-VIEW", "NOTE-FROM-THE-VIEW"}) {
      EXPECT_TRUE(Contains(text, fact)) << fact << "\n" << text;
    }
  }
}

TEST(RunReportTest, HtmlSaysWhatTheMarkdownSays) {
  SyntheticRun run;
  const std::string md = RenderMarkdownReport(run.input);
  const std::string html = RenderHtmlReport(run.input);
  for (const std::string& fact : {
           std::string("/work/runs/swish-20250101"),
           std::string("cuda (NVIDIA H200), driver 570.86.15"),
           std::string("torch 2.11.0, CUDA 13.0"),
           std::string("openai:gpt-4o"),
           std::string("mcts, 3 of 3 iterations, 2 candidates each, feedback tools, memory off"),
           std::string("6, cost $0.0421"),
           std::string("6 evaluated, 3 correct"),
           std::string("memory-bound on NVIDIA H200 SXM (fp32, confidence high)"),
           std::string("n5 is faster than its parent n1 (1.20x [1.10, 1.30]) beyond the timing "
                       "noise: its interval lies above."),
           std::string("reaches 3 % of the attainable bound (60.0 us measured, 1.7 us roofline; "
                       "66.67 GFLOP/s, 133.33 GB/s)"),
           std::string("n3 incorrect; n4 correct 0.90x [0.85, 0.95] not accepted"),
           std::string("n5: fast_math_intrinsics, warp_stall"),
           std::string("(the reference; visits 6, mean reward -0.29)"),
           std::string("reward -0.10 · visits 1"),
           std::string("memory: off (--no-memory)"),
       }) {
    EXPECT_TRUE(Contains(md, fact)) << "markdown lacks: " << fact;
    EXPECT_TRUE(Contains(html, fact)) << "html lacks: " << fact;
  }
  EXPECT_TRUE(Contains(md, "profiling n6: ncu exited with 1 (<no kernels profiled>)"));
  EXPECT_TRUE(Contains(html, "profiling n6: ncu exited with 1 (&lt;no kernels profiled&gt;)"));
}

TEST(RunReportTest, HtmlIsOneOfflinePageAndTheSameRunRendersTheSameBytes) {
  SyntheticRun run;
  const std::string html = RenderHtmlReport(run.input);
  SyntheticRun again;
  EXPECT_EQ(html, RenderHtmlReport(again.input));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_TRUE(Contains(html, "<style>"));
  EXPECT_TRUE(Contains(html, "</html>\n"));
  for (const char* outside :
       {"http:", "https:", "<link", "<script", "<img", "src=", "@import", "url(", "@font-face"}) {
    EXPECT_FALSE(Contains(html, outside)) << outside;
  }
}

// The tags of an HTML page, in order: ("p", open), ("/p", close); self-closed SVG shapes and
// HTML's void elements are left out. Enough to see that every element opened is closed in order.
std::vector<std::string> UnbalancedTags(const std::string& html) {
  static const std::set<std::string> kVoid = {"meta", "br", "hr", "img", "input", "link"};
  std::vector<std::string> open, problems;
  for (size_t at = html.find('<'); at != std::string::npos; at = html.find('<', at + 1)) {
    if (html.compare(at, 2, "<!") == 0) continue;  // doctype, comments
    const size_t end = html.find('>', at);
    if (end == std::string::npos) {
      problems.push_back("a tag never ends at " + std::to_string(at));
      break;
    }
    const std::string tag = html.substr(at + 1, end - at - 1);
    const bool closing = !tag.empty() && tag[0] == '/';
    std::string name = tag.substr(closing ? 1 : 0);
    name = name.substr(0, name.find_first_of(" \n/"));
    if (!closing && (tag.back() == '/' || kVoid.count(name))) continue;
    if (!closing) {
      open.push_back(name);
    } else if (open.empty() || open.back() != name) {
      problems.push_back("</" + name + "> closes <" + (open.empty() ? "" : open.back()) + ">");
    } else {
      open.pop_back();
    }
  }
  for (const std::string& name : open) problems.push_back("<" + name + "> never closed");
  return problems;
}

TEST(RunReportTest, HtmlHasNoScriptNoRemoteUrlAndEveryElementIsClosed) {
  SyntheticRun run;
  const std::string html = RenderHtmlReport(run.input);
  std::string lower = html;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  EXPECT_FALSE(Contains(lower, "<script"));
  EXPECT_FALSE(std::regex_search(lower, std::regex("(src|href)\\s*=\\s*[\"']?\\s*https?:")));
  EXPECT_FALSE(Contains(lower, "http://") || Contains(lower, "https://"));
  EXPECT_EQ(UnbalancedTags(html), std::vector<std::string>{});
  // The three figures are inline SVG, and each is whole.
  EXPECT_EQ(Count(html, "<svg "), 3) << html;
  EXPECT_EQ(Count(html, "</svg>"), 3);
  // Links stay inside the run directory: node anchors and relative candidate files.
  std::smatch link;
  std::string rest = html;
  while (std::regex_search(rest, link, std::regex("href=\"([^\"]*)\""))) {
    const std::string target = link[1];
    EXPECT_TRUE(target.rfind("#n", 0) == 0 || target.rfind("candidates/", 0) == 0 ||
                target == "best.py")
        << target;
    rest = link.suffix();
  }
  EXPECT_TRUE(UnbalancedTags("<p><b>x</p></b>").size() == 2u) << "the check can fail";
}

TEST(RunReportTest, HtmlDrawsTheRunAsFiguresAndShowsTheBestKernel) {
  SyntheticRun run;
  const std::string html = RenderHtmlReport(run.input);
  const std::string figures = Section(html, "<h2>Figures</h2>", "<h2>Iterations</h2>");
  // Speedup: the six candidates, three correct with their intervals.
  EXPECT_EQ(Count(figures, "class=\"candidate correct\""), 3) << figures;
  EXPECT_TRUE(Contains(figures, "<title>best after iteration 3: n5 2.00x [1.90, 2.10]</title>"));
  // The tree: a circle per node, ROOT included, the failed ones red, the best ringed.
  EXPECT_EQ(Count(figures, "class=\"node status-"), 7);
  EXPECT_TRUE(Contains(figures, "class=\"node status-compile_error\" fill=\"#cf222e\""));
  EXPECT_TRUE(Contains(figures, "class=\"node status-runtime_error\" fill=\"#a40e26\""));
  EXPECT_TRUE(Contains(figures,
                       "<title>n2 (iteration 1, initial): compile_error, visits 3\n"
                       "shared-memory tiles   cp.async</title>"))
      << figures;
  // Roofline: the reference (timed through n5: 2.00 x 0.060 ms) and the two profiled kernels.
  EXPECT_EQ(Count(figures, "class=\"point reference\""), 1);
  EXPECT_EQ(Count(figures, "class=\"point candidate\""), 2);
  EXPECT_TRUE(Contains(figures, "2 of 3 correct candidates had counters"));
  EXPECT_TRUE(Contains(figures, "<title>n5: 66.7 GFLOP/s at 0.49 FLOP/B, 2.00x [1.90, 2.10]"))
      << figures;
  // best.py, escaped, open and collapsible.
  const std::string best = Section(html, "<h2>Best kernel</h2>", "</details>");
  EXPECT_TRUE(Contains(best, "<details open><summary>")) << best;
  EXPECT_TRUE(Contains(best, "# speedup:   2.00x over the reference"));
  EXPECT_TRUE(Contains(best, "pass  # `x` &lt; y &amp;&amp; z"));
}

TEST(RunReportTest, ACpuRunSaysWhyItHasNoRoofline) {
  SyntheticRun run;
  run.input.config.device = "cpu";
  run.input.environment.device = "cpu";
  const std::string html = RenderHtmlReport(run.input);
  EXPECT_EQ(Count(html, "<svg "), 2);
  EXPECT_TRUE(Contains(html, "No roofline chart: this run measured on cpu")) << html;
}

TEST(RunReportTest, MarkdownLinksCandidatesAndFencesTheBestKernel) {
  SyntheticRun run;
  const std::string md = RenderMarkdownReport(run.input);
  EXPECT_TRUE(Contains(md,
                       "([`candidates/0005.py`](candidates/0005.py), saved as "
                       "[`best.py`](best.py))"))
      << md;
  EXPECT_TRUE(Contains(md, "· [`candidates/0003.py`](candidates/0003.py)"));
  EXPECT_TRUE(
      Contains(md, "## Best kernel\n\n[`best.py`](best.py), n5:\n\n```python\n# kernelpro:"))
      << md;
  EXPECT_TRUE(Contains(md, "pass  # `x` < y && z\n```\n"));
  // A path that is not the run's own relative form is named, not linked.
  run.nodes[3].file = "/abs/elsewhere.py";
  EXPECT_TRUE(Contains(RenderMarkdownReport(run.input), "· `/abs/elsewhere.py`"));
}

TEST(RunReportTest, AFailureExcerptOpensAtTheCompilersErrorLine) {
  SyntheticRun run;
  run.nodes[2].errors =
      "[1/3] c++ -c main.cpp -o main.o\n"
      "FAILED: main.o\n"
      "main.cpp: In function 'at::Tensor forward(at::Tensor)':\n"
      "main.cpp:12:5: error: 'sigmoid_fast' was not declared in this scope\n"
      "   12 |     sigmoid_fast(x);\n"
      "      |     ^~~~~~~~~~~~\n"
      "ninja: build stopped: subcommand failed.";
  const std::string md = RenderMarkdownReport(run.input);
  EXPECT_TRUE(Contains(md,
                       "compile_error · reward -1.00 · visits 3 · "
                       "[`candidates/0002.py`](candidates/0002.py) — main.cpp:12:5: error: "
                       "'sigmoid_fast' was not declared in this scope"))
      << md;
  const std::string html = RenderHtmlReport(run.input);
  const std::string n2 = Section(html, "<li id=\"n2\">", "<ul>");
  EXPECT_TRUE(Contains(n2, "<span class=\"muted\">main.cpp:12:5: error: &#39;sigmoid_fast&#39;"))
      << n2;
  // The excerpt keeps two lines before the error (the "In function" line) and what follows.
  EXPECT_TRUE(Contains(n2,
                       "<pre>[... 1 line before]\nFAILED: main.o\nmain.cpp: In function "
                       "&#39;at::Tensor forward(at::Tensor)&#39;:\nmain.cpp:12:5: error:"))
      << n2;
  EXPECT_TRUE(Contains(n2, "ninja: build stopped: subcommand failed.</pre>"));
  // nvcc's form, ptxas's, and CUDA's runtime message count; a traceback's class name does not.
  run.nodes[2].errors = "In file included from x.h:1,\nk.cu(9): error: identifier undefined";
  EXPECT_TRUE(Contains(RenderMarkdownReport(run.input), "— k.cu(9): error: identifier undefined"));
  run.nodes[2].errors =
      "Traceback:\nRuntimeError: boom\nptxas error   : Entry function uses too much";
  EXPECT_TRUE(Contains(RenderMarkdownReport(run.input), "— ptxas error   : Entry function"));
  run.nodes[2].errors = "RuntimeError: boom\n-Werror=shadow in effect";
  EXPECT_TRUE(Contains(RenderMarkdownReport(run.input), "— RuntimeError: boom"));
}

// A fourth iteration whose LLM call failed: n7 under n1, no candidate.
void AddLlmFailure(SyntheticRun& run, eval::EvalStatus status) {
  search::CandidateOutcome failed;
  failed.status = status;
  EXPECT_TRUE(run.tree.AddExpansion(1, agents::PromptMode::kOptimize, {failed}, {-1.0}).ok());
  search::NodeInfo& n7 = run.nodes[7];
  n7.node_id = 8;
  n7.iteration = 4;
  n7.nothing = "no candidate: server error (HTTP 500) after 4 attempts: upstream overloaded";
  n7.errors = status == eval::EvalStatus::kLlmError
                  ? "llm_error: server error (HTTP 500) after 4 attempts: upstream overloaded"
                  : n7.nothing;  // as runs recorded before llm_error existed kept it
  run.input.config.iterations = 4;
  run.input.summary.iterations_done = 4;
}

TEST(RunReportTest, AnLlmFailureIsShownAsOneAndNotCountedAsACandidate) {
  SyntheticRun run;
  AddLlmFailure(run, eval::EvalStatus::kLlmError);
  const std::string md = RenderMarkdownReport(run.input);
  EXPECT_TRUE(Contains(md, "| 4 | optimize | n1 | n7 llm_error |")) << md;
  EXPECT_TRUE(Contains(md,
                       "- **n7** it 4 · optimize · llm_error · reward 0.00 · visits 0 · "
                       "terminal — llm_error: server error (HTTP 500) after 4 attempts"))
      << md;
  EXPECT_TRUE(Contains(md, "6 evaluated, 3 correct; 1 LLM failure (no candidate)")) << md;
  EXPECT_FALSE(Contains(md, "7 evaluated")) << md;
  const std::string html = RenderHtmlReport(run.input);
  const std::string n7 = Section(html, "<li id=\"n7\">", "</li>");
  EXPECT_TRUE(Contains(n7, "<span class=\"muted\">llm_error</span>")) << n7;
  EXPECT_TRUE(Contains(n7,
                       "<pre>llm_error: server error (HTTP 500) after 4 attempts: upstream "
                       "overloaded</pre>"))
      << n7;
  // The tree chart draws it in the LLM failure's colour (its legend lists only what is drawn).
  EXPECT_EQ(Count(html, "status-llm_error"), 1);
  EXPECT_TRUE(Contains(html, "fill=\"#6e7781\"")) << "no llm_error colour in the tree chart";
  EXPECT_TRUE(Contains(html, "6 evaluated, 3 correct; 1 LLM failure (no candidate)"));
}

TEST(RunReportTest, ARunRecordedBeforeLlmErrorExistedShowsItsLlmFailuresAsSuch) {
  SyntheticRun run;
  AddLlmFailure(run, eval::EvalStatus::kCompileError);
  const std::string md = RenderMarkdownReport(run.input);
  EXPECT_TRUE(Contains(md, "| 4 | optimize | n1 | n7 llm_error |")) << md;
  EXPECT_TRUE(Contains(md, "6 evaluated, 3 correct; 1 LLM failure (no candidate)")) << md;
}

TEST(RunReportTest, HtmlBarsOfKernelsSlowerThanTheReferenceAreOnTheReferencesScale) {
  search::Tree tree;
  ASSERT_TRUE(tree.AddExpansion(search::Tree::kRootId, agents::PromptMode::kInitial,
                                {Correct(0.50, 0.45, 0.55)}, {-0.69})
                  .ok());
  RunReportInput input;
  input.config.problem = "/p/relu.py";
  input.tree = &tree;
  const std::string html = RenderHtmlReport(input);
  EXPECT_TRUE(Contains(html, "title=\"0.50x\"><span style=\"width:50.0%\">")) << html;
}

TEST(RunReportTest, HtmlOfARunWithoutACorrectKernelSaysSo) {
  search::Tree tree;
  ASSERT_TRUE(tree.AddExpansion(
                      search::Tree::kRootId, agents::PromptMode::kInitial,
                      {Failed(eval::EvalStatus::kCompileError), Failed(eval::EvalStatus::kTimeout)},
                      {-1.0, -1.0})
                  .ok());
  std::map<int, search::NodeInfo> nodes;
  nodes[1].errors = "error: expected ';'";
  for (int line = 0; line < 100; ++line) nodes[2].errors += "line " + std::to_string(line) + "\n";
  RunReportInput input;
  input.config.problem = "/p/relu.py";
  input.config.device = "cpu";
  input.summary.stop_message = "1 iterations done";
  input.tree = &tree;
  input.nodes = &nodes;
  const std::string html = RenderHtmlReport(input);
  EXPECT_TRUE(Contains(html, "<p>No correct kernel was found.</p>")) << html;
  EXPECT_FALSE(Contains(html, "Best lineage"));
  EXPECT_FALSE(Contains(html, "class=\"bar\""));
  EXPECT_TRUE(Contains(html, "<pre>error: expected &#39;;&#39;</pre>"));
  EXPECT_TRUE(Contains(html, "timeout"));
  // A long log is cut to its head, saying how much is left out.
  EXPECT_TRUE(Contains(html, "line 19\n[... 640 more bytes]</pre>")) << html;
  EXPECT_FALSE(Contains(html, "line 20"));
}

TEST(RunFilesTest, ARunLeavesItsKernelAndBothReportsAndNoStaleKernel) {
  std::string dir = ::testing::TempDir() + "/run_files_XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  SyntheticRun run;
  run.input.config.run_dir = dir;
  ASSERT_TRUE(WriteRunFiles(run.input, std::string("# the kernel\n")).ok());
  std::ifstream best(dir + "/best.py");
  std::stringstream text;
  text << best.rdbuf();
  EXPECT_TRUE(Contains(text.str(), "# the kernel")) << text.str();
  EXPECT_TRUE(std::filesystem::exists(dir + "/report.md"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/report.html"));

  // A resumed run that lost its best kernel must not leave the old one behind.
  ASSERT_TRUE(WriteRunFiles(run.input, std::nullopt).ok());
  EXPECT_FALSE(std::filesystem::exists(dir + "/best.py"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/report.md"));
  std::filesystem::remove_all(dir);
}

TEST(RunFilesTest, AnUnwritableRunDirectoryIsAnErrorNamingTheFile) {
  SyntheticRun run;
  run.input.config.run_dir = "/proc/kernelpro-no-such-dir";
  Status written = WriteRunFiles(run.input, std::string("# k\n"));
  ASSERT_FALSE(written.ok());
  EXPECT_TRUE(Contains(written.message(), "best.py")) << written.message();
}

}  // namespace report_run_report_test
}  // namespace kernelpro::report

namespace kernelpro::report {
namespace report_run_report_test {

TEST(ProblemNameTest, AKernelBenchFolderIsNamedAfterTheFolder) {
  EXPECT_EQ(ProblemName("/repo/problems/swish/problem.py"), "swish");
  EXPECT_EQ(ProblemName("problems/rms_norm/problem.py"), "rms_norm");
  EXPECT_EQ(ProblemName("/repo/tests/problems/tiny_swish.py"), "tiny_swish");
  EXPECT_EQ(ProblemName("problem.py"), "problem");
}

}  // namespace report_run_report_test
}  // namespace kernelpro::report

namespace kernelpro::report {
namespace report_run_report_test {

// --energy aware: the answer is the frugal kernel among those as fast as the fastest, and the
// reports say so; a search without energy says nothing.
TEST(EnergyChoiceTextTest, SaysWhyTheAnswerIsNotTheFastest) {
  auto kernel = [](double estimate, double low, double high, std::optional<double> reduction) {
    search::CandidateOutcome c;
    c.status = eval::EvalStatus::kCorrect;
    c.speedup = RatioInterval{estimate, low, high, 0.95};
    c.energy_reduction = reduction;
    return c;
  };
  search::Tree tree;
  ASSERT_TRUE(tree.AddExpansion(search::Tree::kRootId, agents::PromptMode::kInitial,
                                {kernel(2.29, 2.26, 2.31, 2.70), kernel(2.31, 2.26, 2.33, 2.66)},
                                {0.8, 0.8})
                  .ok());
  EXPECT_EQ(EnergyChoiceText(tree),
            "n1 is the answer rather than the fastest, n2 (2.31x [2.26, 2.33]): their speeds "
            "cannot be told apart (n1: 2.29x [2.26, 2.31]) and n1's energy proxy is 1.5% lower "
            "(--energy aware).");
  search::Tree plain;
  ASSERT_TRUE(plain
                  .AddExpansion(search::Tree::kRootId, agents::PromptMode::kInitial,
                                {kernel(2.29, 2.26, 2.31, std::nullopt),
                                 kernel(2.31, 2.26, 2.33, std::nullopt)},
                                {0.8, 0.8})
                  .ok());
  EXPECT_EQ(EnergyChoiceText(plain), std::nullopt);
}

}  // namespace report_run_report_test
}  // namespace kernelpro::report
