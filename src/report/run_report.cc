#include "report/run_report.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include "agents/problem_source.h"
#include "core/json_io.h"
#include "core/stats.h"
#include "core/text.h"
#include "eval/energy.h"
#include "llm/price.h"
#include "report/charts.h"
#include "report/svg.h"
#include "store/run_layout.h"

namespace kernelpro::report {
namespace {

// ---- Pieces both reports (and best.py's header) are made of ----

// "95% interval [1.90, 2.10]"
std::string ConfidenceInterval(const RatioInterval& r) {
  return FormatFixed(100 * r.confidence, 0) + "% interval [" + FormatFixed(r.low) + ", " +
         FormatFixed(r.high) + "]";
}

std::string NodeName(int id) {
  return id == search::Tree::kRootId ? "ROOT" : "n" + std::to_string(id);
}

const search::NodeInfo* Info(const RunReportInput& in, int id) {
  if (!in.nodes) return nullptr;
  auto it = in.nodes->find(id);
  return it == in.nodes->end() ? nullptr : &it->second;
}

std::string Mode(const search::Node& node) {
  return node.mode ? agents::ToString(*node.mode) : "root";
}

std::vector<int> Lineage(const search::Tree& tree, int id) {
  std::vector<int> path;
  for (int n = id; n >= 0; n = tree.node(n).parent) path.insert(path.begin(), n);
  return path;
}

std::string LineageText(const search::Tree& tree, int id) {
  std::string text;
  for (int n : Lineage(tree, id)) {
    const search::Node& node = tree.node(n);
    if (!text.empty()) text += " -> ";
    text += NodeName(n);
    if (!node.is_root()) {
      text += " (" + Mode(node);
      if (node.correct() && node.speedup) text += ", " + FormatFixed(node.speedup->estimate) + "x";
      text += ")";
    }
  }
  return text;
}

std::string OneLine(std::string text, size_t max_chars = 100) {
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '|') c = ' ';
  }
  return ShortenText(std::move(text), max_chars);
}

// Whether a candidate file may be linked from the reports: a run-directory-relative path of plain
// characters, as the run store keeps it ("candidates/0042.py"). Anything else is shown as text,
// never as a link.
bool Linkable(const std::string& file) {
  if (file.empty() || file.front() == '/' || file.find("..") != std::string::npos) return false;
  for (char c : file) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.' &&
        c != '/') {
      return false;
    }
  }
  return true;
}

// "[`candidates/0042.py`](candidates/0042.py)", or the path as code when it may not be linked.
std::string MarkdownFile(const std::string& file) {
  return Linkable(file) ? "[`" + file + "`](" + file + ")" : "`" + file + "`";
}

// Whether the node's candidate never existed because the LLM failed: an llm_error node, or one a
// run recorded before that status existed (a compile_error without a candidate, with the LLM's
// reason).
bool LlmFailed(const search::Node& node, const search::NodeInfo* info) {
  if (node.llm_error()) return true;
  return !node.is_root() && info && info->candidate_id == 0 && !info->nothing.empty();
}

// What the reports show of one tree node, whichever way they render it.
struct NodeFacts {
  const search::Node* node = nullptr;
  std::string name;                        // "ROOT", "n3"
  int iteration = 0;                       // 1-based; 0 for ROOT
  std::string mode;                        // "initial", "debug", "optimize"; "root"
  std::string status;                      // "correct", "compile_error", ...; "reference" for ROOT
  std::optional<RatioInterval> speedup;    // a correct node's, when timed
  const search::NodeInfo* info = nullptr;  // null when the orchestrator gave none
  std::string verdict;                     // "accepted", "not accepted", ""
};

NodeFacts FactsOf(const RunReportInput& in, int id) {
  const search::Node& node = in.tree->node(id);
  NodeFacts f;
  f.node = &node;
  f.name = NodeName(id);
  f.iteration = node.expansion + 1;
  f.mode = Mode(node);
  f.status = node.is_root() ? "reference" : node.status ? eval::EvalStatusName(*node.status) : "?";
  if (node.correct()) f.speedup = node.speedup;
  f.info = Info(in, id);
  if (LlmFailed(node, f.info)) f.status = eval::EvalStatusName(eval::EvalStatus::kLlmError);
  if (f.info) f.verdict = f.info->verdict;
  if (f.info && f.info->noisy_timing) f.verdict += " (noisy timing)";
  return f;
}

// "correct 1.55x [1.45, 1.65]", "compile_error", "reference".
std::string StatusText(const NodeFacts& f) {
  return f.speedup ? f.status + " " + RatioText(*f.speedup) : f.status;
}

// One line of the header: "Device: cuda (NVIDIA H200), driver 570.86.15".
struct HeaderFact {
  std::string label;
  std::string value;
  bool code = false;  // a path, set as code
};

// The run's problem when it is a program (docs/programs.md); read once per rendering.
std::optional<agents::ProblemSource> ProgramOf(const RunReportInput& in) {
  auto source = agents::ReadProblemSource(in.config.problem);
  if (!source.ok() || !source->program) return std::nullopt;
  return std::move(*source);
}

// What the speedups are measured against: the reference, or a program's own time
// (docs/programs.md: the program is the baseline, its REFERENCE only gives the outputs).
std::string Baseline(const std::optional<agents::ProblemSource>& program) {
  if (!program) return "the reference";
  if (program->kind == agents::InputKind::kPyTorch) return "the baseline (the program)";
  return "the baseline (the " + agents::ProgramKindName(program->kind) + " program)";
}

