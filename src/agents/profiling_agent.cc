#include "agents/profiling_agent.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <utility>

#include "core/text.h"
#include "llm/structured.h"
#include "llm/tool_loop.h"
#include "llm/types.h"
#include "profile/ncu_catalog.h"
#include "profile/ncu_runner.h"
#include "tools/metric_set.h"
#include "tools/work_check.h"

namespace kernelpro::agents {
namespace {

constexpr size_t kMaxCodeChars = 16000;

// The raw-metrics condition (appendix C): counters a profiler prints, without interpretation.
// Fifty of the catalog's names, chosen to cover what the tools read (throughput, traffic, access
// granularity, cache hits, occupancy limits, stall reasons, divergence, tensor pipes) and leaving
// out the per-opcode instruction counts that only restate the SASS view.
const std::vector<std::string> kRawCounters = {
    // throughput
    "gpu__time_duration.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__bytes.sum.per_second",
    "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active",
    // memory
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
    "l1tex__t_sector_hit_rate.pct",
    "lts__t_sector_hit_rate.pct",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    // occupancy
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "launch__registers_per_thread",
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "launch__occupancy_limit_warps",
    "launch__occupancy_limit_blocks",
    "launch__waves_per_multiprocessor",
    "launch__block_size",
    "launch__shared_mem_per_block_static",
    "launch__shared_mem_per_block_dynamic",
    // stalls and issue
    "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct",
    "smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct",
    "smsp__warp_issue_stalled_barrier_per_warp_active.pct",
    "smsp__warp_issue_stalled_branch_resolving_per_warp_active.pct",
    "smsp__warp_issue_stalled_membar_per_warp_active.pct",
    "smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct",
    "smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct",
    "smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct",
    "smsp__warp_issue_stalled_wait_per_warp_active.pct",
    "smsp__warp_issue_stalled_not_selected_per_warp_active.pct",
    "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "smsp__warps_eligible.avg.per_cycle_active",
    // instructions and tensor pipes
    "smsp__inst_executed.sum",
    "smsp__thread_inst_executed_per_inst_executed.ratio",
    "smsp__sass_branch_targets_threads_divergent.sum",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_tensor_op_hmma.sum",
};

const tools::ToolRegistry& RegistryOf(const ProfilingInput& input) {
  if (input.registry != nullptr) return *input.registry;
  static const tools::ToolRegistry builtin = tools::BuiltinRegistry();
  return builtin;
}

tools::AnalysisOptions AnalysisOptionsOf(const ProfilingInput& input) {
  tools::AnalysisOptions options;
  if (input.stage1) {
    options.bottleneck = input.stage1->bottleneck;
    options.work = tools::ProblemWorkOf(*input.stage1);
  }
  options.energy = input.energy_tools;
  options.overrides = input.overrides;
  return options;
}

std::string ClassName(roofline::Bottleneck bottleneck) {
  return bottleneck == roofline::Bottleneck::kMixed
             ? "mixed (neither roof dominates)"
             : std::string(roofline::BottleneckName(bottleneck)) + "-bound";
}

// ---- The prompt's sections ---------------------------------------------------------------------

std::string Header(const ProfilingInput& input, bool with_stage1) {
  std::ostringstream out;
  out << "# Profile of one candidate kernel\n\n";
  if (input.speedup) {
    out << "Speedup over the reference: " << tools::FormatNumber(*input.speedup) << "x"
        << (*input.speedup < 1 ? " (slower than the reference)" : "") << ".\n";
  } else {
    out << "Speedup over the reference: not measured.\n";
  }
  if (with_stage1 && input.stage1) {
    const roofline::ReferenceAnalysis& s = *input.stage1;
    out << "Stage 1 (roofline of the reference): " << ClassName(s.bottleneck) << ", confidence "
        << s.confidence << ".";
    if (!s.rationale.empty()) out << " " << AsSentence(s.rationale);
    out << "\n";
    // Where the candidate stands: its GPU time in one forward call, else its kernels' durations.
    double seconds = 0;
    std::string from;
    if (input.metrics.timeline && input.metrics.timeline->gpu_busy_us > 0) {
      seconds = input.metrics.timeline->gpu_busy_us * 1e-6;
      from = "GPU busy time of one forward call";
    } else if (input.metrics.ncu) {
      for (const profile::NcuKernel& k : input.metrics.ncu->kernels)
        seconds += k.duration_ns() * 1e-9;
      from = "summed ncu kernel durations";
    }
    if (seconds > 0 && s.roofline.attainable_time_s > 0) {
      out << "Against the roofline, timed by the " << from << ", the candidate "
          << roofline::PositionAgainstRoofline(s, seconds).summary << ".\n";
    }
  }
  return out.str();
}

std::string Bytes(double bytes) {
  if (bytes >= 1 << 20) return tools::FormatNumber(bytes / (1 << 20)) + " MiB";
  if (bytes >= 1 << 10) return tools::FormatNumber(bytes / (1 << 10)) + " KiB";
  return tools::FormatNumber(bytes) + " B";
}

std::string SassSection(const profile::Metrics& metrics) {
  std::ostringstream out;
  out << "## SASS summary\n\n";
  if (!metrics.sass) {
    out << "Not collected (no cuobjdump output for this candidate).\n";
    return out.str();
  }
  const tools::MetricSet set = tools::BuildMetricSet(metrics);
  auto count = [&](const char* name) {
    return static_cast<long long>(set.Find(std::string("sass.") + name).value_or(0));
  };
  std::vector<const profile::SassKernel*> kernels = tools::SassEntryKernels(*metrics.sass);
  out << "Static instruction counts from cuobjdump of the built extension ("
      << (metrics.sass->arch.empty() ? "architecture unknown" : metrics.sass->arch) << "), over "
      << kernels.size() << " kernel function(s)";
  if (!kernels.empty()) {
    out << ": ";
    for (size_t i = 0; i < kernels.size() && i < 4; ++i) {
      out << (i ? "; " : "") << profile::DemangleKernelName(kernels[i]->name);
    }
    if (kernels.size() > 4) out << "; and " << kernels.size() - 4 << " more";
  }
  out << ".\n";
  const long long tensor = count("tensor_wgmma") + count("tensor_hmma") + count("tensor_imma") +
                           count("tensor_dmma") + count("tensor_bmma");
  out << "- Tensor-core instructions: " << (tensor == 0 ? "none" : std::to_string(tensor))
      << " (WGMMA " << count("tensor_wgmma") << ", HMMA " << count("tensor_hmma") << ", IMMA "
      << count("tensor_imma") << ", DMMA " << count("tensor_dmma") << ", BMMA "
      << count("tensor_bmma") << ")\n";
  out << "- Global loads (LDG): " << count("global_load") << " (128-bit "
      << count("global_load_128") << ", 64-bit " << count("global_load_64") << ", 32-bit "
      << count("global_load_32") << ", narrower " << count("global_load_narrow") << ")\n";
  out << "- Global stores (STG): " << count("global_store") << " (128-bit "
      << count("global_store_128") << ", 64-bit " << count("global_store_64") << ", 32-bit "
      << count("global_store_32") << ", narrower " << count("global_store_narrow") << ")\n";
  out << "- Shared memory: " << count("shared_load") << " loads (LDS), " << count("shared_store")
      << " stores (STS), " << count("shared_load_matrix") << " ldmatrix (LDSM)\n";
  out << "- Asynchronous copies: LDGSTS (cp.async) " << count("ldgsts") << ", TMA " << count("tma")
      << "\n";
  out << "- Register spills: STL " << count("local_store") << ", LDL " << count("local_load")
      << "; largest stack frame " << Bytes(std::max<double>(0, count("stack_bytes_max")))
      << " per thread\n";
  const long long registers = count("registers_max");
  out << "- Registers per thread: "
      << (registers < 0 ? std::string("unknown") : std::to_string(registers))
      << " (most of any kernel function)\n";
  if (!metrics.sass->library_calls.empty()) {
    out << "- Library calls: ";
    for (size_t i = 0; i < metrics.sass->library_calls.size(); ++i) {
      out << (i ? ", " : "") << metrics.sass->library_calls[i];
    }
    out << "\n";
  } else {
    out << "- Library calls: none (no cuBLAS or cuDNN symbols)\n";
  }
  out << "- Instructions in total: " << count("instructions") << "\n";
  return out.str();
}

std::string TimelineSection(const profile::Metrics& metrics) {
  std::ostringstream out;
  out << "## Timeline summary\n\n";
  if (!metrics.timeline) {
    out << "Not collected (no trace of a forward call for this candidate).\n";
    return out.str();
  }
  const profile::TimelineSummary& t = *metrics.timeline;
  const std::string source = t.source == "nsys"             ? "Nsight Systems"
                             : t.source == "torch_profiler" ? "the PyTorch profiler"
                                                            : t.source;
  out << "One forward call, traced with " << source << ":\n";
  out << "- End to end: " << tools::FormatQuantity(t.end_to_end_us, "us") << "; GPU busy "
      << tools::FormatQuantity(t.gpu_busy_us, "us");
  if (t.end_to_end_us > 0)
    out << " (" << tools::FormatQuantity(100 * t.gpu_busy_us / t.end_to_end_us, "%") << ")";
  out << "\n";
  out << "- Launch overhead: " << tools::FormatQuantity(100 * t.launch_overhead_share, "%")
      << " of end to end; average launch latency "
      << tools::FormatQuantity(t.avg_launch_latency_us, "us") << "\n";
  out << "- Kernels launched: " << t.kernel_count << "\n";
  out << "- Synchronisations: " << t.sync_calls;
  if (t.sync_calls > 0) out << " (" << tools::FormatQuantity(t.sync_time_us, "us") << ")";
  out << "\n";
  out << "- Memory copies: ";
  if (t.memcpy.empty()) out << "none";
  for (size_t i = 0; i < t.memcpy.size(); ++i) {
    const profile::MemcpySummary& m = t.memcpy[i];
    out << (i ? "; " : "") << m.direction << " " << m.count << " (" << Bytes(m.bytes) << ", "
        << tools::FormatQuantity(m.time_us, "us") << ")";
  }
  out << "\n";
  double gap_total = 0, gap_largest = 0;
  for (const profile::IdleGap& g : t.gaps) {
    gap_total += g.duration_us;
    gap_largest = std::max(gap_largest, g.duration_us);
  }
  out << "- GPU idle gaps above " << tools::FormatQuantity(t.gap_threshold_us, "us") << ": "
      << t.gaps.size();
  if (!t.gaps.empty()) {
    out << ", " << tools::FormatQuantity(gap_total, "us") << " in total, largest "
        << tools::FormatQuantity(gap_largest, "us");
  }
  out << "\n";
  return out.str();
}

// The prompt's four groups. The catalog's "throughput" group holds both SM and memory-system
// rates; the memory ones join the memory group so that each group answers one question.
enum class Group { kCompute, kMemory, kOccupancy, kStalls };

Group GroupOf(const profile::NcuMetric& metric) {
  if (metric.category == "warp_stalls") return Group::kStalls;
  if (metric.category == "occupancy") return Group::kOccupancy;
  if (metric.category == "memory") return Group::kMemory;
  if (metric.category == "throughput") {
    for (const char* prefix : {"dram__", "l1tex__", "lts__", "gpu__compute_memory"}) {
      if (metric.name.starts_with(prefix)) return Group::kMemory;
    }
  }
  return Group::kCompute;  // throughput of the SM and its pipes, instructions, tensor pipes
}

std::string NcuSection(const profile::Metrics& metrics) {
  std::ostringstream out;
  out << "## ncu metrics by category\n\n";
  if (!metrics.ncu || metrics.ncu->kernels.empty()) {
    out << "Not collected (no Nsight Compute counters for this candidate).\n";
    return out.str();
  }
  const profile::NcuKernel& aggregate = metrics.ncu->aggregate;
  out << "Nsight Compute counters over " << metrics.ncu->kernels.size()
      << " kernel launch(es): duration-weighted means for rates and percentages, sums for counts "
         "and bytes.\n";
  const std::pair<Group, const char*> kGroups[] = {{Group::kCompute, "Compute"},
                                                   {Group::kMemory, "Memory"},
                                                   {Group::kOccupancy, "Occupancy"},
                                                   {Group::kStalls, "Stalls and issue"}};
  for (const auto& [group, title] : kGroups) {
    std::ostringstream lines;
    for (const profile::NcuMetric& metric : profile::NcuMetricCatalog()) {
      if (GroupOf(metric) != group) continue;
      auto value = aggregate.values.find(metric.name);
      if (value == aggregate.values.end()) continue;
      auto unit = aggregate.units.find(metric.name);
      lines << "- " << metric.name << " = "
            << tools::FormatQuantity(value->second,
                                     unit == aggregate.units.end() ? "" : unit->second)
            << "\n";
    }
    if (lines.tellp() > 0) out << "\n### " << title << "\n" << lines.str();
  }
  return out.str();
}

std::string RawCounters(const profile::Metrics& metrics) {
  if (!metrics.ncu || metrics.ncu->kernels.empty()) return "";
  std::ostringstream out;
  const auto& values = metrics.ncu->aggregate.values;
  for (const std::string& name : kRawCounters) {
    auto it = values.find(name);
    if (it != values.end()) out << name << "=" << tools::FormatNumber(it->second, 6) << "\n";
  }
  return out.str();
}

std::string RawSection(const profile::Metrics& metrics) {
  std::string counters = RawCounters(metrics);
  if (counters.empty()) return "## ncu counters\n\nNot collected.\n";
  return "## ncu counters\n\nAs name=value, in base units (bytes, nanoseconds, percent):\n" +
         counters;
}

std::string CodeSection(const std::string& code) {
  if (code.empty()) return "";
  std::string shown = code;
  if (shown.size() > kMaxCodeChars) {
    shown = shown.substr(0, kMaxCodeChars) + "\n# [... " +
            std::to_string(code.size() - kMaxCodeChars) + " more characters not shown ...]";
  }
  if (shown.back() != '\n') shown += "\n";
  return "## Candidate source\n\n```python\n" + shown + "```\n";
}

std::string TaskSection(FeedbackMode mode) {
  std::string out = "## Your task\n\n";
  switch (mode) {
    case FeedbackMode::kTools:
      out +=
          "Say what limits this kernel now and rank the changes the programmer should make "
          "next, most valuable first. Start from the tool findings: keep their order unless the "
          "numbers above show it is wrong, and turn each one into a concrete change to this "
          "code.";
      break;
    case FeedbackMode::kReactive:
      out +=
          "Call the micro-profiling tools you find relevant (each is a function without "
          "arguments that analyses this kernel's metrics), then say what limits this kernel now "
          "and rank the changes the programmer should make next, most valuable first, each a "
          "concrete change to this code.";
      break;
    case FeedbackMode::kRaw:
      out +=
          "From these counters, say what limits this kernel now and rank the changes the "
          "programmer should make next, most valuable first, each a concrete change to this "
          "code.";
      break;
    case FeedbackMode::kNone:
      return "";
  }
  return out + " Answer with the JSON object described in your instructions.\n";
}

// One tool's result as the reactive LLM reads it.
std::string ToolResultText(const tools::Analysis& full, const std::string& name) {
  for (const tools::ToolOutput& o : full.findings) {
    if (o.tool != name) continue;
    tools::Analysis one;
    one.findings.push_back(o);
    std::string text = tools::RenderGuidance(one);
    size_t start = text.find("### 1.");
    return start == std::string::npos ? text : text.substr(start);
  }
  for (const tools::ToolOutput& o : full.skipped) {
    if (o.tool == name) return name + " could not run: " + o.skip_reason + ".";
  }
  return name + " ran on this kernel's metrics and found nothing to report.";
}

// The findings of the tools the reactive LLM called, in the registry's order.
std::string CalledToolsGuidance(const tools::Analysis& full,
                                const std::map<std::string, int>& called,
                                const tools::RenderOptions& render) {
  if (called.empty()) return "";
  tools::Analysis subset;
  subset.bottleneck = full.bottleneck;
  for (const tools::ToolOutput& o : full.findings) {
    if (called.count(o.tool)) subset.findings.push_back(o);
  }
  for (const tools::ToolOutput& o : full.skipped) {
    if (called.count(o.tool)) subset.skipped.push_back(o);
  }
  for (const std::string& q : full.quiet) {
    if (called.count(q)) subset.quiet.push_back(q);
  }
  return tools::RenderGuidance(subset, render);
}

std::string SystemPrompt(FeedbackMode mode) {
  const std::string role =
      "You are the profiling agent of a system that optimises CUDA kernels. A programmer agent "
      "wrote the candidate kernel below; it compiled and produced correct results. Your analysis "
      "is what the programmer reads before its next attempt, so it must say what to change in "
      "the code and why, not restate numbers.\n\n";
  const std::string answer =
      "\n\nAnswer with one JSON object: \"bottleneck\" (compute, memory, latency or mixed, and "
      "what limits the kernel in a few words), \"severity\" (critical, high, medium or low: how "
      "far the kernel is from what the hardware allows), \"summary\" (two or three sentences "
      "with the numbers that matter) and \"recommendations\" (a list of {\"priority\", "
      "\"action\", \"rationale\"}, priority 1 first; at most five; each action one concrete code "
      "change, each rationale the evidence for it).";
  switch (mode) {
    case FeedbackMode::kTools:
      return role +
             "You receive the kernel's compiled SASS summary, a timeline of one forward call, the "
             "findings of micro-profiling tools, and Nsight Compute counters. The tools apply "
             "expert thresholds to the same counters and were chosen for the problem's "
             "roofline class; treat their findings as the diagnosis to build on, use the "
             "counters to confirm and rank them, and prefer a change that addresses the "
             "dominant bottleneck over one that polishes a minor counter." +
             answer;
    case FeedbackMode::kReactive:
      return role +
             "You receive the kernel's compiled SASS summary, a timeline of one forward call and "
             "Nsight Compute counters. Micro-profiling tools are available as functions: each "
             "applies expert thresholds to this kernel's counters and returns its finding, or "
             "says it found nothing. Decide which tools to call, then give your analysis; "
             "prefer a change that addresses the dominant bottleneck over one that polishes a "
             "minor counter." +
             answer;
    case FeedbackMode::kRaw:
      return role + "You receive Nsight Compute counters of the kernel as name=value lines." +
             answer;
    case FeedbackMode::kNone:
      return "";
  }
  return "";
}

// Everything one analysis needs, computed once: the prompt and the tools' results.
struct Prepared {
  tools::Analysis analysis;  // every relevant tool's result (kTools, kReactive)
  std::string guidance;      // kTools: the rendered analysis injected into the prompt
  std::string raw;           // kRaw: the counters
  std::string user;
};

Prepared Prepare(const ProfilingInput& input, FeedbackMode mode,
                 const tools::RenderOptions& render) {
  Prepared p;
  if (mode == FeedbackMode::kNone) return p;
  if (mode == FeedbackMode::kRaw) {
    p.raw = RawCounters(input.metrics);
    p.user = Header(input, /*with_stage1=*/false) + "\n" + RawSection(input.metrics) + "\n" +
             CodeSection(input.candidate_code) + (input.candidate_code.empty() ? "" : "\n") +
             TaskSection(mode);
    return p;
  }
  p.analysis = RegistryOf(input).Analyze(input.metrics, AnalysisOptionsOf(input));
  std::ostringstream user;
  user << Header(input, /*with_stage1=*/true) << "\n"
       << SassSection(input.metrics) << "\n"
       << TimelineSection(input.metrics) << "\n";
  if (mode == FeedbackMode::kTools) {
    p.guidance = tools::RenderGuidance(p.analysis, render);
    user << p.guidance << "\n";
  }
  user << NcuSection(input.metrics) << "\n";
  if (!input.candidate_code.empty()) user << CodeSection(input.candidate_code) << "\n";
  user << TaskSection(mode);
  p.user = user.str();
  return p;
}

std::vector<const tools::ProfilingTool*> OfferedTools(const ProfilingInput& input) {
  std::optional<roofline::Bottleneck> bottleneck = AnalysisOptionsOf(input).bottleneck;
  std::vector<const tools::ProfilingTool*> out;
  for (const auto& tool : RegistryOf(input).tools()) {
    if (tool->source() == tools::ToolSource::kEnergy && !input.energy_tools) continue;
    if (tools::ToolRegistry::Runs(*tool, bottleneck)) out.push_back(tool.get());
  }
  return out;
}

}  // namespace

const std::vector<std::string>& RawCounterNames() { return kRawCounters; }

std::string ProfilingSystemPrompt(FeedbackMode mode) { return SystemPrompt(mode); }

std::string BuildProfilingPrompt(const ProfilingInput& input, FeedbackMode mode) {
  return Prepare(input, mode, tools::RenderOptions{}).user;
}

std::string RenderProfileAnalysis(const ProfileAnalysis& analysis) {
  std::ostringstream out;
  out << "## Profiling analysis\n\n";
  out << "Bottleneck: " << analysis.bottleneck;
  if (!analysis.severity.empty()) out << " (severity " << analysis.severity << ")";
  out << "\n";
  if (!analysis.summary.empty()) out << analysis.summary << "\n";
  if (!analysis.recommendations.empty()) {
    out << "\nRecommendations, most valuable first:\n";
    int index = 0;
    for (const AnalysisRecommendation& r : analysis.recommendations) {
      out << ++index << ". " << r.action << "\n";
      if (!r.rationale.empty()) out << "   Why: " << r.rationale << "\n";
    }
  }
  return out.str();
}

ProfilingResult RunProfilingAgent(llm::Backend& backend, const ProfilingInput& input,
                                  const ProfilingOptions& options) {
  ProfilingResult result;
  result.mode = options.mode;
  if (options.mode == FeedbackMode::kNone) return result;

  Prepared prepared = Prepare(input, options.mode, options.render);
  result.system_prompt = SystemPrompt(options.mode);
  result.prompt = prepared.user;

  llm::Request request;
  request.system = result.system_prompt;
  request.messages.push_back(llm::Message::User(prepared.user));
  request.max_tokens = options.max_tokens;
  request.temperature = options.temperature;
  request.response_schema = llm::ResponseSchema{"profile_analysis", ProfileAnalysisSchema()};

  std::optional<llm::Response> response;
  result.llm_called = true;
  if (options.mode == FeedbackMode::kReactive) {
    std::map<std::string, llm::ToolHandler> handlers;
    for (const tools::ProfilingTool* tool : OfferedTools(input)) {
      const std::string name = tool->name();
      result.tools_offered.push_back(name);
      request.tools.push_back(
          {name, tool->description(), Json{{"type", "object"}, {"properties", Json::object()}}});
      handlers[name] = [&prepared, name](const Json&) -> Result<std::string> {
        return ToolResultText(prepared.analysis, name);
      };
    }
    llm::ToolLoopOptions loop;
    loop.default_budget = options.reactive_tool_budget;
    loop.max_turns = options.reactive_max_turns;
    llm::ToolConversation conversation = llm::RunToolConversation(backend, request, handlers, loop);
    result.usage = conversation.usage;
    for (const llm::Message& m : conversation.transcript) {
      for (const llm::ToolCall& call : m.tool_calls) result.tool_calls.push_back(call.name);
    }
    result.evidence = CalledToolsGuidance(prepared.analysis, conversation.calls, options.render);
    if (conversation.ok()) {
      response = std::move(*conversation.response);
    } else {
      result.error = *conversation.error;
    }
  } else {
    result.evidence = options.mode == FeedbackMode::kTools ? prepared.guidance : prepared.raw;
    llm::Outcome outcome = backend.Complete(request);
    if (outcome.ok()) {
      result.usage = outcome.response().usage;
      response = std::move(outcome.response());
    } else {
      result.error = outcome.error();
    }
  }

  if (response) {
    result.raw_text = response->text;
    std::optional<Json> json =
        response->structured ? response->structured : llm::ExtractJson(response->text);
    if (!json) {
      result.error = llm::MakeError(
          llm::ErrorKind::kMalformed,
          "the profiling analysis holds no JSON object: \"" + llm::Snippet(response->text) + "\"");
    } else if (Result<ProfileAnalysis> parsed = ProfileAnalysisFromJson(*json); !parsed.ok()) {
      result.error = llm::MakeError(llm::ErrorKind::kMalformed, parsed.status().message());
    } else {
      result.analysis = std::move(*parsed);
    }
  }

  std::string evidence = result.evidence;
  if (options.mode == FeedbackMode::kRaw && !evidence.empty()) {
    evidence = "## ncu counters\n\n" + evidence;
  }
  if (result.analysis) {
    result.feedback =
        RenderProfileAnalysis(*result.analysis) + (evidence.empty() ? "" : "\n" + evidence);
  } else {
    result.feedback = evidence;
  }
  return result;
}

}  // namespace kernelpro::agents
