#include "report/run_report_view.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>
#include <string_view>
#include <utility>

#include "agents/problem_source.h"
#include "core/text.h"
#include "eval/verdict.h"
#include "llm/price.h"
#include "report/svg.h"

namespace kernelpro::report {
namespace {

// The programmer's tool calls the reports list; the run store keeps them all.
constexpr std::size_t kMaxToolCallsShown = 200;

// "95% interval [1.90, 2.10]"
std::string ConfidenceInterval(const RatioInterval& r) {
  return FormatFixed(100 * r.confidence, 0) + "% interval [" + FormatFixed(r.low) + ", " +
         FormatFixed(r.high) + "]";
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

// Whether the node's candidate never existed because the LLM failed: an llm_error node, or one a
// run recorded before that status existed (a compile_error without a candidate, with the LLM's
// reason).
bool LlmFailed(const search::Node& node, const search::NodeInfo* info) {
  if (node.llm_error()) return true;
  return !node.is_root() && info && info->candidate_id == 0 && !info->nothing.empty();
}

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

// Where the run measured as the worker reported it, else as it was asked: "cuda", "cpu".
std::string MeasuredDevice(const RunReportInput& in) {
  return in.environment.device.empty() ? in.config.device : in.environment.device;
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
  std::string device = MeasuredDevice(in);
  if (!env.device_name.empty()) device += " (" + env.device_name + ")";
  if (!env.driver.empty()) device += ", driver " + env.driver;
  // optimize never changes a GPU's clocks (ncu runs with --clock-control none).
  if (o.device == "cuda") device += "; clocks as found, not locked by kernelpro";
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
  facts.push_back({"Correctness", eval::CorrectnessCriterion(o.executor) + ": " +
                                      eval::DescribeCorrectness(o.executor)});
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

// "reaches 71 % of the attainable bound (...)", or why the position is unknown. On the device the
// run was asked for (config.device), where the roofline figure asks the worker's (MeasuredDevice).
std::string RooflineText(const RunReportInput& in) {
  if (auto position = BestRooflinePosition(in)) return position->summary;
  if (in.config.device != "cuda") {
    return "unknown (measured on " + in.config.device + ", not on a GPU).";
  }
  return in.stage1 ? "unknown (no timing of the best kernel)." : "unknown (no Stage-1 analysis).";
}

// "83 % of the speed of light: ..." from the node's evaluation (eval/speed_of_light.h).
std::string SpeedOfLightText(const search::NodeInfo* info) {
  if (!info || !info->sol_fraction) {
    return "unknown (its evaluation gave no fraction: an older run, no peaks for this machine, "
           "or a run on the CPU, which has none).";
  }
  return FormatFixed(100 * *info->sol_fraction, 0) +
         " % of the speed of light: the fastest time the reference's work (its FLOPs and fewest "
         "bytes) can take at the peaks of the machine it was timed on, over its median time.";
}

// ---- A failed node's errors

// The first line of `text` that says something, cut to `max_chars`.
std::string FirstLine(const std::string& text, std::size_t max_chars = 100) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::size_t begin = line.find_first_not_of(" \t\r");
    if (begin == std::string::npos) continue;
    line = line.substr(begin);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    return OneLineText(line, max_chars);
  }
  return "";
}

// Whether `line` is a compiler's (or CUDA's) error line: "x.cu(9): error: ...", "x.cpp:3:5: fatal
// error: ...", "ptxas error   : ...", "CUDA error: ...". Not "RuntimeError:" (a traceback's last
// line, which the head of the log shows anyway) and not "-Werror=...".
bool IsErrorLine(std::string_view line) {
  for (std::size_t at = line.find("error"); at != std::string_view::npos;
       at = line.find("error", at + 1)) {
    const bool word_start =
        at == 0 || !(std::isalnum(static_cast<unsigned char>(line[at - 1])) || line[at - 1] == '_');
    std::size_t after = at + 5;
    while (after < line.size() && line[after] == ' ') ++after;
    if (word_start && after < line.size() && line[after] == ':') return true;
  }
  return false;
}

// Where the first error line of `errors` starts (0 when none), and its index among the lines.
std::size_t FirstErrorOffset(const std::string& errors, int* line_index = nullptr) {
  std::size_t begin = 0;
  for (int index = 0; begin < errors.size(); ++index) {
    std::size_t newline = errors.find('\n', begin);
    std::size_t end = newline == std::string::npos ? errors.size() : newline;
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
std::string FirstErrorLine(const std::string& errors, std::size_t max_chars = 100) {
  return FirstLine(errors.substr(FirstErrorOffset(errors)), max_chars);
}

// The head of a failed node's errors: enough to recognise the failure, not the whole build log.
// It starts `context` lines before the first error line, so the "In function" line that precedes
// a gcc error stays with it.
std::string ErrorExcerpt(const std::string& all_errors, int max_lines = 20,
                         std::size_t max_chars = 2000, int context = 2) {
  int error_line = 0;
  FirstErrorOffset(all_errors, &error_line);
  const int skip = std::max(0, error_line - context);
  std::size_t start = 0;
  for (int line = 0; line < skip; ++line) start = all_errors.find('\n', start) + 1;
  const std::string errors = all_errors.substr(start);
  std::size_t end = 0;
  for (int line = 0; line < max_lines && end < errors.size(); ++line) {
    std::size_t newline = errors.find('\n', end);
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

// ---- The tree, node by node and expansion by expansion

RunNodeView NodeViewOf(const RunReportInput& in, const search::Node& node) {
  const search::NodeInfo* info = Info(in, node.id);
  RunNodeView v;
  v.id = node.id;
  v.parent = node.parent;
  v.children = node.children;
  v.name = NodeName(node.id);
  v.root = node.is_root();
  v.correct = node.correct();
  v.terminal = node.terminal;
  v.iteration = node.expansion + 1;
  v.mode = Mode(node);
  v.status = node.is_root() ? "reference" : node.status ? eval::EvalStatusName(*node.status) : "?";
  if (node.correct()) v.speedup = node.speedup;
  v.noisy = node.noisy_timing;
  if (LlmFailed(node, info)) v.status = eval::EvalStatusName(eval::EvalStatus::kLlmError);
  v.status_text = v.speedup ? v.status + " " + RatioText(*v.speedup) : v.status;
  v.speedup_text = v.speedup ? RatioText(*v.speedup) : std::string("-");
  v.reward = FormatFixed(node.reward);
  v.mean_reward = FormatFixed(node.MeanReward());
  v.visits = node.visits;
  if (info) {
    v.verdict = info->verdict;
    if (info->noisy_timing) v.verdict += " (noisy timing)";
    if (info->shapes == "fixed-shape") v.verdict += " (fixed-shape)";
    v.noisy = v.noisy || info->noisy_timing;
    v.strategy = info->strategy;
    v.file = info->file;
    v.tools_fired = info->tools_fired;
    v.has_errors = !info->errors.empty();
    if (!node.correct()) v.first_error_line = FirstErrorLine(info->errors);
    if (v.has_errors) v.error_excerpt = ErrorExcerpt(info->errors);
  }
  return v;
}

std::vector<IterationView> IterationsOf(const search::Tree& tree,
                                        const std::vector<RunNodeView>& nodes) {
  std::vector<IterationView> iterations;
  for (int e = 0; e < tree.expansions(); ++e) {
    std::vector<const RunNodeView*> children;
    for (const RunNodeView& node : nodes) {
      if (!node.root && node.iteration == e + 1) children.push_back(&node);
    }
    if (children.empty()) continue;
    const RunNodeView& first = *children.front();
    IterationView it;
    it.iteration = e + 1;
    it.mode = first.mode;
    it.expanded = first.parent;
    it.expanded_name = NodeName(first.parent);
    for (const RunNodeView* f : children) {
      std::string text = f->name + " " + f->status_text;
      if (!f->verdict.empty()) text += " " + f->verdict;
      it.outcome += (it.outcome.empty() ? "" : "; ") + text;
      if (!f->tools_fired.empty()) {
        it.tools += (it.tools.empty() ? "" : "; ") + f->name + ": " + Join(f->tools_fired, ", ");
      }
    }
    iterations.push_back(std::move(it));
  }
  return iterations;
}

// ---- The best kernel

// What the best kernel's shape checks came to (search/node_info.h NodeInfo::shapes).
std::string ShapesSentence(const std::string& shapes) {
  if (shapes == "fixed-shape") {
    return "Shapes: fixed-shape (correct on the benchmark's shape, but not on every shape "
           "variant checked; --require-shape-generality makes that a failure).";
  }
  if (shapes.starts_with("shapes: ")) {
    return "Shapes: " + shapes.substr(8) + " correct (the benchmark's and the variants checked).";
  }
  return "";
}

std::optional<BestResultView> BestResultOf(const RunReportInput& in,
                                           const std::optional<agents::ProblemSource>& program) {
  const search::Tree& tree = *in.tree;
  auto verdict = JudgeBest(tree, in.nodes);
  if (!verdict) return std::nullopt;
  BestResultView best;
  best.node = verdict->node;
  best.name = NodeName(verdict->node);
  const search::NodeInfo* info = Info(in, verdict->node);
  if (info) {
    best.file = info->file;
    best.shapes = ShapesSentence(info->shapes);
  }
  best.estimate = verdict->speedup.estimate;
  best.speedup = FormatFixed(verdict->speedup.estimate);
  best.baseline = Baseline(program);
  best.interval = ConfidenceInterval(verdict->speedup);
  best.verdict = verdict->text;
  best.clearly_faster = verdict->clearly_faster;
  best.energy_choice = EnergyChoiceText(tree);
  best.roofline = RooflineText(in);
  best.speed_of_light = SpeedOfLightText(info);
  best.lineage = Lineage(tree, verdict->node);
  return best;
}

// best.py: the best kernel's source behind a header of '#' comment lines.
std::string BestKernelText(const RunReportInput& in, const std::optional<BestResultView>& best,
                           const std::string& source) {
  std::ostringstream out;
  const RunEnvironment& env = in.environment;
  out << "# kernelpro: the fastest validated kernel of the run in " << in.config.run_dir << "\n";
  out << "# problem:   " << in.config.problem << "\n";
  std::string device = MeasuredDevice(in);
  if (!env.device_name.empty()) device += ", " + env.device_name;
  out << "# device:    " << device << "\n";
  out << "# driver:    " << (env.driver.empty() ? "unknown" : env.driver) << "\n";
  out << "# toolchain: " << (env.toolchain.empty() ? "unknown" : env.toolchain) << "\n";
  if (best) {
    out << "# speedup:   " << best->speedup << "x over " << best->baseline << ", " << best->interval
        << " (ratio of median times)\n";
    out << "# verdict:   " << best->verdict << "\n";
    if (best->energy_choice) out << "# energy:    " << *best->energy_choice << "\n";
    out << "# lineage:   " << LineageText(*in.tree, best->node) << "\n";
    const search::Node& node = in.tree->node(best->node);
    out << "# found in:  iteration " << node.expansion + 1 << " of " << in.summary.iterations_done
        << " (" << in.config.search << ", " << in.config.candidates
        << " candidates per iteration)\n";
  }
  out << "\n" << source;
  if (!source.empty() && source.back() != '\n') out << "\n";
  return out.str();
}

// ---- Energy

std::optional<double> ReferenceProxy(const RunReportInput& in) {
  if (!in.stage1) return std::nullopt;
  return roofline::ReferenceEnergyProxy(
      *in.stage1, profile::EnergyProxyOptionsNamed(in.config.tools.energy_proxy));
}

std::string EnergyIntro(const RunReportInput& in) {
  const bool paper = in.config.tools.energy_proxy == "paper";
  std::string text =
      "Energy proxy (paper Eq. 4, pJ, from each kernel's ncu counters: 20 pJ/B of DRAM traffic, "
      "100 pJ per excess global-load sector, 80 pJ per local-memory sector, 3 pJ per warp "
      "instruction; a request is charged as uncoalesced beyond " +
      std::string(paper ? "4 sectors, as Eq. 4 is printed (--energy-proxy paper)"
                        : "the sectors a coalesced request of its loads' width touches") +
      "). ";
  if (auto reference = ReferenceProxy(in)) {
    text += "Reference: " + Energy4(*reference) +
            " pJ; reduction = reference / candidate (> 1 spends less).";
  } else {
    text +=
        "The reference's proxy is unknown (no ncu profile of it with every counter), so no "
        "reduction is shown.";
  }
  return text;
}

// Each correct profiled node's proxy terms, and its reduction over the reference when the
// reference's proxy is known.
std::optional<EnergyProxySection> EnergyProxyOf(const RunReportInput& in) {
  if (in.energy.empty()) return std::nullopt;
  EnergyProxySection section;
  section.intro = EnergyIntro(in);
  const std::optional<double> reference = ReferenceProxy(in);
  for (const auto& [id, estimate] : in.energy) {
    if (!in.tree->Contains(id)) continue;
    EnergyProxyRow row;
    row.name = NodeName(id);
    const std::optional<RatioInterval>& speedup = in.tree->node(id).speedup;
    row.speedup = speedup ? RatioText(*speedup) : "-";
    if (!estimate.proxy) {
      row.missing = Join(estimate.missing, ", ");
      section.rows.push_back(std::move(row));
      continue;
    }
    const profile::EnergyProxy& proxy = *estimate.proxy;
    row.total = Energy4(proxy.total_pj);
    row.dram = Energy4(proxy.terms.dram_pj);
    row.uncoalesced = Energy4(proxy.terms.uncoalesced_pj);
    row.spills = Energy4(proxy.terms.spills_pj);
    row.instructions = Energy4(proxy.terms.instructions_pj);
    std::optional<double> reduction;
    if (reference) reduction = profile::EnergyReduction(*reference, proxy.total_pj);
    row.reduction = reduction ? FormatFixed(*reduction) + "x" : std::string("-");
    section.rows.push_back(std::move(row));
  }
  return section;
}

std::optional<MeasuredEnergySection> MeasuredEnergyOf(const RunReportInput& in) {
  auto measured = ViewMeasuredEnergy(in);
  if (!measured) return std::nullopt;
  MeasuredEnergySection section;
  section.method = measured->method;
  section.remarks = measured->remarks;
  for (const MeasuredEnergyRow& row : measured->rows) {
    section.rows.push_back({row.name, row.speedup ? RatioText(*row.speedup) : "-", Energy4(row.mj),
                            "[" + Energy4(row.low) + ", " + Energy4(row.high) + "] " +
                                FormatFixed(100 * row.confidence, 1) + "%",
                            FormatFixed(row.watts, 1) + " W",
                            row.reduction ? RatioText(*row.reduction) : "-"});
  }
  return section;
}

// ---- The programmer's tool calls

void AddToolCalls(const RunReportInput& in, RunReportView& view) {
  for (const auto& [iteration, calls] : in.tool_calls) view.tool_call_count += calls.size();
  // The first kMaxToolCallsShown calls of the run, in iteration order; the rest are counted.
  for (const auto& [iteration, calls] : in.tool_calls) {
    for (const agents::ProgrammerToolCall& call : calls) {
      if (view.tool_calls.size() == kMaxToolCallsShown) break;
      view.tool_calls.push_back({iteration, ToolCallLine(call)});
    }
  }
  view.tool_calls_over_cap = view.tool_call_count - view.tool_calls.size();
}

// ---- The roofline figure

// "0.57 TFLOP/s at 0.30 FLOP/B"
std::string PositionText(double flops_per_s, double intensity) {
  return svg::WithUnit(flops_per_s, "FLOP/s") + " at " + FormatFixed(intensity) + " FLOP/B";
}

RooflineFigureView RooflineFigureOf(const RunReportInput& in, std::optional<int> best) {
  RooflineFigureView figure;
  figure.device = MeasuredDevice(in);
  figure.has_flops = in.stage1 && in.stage1->flops > 0;
  if (figure.device != "cuda" || !figure.has_flops) return figure;
  const roofline::ReferenceAnalysis& s1 = *in.stage1;
  figure.flops = s1.flops;
  figure.chart = {s1.gpu_name, s1.precision, s1.peak_flops, s1.dram_bytes_per_s, {}};
  // The reference's median time: a correct node's speedup is the ratio of the two medians.
  double reference_s = 0;
  figure.reference_timing = "its median time in the evaluations";
  if (best) {
    const search::NodeInfo* info = Info(in, *best);
    const search::Node& node = in.tree->node(*best);
    if (info && info->candidate_ms && node.speedup) {
      reference_s = node.speedup->estimate * *info->candidate_ms * 1e-3;
    }
  }
  if (reference_s <= 0 && s1.measured && s1.measured->duration_s > 0) {
    reference_s = s1.measured->duration_s;
    figure.reference_timing = "its kernels' time under ncu (Stage 1)";
  }
  if (reference_s > 0 && s1.min_bytes > 0) {
    const double intensity = s1.flops / s1.min_bytes, achieved = s1.flops / reference_s;
    figure.chart.points.push_back(
        {"reference", intensity, achieved, true, false,
         "the reference: " + PositionText(achieved, intensity) + " (minimum bytes)"});
  }
  for (const search::Node& node : in.tree->nodes()) {
    if (!node.correct()) continue;
    ++figure.correct;
    const search::NodeInfo* info = Info(in, node.id);
    auto bytes = in.dram_bytes.find(node.id);
    if (!info || !info->candidate_ms || *info->candidate_ms <= 0 || bytes == in.dram_bytes.end() ||
        bytes->second <= 0) {
      continue;
    }
    ++figure.placed;
    const double intensity = s1.flops / bytes->second;
    const double achieved = s1.flops / (*info->candidate_ms * 1e-3);
    figure.chart.points.push_back({NodeName(node.id), intensity, achieved, false, best == node.id,
                                   NodeName(node.id) + ": " + PositionText(achieved, intensity) +
                                       ", " +
                                       (node.speedup ? RatioText(*node.speedup) : std::string())});
  }
  return figure;
}

}  // namespace

std::string NodeName(int id) {
  return id == search::Tree::kRootId ? "ROOT" : "n" + std::to_string(id);
}

std::string Energy4(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

bool LinkableRunFile(const std::string& file) {
  if (file.empty() || file.front() == '/' || file.find("..") != std::string::npos) return false;
  for (char c : file) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.' &&
        c != '/') {
      return false;
    }
  }
  return true;
}

std::string OneLineText(std::string text, std::size_t max_chars) {
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '|') c = ' ';
  }
  return ShortenText(std::move(text), max_chars);
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
  return BestKernelText(in, BestResultOf(in, ProgramOf(in)), source);
}

RunReportView BuildRunReportView(const RunReportInput& in) {
  const search::Tree& tree = *in.tree;
  RunReportView view;
  view.title = "kernelpro run: " + ProblemName(in.config.problem);
  const std::optional<agents::ProblemSource> program = ProgramOf(in);
  view.header = HeaderFacts(in, program);
  view.best = BestResultOf(in, program);
  view.reference_stays = ReferenceStaysText(tree).value_or("");
  if (view.best && !in.best_source.empty()) {
    view.best->best_kernel = BestKernelText(in, view.best, in.best_source);
  }
  for (const search::Node& node : tree.nodes()) view.nodes.push_back(NodeViewOf(in, node));
  view.iterations = IterationsOf(tree, view.nodes);
  view.energy_proxy = EnergyProxyOf(in);
  view.measured_energy = MeasuredEnergyOf(in);
  AddToolCalls(in, view);
  view.chart_iterations = std::max(tree.expansions(), in.summary.iterations_done);
  view.roofline =
      RooflineFigureOf(in, view.best ? std::optional<int>(view.best->node) : std::nullopt);
  view.notes = in.summary.notes;
  return view;
}

}  // namespace kernelpro::report