std::vector<HeaderFact> HeaderFacts(const RunReportInput& in,
                                    const std::optional<agents::ProblemSource>& program) {
  const search::RunConfig& o = in.config;
  const RunEnvironment& env = in.environment;
  std::vector<HeaderFact> facts;
  facts.push_back({"Problem", o.problem, true});
  // A program: the report says which file is timed and which is matched.
  if (program) {
    facts.push_back({"Baseline (timed)", o.problem + " (ENTRY " + program->entry + ")", true});
    facts.push_back({"Reference (expected outputs)",
                     program->reference_path.empty() ? "the program itself (no REFERENCE)"
                                                     : program->reference_path,
                     !program->reference_path.empty()});
  }
  if (!o.run_dir.empty()) facts.push_back({"Run directory", o.run_dir, true});
  std::string device = env.device.empty() ? o.device : env.device;
  if (!env.device_name.empty()) device += " (" + env.device_name + ")";
  if (!env.driver.empty()) device += ", driver " + env.driver;
  facts.push_back({"Device", device});
  if (!env.toolchain.empty()) facts.push_back({"Toolchain", env.toolchain});
  if (!in.llm.empty()) facts.push_back({"LLM", in.llm});
  if (!o.temperatures.empty()) {
    std::string temperatures;
    for (double t : o.temperatures) {
      temperatures += (temperatures.empty() ? "" : ", ") + FormatFixed(t, 2);
    }
    facts.push_back({o.temperatures.size() > 1 ? "Temperatures (one per candidate)" : "Temperature",
                     temperatures});
  }
  facts.push_back(
      {"Search", o.search + ", " + std::to_string(in.summary.iterations_done) + " of " +
                     std::to_string(o.iterations) + " iterations, " + std::to_string(o.candidates) +
                     (o.candidates == 1 ? " candidate" : " candidates") + " each, feedback " +
                     agents::ToString(o.feedback) + ", memory " + (o.memory ? "on" : "off") + ", " +
                     (o.seed_given ? "seed " + std::to_string(o.seed) : "no seed")});
  facts.push_back({"Stopped", in.summary.stop_message});
  facts.push_back(
      {"LLM exchanges", std::to_string(in.summary.exchanges) + ", cost " +
                            (in.cost_known ? llm::CostText(in.summary.cost_usd, true)
                                           : std::string("unknown (no price for the model: give "
                                                         "--llm-prices)"))});
  if (o.device != "cuda") {
    facts.push_back({"Not done on " + o.device,
                     "no profiling (no ncu counters, no SASS, no timeline), no roofline "
                     "position and no measured Stage 1; optimise prompts had no profiling "
                     "feedback; the speedups are of CPU code, not of GPU kernels"});
  }
  int correct = 0, evaluated = 0, llm_failures = 0;
  for (const search::Node& node : in.tree->nodes()) {
    if (node.is_root()) continue;
    if (LlmFailed(node, Info(in, node.id))) {
      ++llm_failures;  // no candidate: nothing was built or checked
      continue;
    }
    ++evaluated;
    correct += node.correct() ? 1 : 0;
  }
  std::string candidates =
      std::to_string(evaluated) + " evaluated, " + std::to_string(correct) + " correct";
  if (llm_failures > 0) {
    candidates += "; " + std::to_string(llm_failures) +
                  (llm_failures == 1 ? " LLM failure" : " LLM failures") + " (no candidate)";
  }
  facts.push_back({"Candidates", candidates});
  if (in.stage1) {
    facts.push_back({"Stage 1", std::string(roofline::BottleneckName(in.stage1->bottleneck)) +
                                    "-bound on " + in.stage1->gpu_name + " (" +
                                    in.stage1->precision + ", confidence " + in.stage1->confidence +
                                    ")"});
  }
  return facts;
}

// "reaches 71 % of the attainable bound (...)", or why the position is unknown.
std::string RooflineText(const RunReportInput& in) {
  if (auto position = BestRooflinePosition(in)) return position->summary;
  if (in.config.device != "cuda") {
    return "unknown (measured on " + in.config.device + ", not on a GPU).";
  }
  return in.stage1 ? "unknown (no timing of the best kernel)." : "unknown (no Stage-1 analysis).";
}

// One expansion of the tree: which node it grew from and what its children came to.
struct IterationFacts {
  int iteration = 0;  // 1-based
  std::string mode;
  int expanded = search::Tree::kRootId;
  std::string outcome;  // "n1 correct 1.50x [1.40, 1.60] accepted; n2 compile_error"
  std::string tools;    // "n1: memory_coalescing; n2: warp_stall"; "" when none fired
};

std::vector<IterationFacts> IterationsOf(const RunReportInput& in) {
  const search::Tree& tree = *in.tree;
  std::vector<IterationFacts> iterations;
  for (int e = 0; e < tree.expansions(); ++e) {
    std::vector<int> children;
    for (const search::Node& node : tree.nodes()) {
      if (node.expansion == e) children.push_back(node.id);
    }
    if (children.empty()) continue;
    const search::Node& first = tree.node(children.front());
    IterationFacts it;
    it.iteration = e + 1;
    it.mode = Mode(first);
    it.expanded = first.parent;
    for (int id : children) {
      NodeFacts f = FactsOf(in, id);
      std::string text = f.name + " " + StatusText(f);
      if (!f.verdict.empty()) text += " " + f.verdict;
      it.outcome += (it.outcome.empty() ? "" : "; ") + text;
      if (f.info && !f.info->tools_fired.empty()) {
        it.tools +=
            (it.tools.empty() ? "" : "; ") + f.name + ": " + Join(f.info->tools_fired, ", ");
      }
    }
    iterations.push_back(std::move(it));
  }
  return iterations;
}

// The first line of `text` that says something, cut to `max_chars`.
std::string FirstLine(const std::string& text, size_t max_chars = 100) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    size_t begin = line.find_first_not_of(" \t\r");
    if (begin == std::string::npos) continue;
    line = line.substr(begin);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    return OneLine(line, max_chars);
  }
  return "";
}

// Whether `line` is a compiler's (or CUDA's) error line: "x.cu(9): error: ...", "x.cpp:3:5: fatal
// error: ...", "ptxas error   : ...", "CUDA error: ...". Not "RuntimeError:" (a traceback's last
// line, which the head of the log shows anyway) and not "-Werror=...".
bool IsErrorLine(std::string_view line) {
  for (size_t at = line.find("error"); at != std::string_view::npos;
       at = line.find("error", at + 1)) {
    const bool word_start =
        at == 0 || !(std::isalnum(static_cast<unsigned char>(line[at - 1])) || line[at - 1] == '_');
    size_t after = at + 5;
    while (after < line.size() && line[after] == ' ') ++after;
    if (word_start && after < line.size() && line[after] == ':') return true;
  }
  return false;
}

// Where the first error line of `errors` starts (0 when none), and its index among the lines.
size_t FirstErrorOffset(const std::string& errors, int* line_index = nullptr) {
  size_t begin = 0;
  for (int index = 0; begin < errors.size(); ++index) {
    size_t newline = errors.find('\n', begin);
    size_t end = newline == std::string::npos ? errors.size() : newline;
    if (IsErrorLine(std::string_view(errors).substr(begin, end - begin))) {
      if (line_index) *line_index = index;
      return begin;
    }
    begin = end + 1;
  }
  if (line_index) *line_index = 0;
  return 0;
}

// Why a node failed, in a line: its first error line (a gcc log opens with "In function ..." and
// the command lines, which say nothing), else its first line that says something.
std::string FirstErrorLine(const std::string& errors, size_t max_chars = 100) {
  return FirstLine(errors.substr(FirstErrorOffset(errors)), max_chars);
}

// The head of a failed node's errors: enough to recognise the failure, not the whole build log.
// It starts `context` lines before the first error line, so the "In function" line that precedes
// a gcc error stays with it.
std::string ErrorExcerpt(const std::string& all_errors, int max_lines = 20, size_t max_chars = 2000,
                         int context = 2) {
  int error_line = 0;
  FirstErrorOffset(all_errors, &error_line);
  const int skip = std::max(0, error_line - context);
  size_t start = 0;
  for (int line = 0; line < skip; ++line) start = all_errors.find('\n', start) + 1;
  const std::string errors = all_errors.substr(start);
  size_t end = 0;
  for (int line = 0; line < max_lines && end < errors.size(); ++line) {
    size_t newline = errors.find('\n', end);
    end = newline == std::string::npos ? errors.size() : newline + 1;
  }
  end = Utf8Prefix(errors, std::min(end, max_chars));  // never half a character
  std::string text = errors.substr(0, end);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  if (skip > 0) {
    text = "[... " + std::to_string(skip) + (skip == 1 ? " line" : " lines") + " before]\n" + text;
  }
  if (end < errors.size()) {
    text += "\n[... " + std::to_string(errors.size() - end) + " more bytes]";
  }
  return text;
}

// ---- Markdown ----

void MarkdownTree(const RunReportInput& in, int id, int depth, std::ostringstream& out) {
  NodeFacts f = FactsOf(in, id);
  const search::Node& node = *f.node;
  out << std::string(2 * depth, ' ') << "- **" << f.name << "**";
  if (node.is_root()) {
    out << " (the reference; visits " << node.visits << ", mean reward "
        << FormatFixed(node.MeanReward()) << ")";
  } else {
    out << " it " << f.iteration << " · " << f.mode << " · " << StatusText(f);
    if (!f.verdict.empty()) out << " · " << f.verdict;
    out << " · reward " << FormatFixed(node.reward) << " · visits " << node.visits;
    if (node.terminal) out << " · terminal";
    if (f.info && !f.info->file.empty()) out << " · " << MarkdownFile(f.info->file);
    // Why a failed node failed, in a line (the HTML report holds the head of the errors).
    if (!node.correct() && f.info && !FirstErrorLine(f.info->errors).empty()) {
      out << " — " << FirstErrorLine(f.info->errors);
    }
  }
  out << "\n";
  for (int child : node.children) MarkdownTree(in, child, depth + 1, out);
}

// ---- HTML ----

// Text from the run (strategies, compiler errors, paths, labels) as HTML text or attribute value.
// Control characters other than tab and newline (terminal colour codes in build logs) are dropped:
// HTML does not allow them.
std::string Html(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '"') {
      out += "&quot;";
    } else if (c == '\'') {
      out += "&#39;";
    } else if ((u >= 0x20 && u != 0x7f) || c == '\n' || c == '\t') {
      out += c;
    }
  }
  return out;
}

constexpr const char* kHtmlStyle = R"(
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328;
       background: #fff; max-width: 78em; margin: 1.5em auto; padding: 0 1.5em; }
h1 { font-size: 1.6em; margin-bottom: .4em; }
h2 { font-size: 1.3em; margin-top: 1.6em; border-bottom: 1px solid #d1d9e0; }
h3 { font-size: 1.1em; margin-top: 1.2em; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
            font-size: 13px; }
table { border-collapse: collapse; margin: .5em 0 1em; }
th, td { border: 1px solid #d1d9e0; padding: .3em .6em; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
table.facts th { white-space: nowrap; }
td.num { white-space: nowrap; }
.ok { color: #1a7f37; }
.fail { color: #cf222e; }
.muted { color: #59636e; }
.verdict { padding: .5em .8em; border-left: 4px solid #1a7f37; background: #f0fff4; }
.verdict.noise { border-left-color: #9a6700; background: #fff8c5; }
.bar { display: inline-block; width: 8em; height: .75em; margin-left: .5em; background: #eaeef2;
       vertical-align: middle; }
.bar > span { display: block; height: 100%; background: #2da44e; }
ul.tree, ul.tree ul { list-style: none; margin: 0; padding-left: 1.5em; }
ul.tree { padding-left: 0; }
ul.tree li { margin: .15em 0; }
ul.tree ul { border-left: 1px dotted #9198a1; }
summary { cursor: pointer; }
.node { margin: .3em 0 .6em 1.2em; }
.node p { margin: .2em 0; }
pre { background: #f6f8fa; border: 1px solid #d1d9e0; padding: .6em; margin: .3em 0;
      white-space: pre-wrap; overflow-wrap: anywhere; }
pre.code { white-space: pre; overflow-x: auto; overflow-wrap: normal; }
figure { margin: 1em 0 1.5em; }
figcaption { color: #59636e; font-size: 13px; margin-top: .3em; max-width: 60em; }
)";

// A bar whose length is the node's speedup on a scale where the longest bar is the best kernel or
// the reference (1x), whichever is faster; "" without a speedup.
std::string HtmlBar(const std::optional<RatioInterval>& speedup, double best) {
  if (!speedup || best <= 0) return "";
  double fraction = std::clamp(speedup->estimate / std::max(best, 1.0), 0.0, 1.0);
  return "<span class=\"bar\" title=\"" + FormatFixed(speedup->estimate) +
         "x\"><span style=\"width:" + FormatFixed(100 * fraction, 1) + "%\"></span></span>";
}

std::string HtmlStatus(const NodeFacts& f) {
  // An LLM failure is grey, as in the tree figure: no kernel failed.
  const bool grey = f.node->is_root() || f.status == "llm_error";
  const char* cls = grey ? "muted" : f.node->correct() ? "ok" : "fail";
  return std::string("<span class=\"") + cls + "\">" + Html(StatusText(f)) + "</span>";
}

// The candidate file as code, linked (relative to report.html, which sits in the run directory)
// when it may be.
std::string HtmlFile(const std::string& file) {
  const std::string code = "<code>" + Html(file) + "</code>";
  return Linkable(file) ? "<a href=\"" + Html(file) + "\">" + code + "</a>" : code;
}

std::string HtmlNodeLink(int id) {
  return "<a href=\"#" + NodeName(id) + "\">" + NodeName(id) + "</a>";
}

void HtmlTree(const RunReportInput& in, int id, double best, std::ostringstream& out) {
  NodeFacts f = FactsOf(in, id);
  const search::Node& node = *f.node;
  out << "<li id=\"" << f.name << "\">";
  if (node.is_root()) {
    out << "<b>ROOT</b> <span class=\"muted\">(the reference; visits " << node.visits
        << ", mean reward " << FormatFixed(node.MeanReward()) << ")</span>\n";
  } else {
    const search::NodeInfo* info = f.info;
    out << "<details><summary><b>" << f.name << "</b> it " << f.iteration << " · " << Html(f.mode)
        << " · " << HtmlStatus(f);
    if (!f.verdict.empty()) out << " · " << Html(f.verdict);
    out << HtmlBar(f.speedup, best);
    if (info && !node.correct() && !info->errors.empty()) {
      out << " <span class=\"muted\">" << Html(FirstErrorLine(info->errors)) << "</span>";
    }
    out << "</summary>\n<div class=\"node\">\n";
    if (info && !info->strategy.empty()) {
      out << "<p>Strategy: " << Html(info->strategy) << "</p>\n";
    }
    out << "<p class=\"muted\">reward " << FormatFixed(node.reward) << " · visits " << node.visits;
    if (node.terminal) out << " · terminal";
    if (info && !info->file.empty()) out << " · " << HtmlFile(info->file);
    out << "</p>\n";
    if (info && !info->tools_fired.empty()) {
      out << "<p>Tools that fired: " << Html(Join(info->tools_fired, ", ")) << "</p>\n";
    }
    if (info && !info->errors.empty()) {
      out << "<pre>" << Html(ErrorExcerpt(info->errors)) << "</pre>\n";
    }
    out << "</div></details>\n";
  }
  if (!node.children.empty()) {
    out << "<ul>\n";
    for (int child : node.children) HtmlTree(in, child, best, out);
    out << "</ul>\n";
  }
  out << "</li>\n";
}

// ---- Figures (report/charts.h), drawn from the same facts as the tables

// The "Energy" section's rows (`--energy measure|aware`): each correct profiled node's proxy
// terms, and its reduction over the reference when the reference's proxy is known.
struct EnergyRow {
  std::string name;
  std::optional<RatioInterval> speedup;
  std::optional<profile::EnergyProxy> proxy;
  std::vector<std::string> missing;
  std::optional<double> reduction;
};

std::vector<EnergyRow> EnergyRows(const RunReportInput& in) {
  std::vector<EnergyRow> rows;
  const std::optional<double> reference =
      in.stage1 ? in.stage1->energy_proxy_pj : std::optional<double>();
  for (const auto& [id, estimate] : in.energy) {
    if (!in.tree->Contains(id)) continue;
    EnergyRow row;
    row.name = NodeName(id);
    row.speedup = in.tree->node(id).speedup;
    row.proxy = estimate.proxy;
    row.missing = estimate.missing;
    if (reference && estimate.proxy) {
      row.reduction = profile::EnergyReduction(*reference, estimate.proxy->total_pj);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// An energy (pJ or mJ) with four significant digits: "2.888e+09", "18.68".
std::string Energy4(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

std::string MeasuredText(const MeasuredEnergyRow& row) {
  return Energy4(row.mj) + " mJ [" + Energy4(row.low) + ", " + Energy4(row.high) + "]";
}

std::string EnergyIntro(const RunReportInput& in) {
  std::string text =
      "Energy proxy (paper Eq. 4, pJ, from each kernel's ncu counters: 20 pJ/B of DRAM traffic, "
      "100 pJ per excess global-load sector, 80 pJ per local-memory sector, 3 pJ per warp "
      "instruction). ";
  if (in.stage1 && in.stage1->energy_proxy_pj) {
    text += "Reference: " + Energy4(*in.stage1->energy_proxy_pj) +
            " pJ; reduction = reference / candidate (> 1 spends less).";
  } else {
    text +=
        "The reference's proxy is unknown (no ncu profile of it with every counter), so no "
        "reduction is shown.";
  }
  return text;
}

std::string SpeedupFigure(const RunReportInput& in) {
  std::vector<SpeedupChartCandidate> candidates;
  for (const search::Node& node : in.tree->nodes()) {
    if (node.is_root()) continue;
    NodeFacts f = FactsOf(in, node.id);
    candidates.push_back({f.iteration, f.name, f.status, f.speedup});
  }
  return SpeedupChart(std::max(in.tree->expansions(), in.summary.iterations_done), candidates);
}

std::string TreeFigure(const RunReportInput& in) {
  std::vector<TreeChartNode> nodes;
  for (const search::Node& node : in.tree->nodes()) {
    NodeFacts f = FactsOf(in, node.id);
    std::string tooltip = f.name + ": " + StatusText(f) + ", visits " + std::to_string(node.visits);
    if (!node.is_root()) {
      tooltip = f.name + " (iteration " + std::to_string(f.iteration) + ", " + f.mode +
                "): " + StatusText(f) + (f.verdict.empty() ? "" : ", " + f.verdict) + ", visits " +
                std::to_string(node.visits);
      if (f.info && !f.info->strategy.empty()) tooltip += "\n" + OneLine(f.info->strategy, 160);
    }
    nodes.push_back({node.id, node.parent, f.name, f.status, node.visits, tooltip});
  }
  return TreeChart(nodes, in.tree->BestNode());
}

// "0.57 TFLOP/s at 0.30 FLOP/B"
std::string PositionText(double flops_per_s, double intensity) {
  return svg::WithUnit(flops_per_s, "FLOP/s") + " at " + FormatFixed(intensity) + " FLOP/B";
}

// The roofline figure with its caption, or a sentence saying why there is none.
std::string RooflineFigure(const RunReportInput& in) {
  const std::string device =
      in.environment.device.empty() ? in.config.device : in.environment.device;
  if (device != "cuda") {
    return "<p class=\"muted\">No roofline chart: this run measured on " + Html(device) +
           ", and a roofline is a GPU's (its memory bandwidth and peak FLOP/s, with the kernels' "
           "DRAM traffic counted by ncu).</p>\n";
  }
  if (!in.stage1 || !(in.stage1->flops > 0)) {
    return "<p class=\"muted\">No roofline chart: the run has no Stage-1 analysis with the "
           "problem's FLOPs, so neither the roofs nor the points are known.</p>\n";
  }
  const roofline::ReferenceAnalysis& s1 = *in.stage1;
  RooflineChartInput chart{s1.gpu_name, s1.precision, s1.peak_flops, s1.dram_bytes_per_s, {}};
  // The reference's median time: a correct node's speedup is the ratio of the two medians.
  double reference_s = 0;
  std::string reference_timing = "its median time in the evaluations";
  if (auto best = in.tree->BestNode()) {
    const search::NodeInfo* info = Info(in, *best);
    const search::Node& node = in.tree->node(*best);
    if (info && info->candidate_ms && node.speedup) {
      reference_s = node.speedup->estimate * *info->candidate_ms * 1e-3;
    }
  }
  if (reference_s <= 0 && s1.measured && s1.measured->duration_s > 0) {
    reference_s = s1.measured->duration_s;
    reference_timing = "its kernels' time under ncu (Stage 1)";
  }
  if (reference_s > 0 && s1.min_bytes > 0) {
    const double intensity = s1.flops / s1.min_bytes, achieved = s1.flops / reference_s;
    chart.points.push_back(
        {"reference", intensity, achieved, true, false,
         "the reference: " + PositionText(achieved, intensity) + " (minimum bytes)"});
  }
  int correct = 0, placed = 0;
  const std::optional<int> best = in.tree->BestNode();
  for (const search::Node& node : in.tree->nodes()) {
    if (!node.correct()) continue;
    ++correct;
    const search::NodeInfo* info = Info(in, node.id);
    auto bytes = in.dram_bytes.find(node.id);
    if (!info || !info->candidate_ms || *info->candidate_ms <= 0 || bytes == in.dram_bytes.end() ||
        bytes->second <= 0) {
      continue;
    }
    ++placed;
    const double intensity = s1.flops / bytes->second;
    const double achieved = s1.flops / (*info->candidate_ms * 1e-3);
    chart.points.push_back({NodeName(node.id), intensity, achieved, false, best == node.id,
                            NodeName(node.id) + ": " + PositionText(achieved, intensity) + ", " +
                                (node.speedup ? RatioText(*node.speedup) : std::string())});
  }
  const std::string figure = RooflineChart(chart);
  if (figure.empty()) {
    return "<p class=\"muted\">No roofline chart: neither the reference's time nor a profiled "
           "candidate is known.</p>\n";
  }
  std::ostringstream out;
  out << "<figure>\n"
      << figure << "<figcaption>Roofline of " << Html(s1.gpu_name) << " (" << Html(s1.precision)
      << "). Height: the problem's " << svg::WithUnit(s1.flops, "FLOP")
      << " (Stage 1) over the median time, so the ratio of two heights is their speedup. "
      << "Intensity: those FLOPs per byte the kernels moved to and from DRAM (ncu counters); the "
      << "reference at its minimum bytes, timed by " << reference_timing << ". " << placed << " of "
      << correct << " correct candidates had counters.</figcaption>\n</figure>\n";
  return out.str();
}

// The longest run of backticks in `text`, so a Markdown fence around it can be longer.
size_t LongestBacktickRun(const std::string& text) {
  size_t longest = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

// The first non-empty line of a tool's result: its answer in short.
std::string FirstResultLine(const std::string& result) {
  for (const std::string& line : SplitLines(result)) {
    if (!Trim(line).empty()) return std::string(Trim(line));
  }
  return "";
}

std::string ArgumentsText(const Json& arguments) {
  if (!arguments.is_object()) return arguments.is_null() ? "" : arguments.dump();
  std::string text;
  for (const auto& [key, value] : arguments.items()) {
    text += (text.empty() ? "" : ", ") + key + "=" +
            (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return text;
}

size_t CountToolCalls(const RunReportInput& in) {
  size_t n = 0;
  for (const auto& [iteration, calls] : in.tool_calls) n += calls.size();
  return n;
}

constexpr size_t kMaxToolCallsShown = 200;

}  // namespace

std::string ToolCallLine(const agents::ProgrammerToolCall& call, size_t max_chars) {
  std::string line = call.name + "(" + ArgumentsText(call.arguments) + ") → " +
                     (call.is_error ? "error: " : "") + FirstResultLine(call.result);
  return ShortenText(std::move(line), max_chars);
}

namespace {}  // namespace

std::string ProblemName(const std::string& problem) {
  const std::filesystem::path path(problem);
  if (path.stem() == "problem" && path.has_parent_path() &&
      !path.parent_path().filename().empty()) {
    return path.parent_path().filename().string();
  }
  return path.stem().string();
}

std::optional<BestVerdict> JudgeBest(const search::Tree& tree,
                                     const std::map<int, search::NodeInfo>* nodes) {
  auto best = tree.BestNode();
  if (!best) return std::nullopt;
  const search::Node& node = tree.node(*best);
  BestVerdict v;
  v.node = *best;
  v.speedup = node.speedup.value_or(RatioInterval{1, 1, 1, 0});
  v.parent = node.parent;
  const search::Node& parent = tree.node(node.parent);
  const bool against_parent = parent.correct() && parent.speedup.has_value();
  v.baseline = against_parent ? *parent.speedup : RatioInterval{1, 1, 1, 0};
  v.clearly_faster = search::ClearlyFaster(v.speedup, v.baseline);
  const std::string who =
      against_parent ? "its parent " + NodeName(v.parent) + " (" + RatioText(v.baseline) + ")"
                     : std::string("the reference (1x)");
  v.noisy = NoisyInterval(v.speedup);
  if (nodes) {
    auto info = nodes->find(v.node);
    if (info != nodes->end() && info->second.noisy_timing) v.noisy = true;
  }
  if (v.noisy) {
    v.clearly_faster = false;
    v.text = NodeName(v.node) +
             " has a noisy timing (its interval spans more than half its estimate, or its calls "
             "spread more than their median): it is not shown to be faster than " +
             who + "; rerun it on a quieter machine.";
  } else if (v.clearly_faster) {
    v.text = NodeName(v.node) + " is faster than " + who +
             " beyond the timing noise: its interval lies above.";
  } else if (v.speedup.high < v.baseline.low) {
    v.text = NodeName(v.node) + " is slower than " + who +
             " beyond the timing noise: its interval lies below.";
  } else {
    v.text = NodeName(v.node) + "'s interval overlaps " + who +
             ": it is not shown to be faster beyond the timing noise.";
  }
  return v;
}

std::optional<roofline::RooflinePosition> BestRooflinePosition(const RunReportInput& in) {
  if (!in.stage1 || !in.tree || in.config.device != "cuda") return std::nullopt;
  auto best = in.tree->BestNode();
  if (!best) return std::nullopt;
  const search::NodeInfo* info = Info(in, *best);
  if (!info || !info->candidate_ms || *info->candidate_ms <= 0) return std::nullopt;
  return roofline::PositionAgainstRoofline(*in.stage1, *info->candidate_ms * 1e-3);
}

std::string RenderBestKernel(const RunReportInput& in, const std::string& source) {
  std::ostringstream out;
  const search::Tree& tree = *in.tree;
  auto verdict = JudgeBest(tree, in.nodes);
  const RunEnvironment& env = in.environment;
  out << "# kernelpro: the fastest validated kernel of the run in " << in.config.run_dir << "\n";
  out << "# problem:   " << in.config.problem << "\n";
  std::string device = env.device.empty() ? in.config.device : env.device;
  if (!env.device_name.empty()) device += ", " + env.device_name;
  out << "# device:    " << device << "\n";
  out << "# driver:    " << (env.driver.empty() ? "unknown" : env.driver) << "\n";
  out << "# toolchain: " << (env.toolchain.empty() ? "unknown" : env.toolchain) << "\n";
  if (verdict) {
    out << "# speedup:   " << FormatFixed(verdict->speedup.estimate) << "x over "
        << Baseline(ProgramOf(in)) << ", " << ConfidenceInterval(verdict->speedup)
        << " (ratio of median times)\n";
    out << "# verdict:   " << verdict->text << "\n";
    if (auto choice = EnergyChoiceText(tree)) out << "# energy:    " << *choice << "\n";
    out << "# lineage:   " << LineageText(tree, verdict->node) << "\n";
    const search::Node& node = tree.node(verdict->node);
    out << "# found in:  iteration " << node.expansion + 1 << " of " << in.summary.iterations_done
        << " (" << in.config.search << ", " << in.config.candidates
        << " candidates per iteration)\n";
  }
  out << "\n" << source;
  if (!source.empty() && source.back() != '\n') out << "\n";
  return out.str();
}

std::string RenderMarkdownReport(const RunReportInput& in) {
  std::ostringstream out;
  const search::Tree& tree = *in.tree;
  out << "# kernelpro run: " << ProblemName(in.config.problem) << "\n\n";
  const std::optional<agents::ProblemSource> program = ProgramOf(in);
  for (const HeaderFact& fact : HeaderFacts(in, program)) {
    out << "- " << fact.label << ": " << (fact.code ? "`" + fact.value + "`" : fact.value) << "\n";
  }
  out << "\n";

  out << "## Result\n\n";
  auto verdict = JudgeBest(tree, in.nodes);
  if (!verdict) {
    out << "No correct kernel was found.\n\n";
  } else {
    const search::NodeInfo* info = Info(in, verdict->node);
    out << "Best kernel: **" << NodeName(verdict->node) << "**";
    if (info && !info->file.empty()) {
      out << " (" << MarkdownFile(info->file) << ", saved as [`best.py`](best.py))";
    }
    out << ", **" << FormatFixed(verdict->speedup.estimate) << "x** over " << Baseline(program)
        << ", " << ConfidenceInterval(verdict->speedup) << ".\n\n";
    out << verdict->text << "\n\n";
    if (auto choice = EnergyChoiceText(tree)) out << *choice << "\n\n";
    out << "Roofline: " << RooflineText(in) << "\n\n";
    out << "### Best lineage\n\n";
    out << "| node | iteration | mode | status | speedup [interval] | verdict | strategy |\n";
    out << "|---|---|---|---|---|---|---|\n";
    for (int id : Lineage(tree, verdict->node)) {
      NodeFacts f = FactsOf(in, id);
      if (f.node->is_root()) {
        out << "| ROOT | | | reference | 1.00x | | |\n";
        continue;
      }
      out << "| " << f.name << " | " << f.iteration << " | " << f.mode << " | " << f.status << " | "
          << (f.speedup ? RatioText(*f.speedup) : std::string("-")) << " | " << f.verdict << " | "
          << (f.info ? OneLine(f.info->strategy) : "") << " |\n";
    }
    out << "\n";
  }

  out << "## Iterations\n\n";
  out << "| iteration | mode | expanded | outcome | tools that fired |\n";
  out << "|---|---|---|---|---|\n";
  for (const IterationFacts& it : IterationsOf(in)) {
    out << "| " << it.iteration << " | " << it.mode << " | " << NodeName(it.expanded) << " | "
        << it.outcome << " | " << (it.tools.empty() ? "-" : it.tools) << " |\n";
  }
  out << "\n";

  if (!in.energy.empty()) {
    out << "## Energy\n\n" << EnergyIntro(in) << "\n\n";
    out << "| node | speedup | proxy pJ | dram | uncoalesced | spills | instructions | "
           "energy reduction |\n";
    out << "|---|---|---|---|---|---|---|---|\n";
    for (const EnergyRow& row : EnergyRows(in)) {
      out << "| " << row.name << " | " << (row.speedup ? RatioText(*row.speedup) : "-") << " | ";
      if (!row.proxy) {
        out << "none: ncu lacks " << Join(row.missing, ", ") << " | | | | | |\n";
        continue;
      }
      const profile::EnergyProxyTerms& t = row.proxy->terms;
      out << Energy4(row.proxy->total_pj) << " | " << Energy4(t.dram_pj) << " | "
          << Energy4(t.uncoalesced_pj) << " | " << Energy4(t.spills_pj) << " | "
          << Energy4(t.instructions_pj) << " | "
          << (row.reduction ? FormatFixed(*row.reduction) + "x" : std::string("-")) << " |\n";
    }
    out << "\n";
  }
  if (auto measured = ViewMeasuredEnergy(in)) {
    if (in.energy.empty()) out << "## Energy\n\n";
    out << "### Measured with NVML\n\n";
    if (!measured->rows.empty()) {
      out << "Energy per call after the search, the reference and the fastest kernels measured "
             "back to back in one session: "
          << measured->method << ".\n\n";
      out << "| kernel | speedup | mJ per call | interval | power | energy reduction |\n";
      out << "|---|---|---|---|---|---|\n";
      for (const MeasuredEnergyRow& row : measured->rows) {
        out << "| " << row.name << " | " << (row.speedup ? RatioText(*row.speedup) : "-") << " | "
            << Energy4(row.mj) << " | [" << Energy4(row.low) << ", " << Energy4(row.high) << "] "
            << FormatFixed(100 * row.confidence, 1) << "% | " << FormatFixed(row.watts, 1)
            << " W | " << (row.reduction ? RatioText(*row.reduction) : std::string("-")) << " |\n";
      }
      out << "\n";
    }
    for (const std::string& remark : measured->remarks) out << "- " << remark << "\n";
    if (!measured->remarks.empty()) out << "\n";
  }

  if (size_t total = CountToolCalls(in); total > 0) {
    out << "## The programmer's tool calls\n\n"
        << total << " call" << (total == 1 ? "" : "s")
        << " (CUTLASS code search and layout probes); each with the first line of its answer.\n\n";
    size_t shown = 0;
    for (const auto& [iteration, calls] : in.tool_calls) {
      for (const agents::ProgrammerToolCall& call : calls) {
        if (shown++ == kMaxToolCallsShown) break;
        out << "- iteration " << iteration << ": `" << ToolCallLine(call) << "`\n";
      }
    }
    if (total > kMaxToolCallsShown) {
      out << "- ... " << total - kMaxToolCallsShown << " more (the run store keeps them all)\n";
    }
    out << "\n";
  }

  out << "## Search tree\n\n";
  MarkdownTree(in, search::Tree::kRootId, 0, out);
  out << "\n";

  if (verdict && !in.best_source.empty()) {
    const std::string best_py = RenderBestKernel(in, in.best_source);
    const std::string fence(std::max<size_t>(3, LongestBacktickRun(best_py) + 1), '`');
    out << "## Best kernel\n\n[`best.py`](best.py), " << NodeName(verdict->node) << ":\n\n"
        << fence << "python\n"
        << best_py << fence << "\n\n";
  }

  if (!in.summary.notes.empty()) {
    out << "## Notes\n\n";
    for (const std::string& note : in.summary.notes) out << "- " << note << "\n";
    out << "\n";
  }
  return out.str();
}

std::string RenderHtmlReport(const RunReportInput& in) {
  std::ostringstream out;
  const search::Tree& tree = *in.tree;
  const std::string title = "kernelpro run: " + ProblemName(in.config.problem);
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << Html(title) << "</title>\n<style>" << kHtmlStyle << "</style>\n"
      << "</head>\n<body>\n";
  out << "<h1>" << Html(title) << "</h1>\n";
  out << "<table class=\"facts\">\n";
  const std::optional<agents::ProblemSource> program = ProgramOf(in);
  for (const HeaderFact& fact : HeaderFacts(in, program)) {
    out << "<tr><th>" << Html(fact.label) << "</th><td>"
        << (fact.code ? "<code>" + Html(fact.value) + "</code>" : Html(fact.value))
        << "</td></tr>\n";
  }
  out << "</table>\n";

  out << "<h2>Result</h2>\n";
  auto verdict = JudgeBest(tree, in.nodes);
  const double best = verdict ? verdict->speedup.estimate : 0;
  if (!verdict) {
    out << "<p>No correct kernel was found.</p>\n";
  } else {
    const search::NodeInfo* info = Info(in, verdict->node);
    out << "<p>Best kernel: <strong>" << HtmlNodeLink(verdict->node) << "</strong>";
    if (info && !info->file.empty()) {
      out << " (" << HtmlFile(info->file) << ", saved as " << HtmlFile("best.py") << ")";
    }
    out << ", <strong>" << FormatFixed(verdict->speedup.estimate) << "x</strong> over "
        << Html(Baseline(program)) << ", " << ConfidenceInterval(verdict->speedup) << ".</p>\n";
    out << "<p class=\"verdict" << (verdict->clearly_faster ? "" : " noise") << "\">"
        << Html(verdict->text) << "</p>\n";
    if (auto choice = EnergyChoiceText(tree)) out << "<p>" << Html(*choice) << "</p>\n";
    out << "<p>Roofline: " << Html(RooflineText(in)) << "</p>\n";
    out << "<h3>Best lineage</h3>\n<table>\n";
    out << "<tr><th>node</th><th>iteration</th><th>mode</th><th>status</th>"
        << "<th>speedup [interval]</th><th>verdict</th><th>strategy</th></tr>\n";
    for (int id : Lineage(tree, verdict->node)) {
      NodeFacts f = FactsOf(in, id);
      if (f.node->is_root()) {
        out << "<tr><td>ROOT</td><td></td><td></td><td>reference</td><td class=\"num\">1.00x"
            << HtmlBar(RatioInterval{1, 1, 1, 0}, best) << "</td><td></td><td></td></tr>\n";
        continue;
      }
      out << "<tr><td>" << HtmlNodeLink(id) << "</td><td>" << f.iteration << "</td><td>"
          << Html(f.mode) << "</td><td>" << Html(f.status) << "</td><td class=\"num\">"
          << (f.speedup ? RatioText(*f.speedup) : std::string("-")) << HtmlBar(f.speedup, best)
          << "</td><td>" << Html(f.verdict) << "</td><td>" << (f.info ? Html(f.info->strategy) : "")
          << "</td></tr>\n";
    }
    out << "</table>\n";
  }

  out << "<h2>Figures</h2>\n";
  out << "<figure>\n"
      << SpeedupFigure(in) << "<figcaption>The best speedup over the reference "
      << "after each iteration, with its interval as a band; each point a candidate with its "
      << "interval, a cross a candidate that failed.</figcaption>\n</figure>\n";
  out << "<figure>\n"
      << TreeFigure(in) << "<figcaption>The search tree: a node per candidate "
      << "under the node it was written from, coloured by its outcome, sized by its MCTS visits; "
      << "hover a node for its details.</figcaption>\n</figure>\n";
  out << RooflineFigure(in);

  out << "<h2>Iterations</h2>\n<table>\n";
  out << "<tr><th>iteration</th><th>mode</th><th>expanded</th><th>outcome</th>"
      << "<th>tools that fired</th></tr>\n";
  for (const IterationFacts& it : IterationsOf(in)) {
    out << "<tr><td>" << it.iteration << "</td><td>" << Html(it.mode) << "</td><td>"
        << (it.expanded == search::Tree::kRootId ? "ROOT" : HtmlNodeLink(it.expanded))
        << "</td><td>" << Html(it.outcome) << "</td><td>"
        << (it.tools.empty() ? "-" : Html(it.tools)) << "</td></tr>\n";
  }
  out << "</table>\n";

  if (!in.energy.empty()) {
    out << "<h2>Energy</h2>\n<p>" << Html(EnergyIntro(in)) << "</p>\n<table>\n";
    out << "<tr><th>node</th><th>speedup</th><th>proxy pJ</th><th>dram</th><th>uncoalesced</th>"
        << "<th>spills</th><th>instructions</th><th>energy reduction</th></tr>\n";
    for (const EnergyRow& row : EnergyRows(in)) {
      out << "<tr><td>" << Html(row.name) << "</td><td>"
          << (row.speedup ? Html(RatioText(*row.speedup)) : "-") << "</td>";
      if (!row.proxy) {
        out << "<td colspan=\"6\">none: ncu lacks " << Html(Join(row.missing, ", "))
            << "</td></tr>\n";
        continue;
      }
      const profile::EnergyProxyTerms& t = row.proxy->terms;
      out << "<td>" << Energy4(row.proxy->total_pj) << "</td><td>" << Energy4(t.dram_pj)
          << "</td><td>" << Energy4(t.uncoalesced_pj) << "</td><td>" << Energy4(t.spills_pj)
          << "</td><td>" << Energy4(t.instructions_pj) << "</td><td>"
          << (row.reduction ? FormatFixed(*row.reduction) + "x" : std::string("-"))
          << "</td></tr>\n";
    }
    out << "</table>\n";
  }
  if (auto measured = ViewMeasuredEnergy(in)) {
    if (in.energy.empty()) out << "<h2>Energy</h2>\n";
    out << "<h3>Measured with NVML</h3>\n";
    if (!measured->rows.empty()) {
      out << "<p>Energy per call after the search, the reference and the fastest kernels "
             "measured back to back in one session: "
          << Html(measured->method) << ".</p>\n";
      out << "<table>\n<tr><th>kernel</th><th>speedup</th><th>mJ per call</th><th>interval</th>"
          << "<th>power</th><th>energy reduction</th></tr>\n";
      for (const MeasuredEnergyRow& row : measured->rows) {
        out << "<tr><td>" << Html(row.name) << "</td><td>"
            << (row.speedup ? Html(RatioText(*row.speedup)) : "-") << "</td><td>" << Energy4(row.mj)
            << "</td><td>[" << Energy4(row.low) << ", " << Energy4(row.high) << "] "
            << FormatFixed(100 * row.confidence, 1) << "%</td><td>" << FormatFixed(row.watts, 1)
            << " W</td><td>" << (row.reduction ? Html(RatioText(*row.reduction)) : std::string("-"))
            << "</td></tr>\n";
      }
      out << "</table>\n";
    }
    if (!measured->remarks.empty()) {
      out << "<ul>\n";
      for (const std::string& remark : measured->remarks)
        out << "<li>" << Html(remark) << "</li>\n";
      out << "</ul>\n";
    }
  }

  if (size_t total = CountToolCalls(in); total > 0) {
    out << "<h2>The programmer's tool calls</h2>\n<details><summary>" << total << " call"
        << (total == 1 ? "" : "s")
        << " (CUTLASS code search and layout probes); each with the first line of its answer"
        << "</summary>\n<table>\n<tr><th>iteration</th><th>call</th></tr>\n";
    size_t shown = 0;
    for (const auto& [iteration, calls] : in.tool_calls) {
      for (const agents::ProgrammerToolCall& call : calls) {
        if (shown++ == kMaxToolCallsShown) break;
        out << "<tr><td>" << iteration << "</td><td><code>" << Html(ToolCallLine(call))
            << "</code></td></tr>\n";
      }
    }
    out << "</table>\n</details>\n";
  }

  out << "<h2>Search tree</h2>\n";
  out << "<p class=\"muted\">Each node: iteration, mode, outcome with the speedup over the "
         "reference and its interval, and the noise verdict against its parent; open a node for "
         "its strategy, statistics, tools and errors.</p>\n";
  out << "<ul class=\"tree\">\n";
  HtmlTree(in, search::Tree::kRootId, best, out);
  out << "</ul>\n";

  if (verdict && !in.best_source.empty()) {
    out << "<h2>Best kernel</h2>\n<details open><summary>" << HtmlFile("best.py") << ", "
        << NodeName(verdict->node) << "</summary>\n<pre class=\"code\">"
        << Html(RenderBestKernel(in, in.best_source)) << "</pre>\n</details>\n";
  }

  if (!in.summary.notes.empty()) {
    out << "<h2>Notes</h2>\n<ul>\n";
    for (const std::string& note : in.summary.notes) out << "<li>" << Html(note) << "</li>\n";
    out << "</ul>\n";
  }
  out << "</body>\n</html>\n";
  return out.str();
}

Status WriteRunFiles(const RunReportInput& given, const std::optional<std::string>& best_source,
                     const std::string& out_dir) {
  RunReportInput input = given;
  if (input.best_source.empty() && best_source) input.best_source = *best_source;
  const store::RunLayout layout(out_dir.empty() ? input.config.run_dir : out_dir);
  std::error_code ec;
  std::filesystem::remove(layout.best_kernel(), ec);
  if (best_source) {
    if (Status s = WriteFileAtomically(layout.best_kernel(), RenderBestKernel(input, *best_source));
        !s.ok()) {
      return s;
    }
  }
  if (Status s = WriteFileAtomically(layout.markdown_report(), RenderMarkdownReport(input));
      !s.ok()) {
    return s;
  }
  return WriteFileAtomically(layout.html_report(), RenderHtmlReport(input));
}

std::optional<std::string> EnergyChoiceText(const search::Tree& tree) {
  const std::optional<int> best = tree.BestNode(), fastest = tree.FastestNode();
  if (!best || !fastest || *best == *fastest) return std::nullopt;
  const search::Node& b = tree.node(*best);
  const search::Node& f = tree.node(*fastest);
  if (!b.speedup || !f.speedup || !b.energy_reduction || !f.energy_reduction) return std::nullopt;
  // reduction = reference proxy / kernel proxy,
  // so proxy(b) / proxy(f) = reduction(f) / reduction(b).
  const double lower = 100 * (1 - *f.energy_reduction / *b.energy_reduction);
  return NodeName(*best) + " is the answer rather than the fastest, " + NodeName(*fastest) + " (" +
         RatioText(*f.speedup) + "): their speeds cannot be told apart (" + NodeName(*best) + ": " +
         RatioText(*b.speedup) + ") and " + NodeName(*best) + "'s energy proxy is " +
         FormatFixed(lower, lower < 0.1 ? 3 : 1) + "% lower (--energy aware).";
}

std::optional<MeasuredEnergyView> ViewMeasuredEnergy(const RunReportInput& in) {
  if (!in.summary.energy) return std::nullopt;
  const search::MeasuredEnergy& measured = *in.summary.energy;
  MeasuredEnergyView view;
  auto report = eval::EnergyReportFromStep(measured.step);
  if (!report.ok() || report->arms.size() != measured.nodes.size() + 1) {
    view.remarks.push_back("The stored NVML measurement is unreadable: " +
                           (report.ok() ? std::string("its arms do not match its kernels")
                                        : report.status().message()));
    return view;
  }
  view.method = report->method;
  for (std::size_t i = 0; i < report->arms.size(); ++i) {
    const eval::ArmEnergy& arm = report->arms[i];
    MeasuredEnergyRow row;
    row.name = i == 0 ? std::string("reference") : NodeName(measured.nodes[i - 1]);
    if (i > 0 && in.tree && in.tree->Contains(measured.nodes[i - 1])) {
      row.speedup = in.tree->node(measured.nodes[i - 1]).speedup;
    }
    row.mj = arm.per_call.median;
    row.low = arm.per_call.low;
    row.high = arm.per_call.high;
    row.confidence = arm.per_call.confidence;
    row.watts = arm.median_watts;
    if (i > 0) row.reduction = report->ratios[i - 1];
    if (!arm.warmup_settled) {
      view.remarks.push_back(row.name + "'s warm-up stopped at its " +
                             FormatFixed(arm.warmup_s, 1) + " s cap before the power settled.");
    }
    if (arm.per_call.low <= 0) {
      view.remarks.push_back(row.name +
                             " drew too little above idle in some windows for the "
                             "counter to resolve (dynamic energy at or below zero).");
    }
    view.rows.push_back(std::move(row));
  }
  if (view.rows.size() >= 3) {
    const MeasuredEnergyRow& a = view.rows[1];
    const MeasuredEnergyRow& b = view.rows[2];
    if (a.low <= b.high && b.low <= a.high) {
      view.remarks.push_back(a.name + " and " + b.name +
                             " spend the same energy per call within the measured noise "
                             "(their intervals overlap).");
    } else {
      const bool a_less = a.mj < b.mj;
      const MeasuredEnergyRow& less = a_less ? a : b;
      const MeasuredEnergyRow& more = a_less ? b : a;
      view.remarks.push_back(less.name + " spends less energy per call than " + more.name + " (" +
                             FormatFixed(more.mj / less.mj) +
                             "x, beyond the noise: their intervals do not overlap).");
    }
  }
  return view;
}

std::vector<std::string> MeasuredEnergyLines(const MeasuredEnergyView& view) {
  std::vector<std::string> lines;
  if (!view.rows.empty()) {
    std::string line =
        "energy: " + view.rows[0].name + " " + Energy4(view.rows[0].mj) + " mJ per call";
    for (std::size_t i = 1; i < view.rows.size(); ++i) {
      const MeasuredEnergyRow& row = view.rows[i];
      line += "; " + row.name + " " + MeasuredText(row);
      if (row.reduction) line += ", " + RatioText(*row.reduction) + " less";
    }
    lines.push_back(line + " (NVML)");
    lines.push_back("energy method: " + view.method);
  }
  for (const std::string& remark : view.remarks) lines.push_back("energy: " + remark);
  return lines;
}

}  // namespace kernelpro::report
