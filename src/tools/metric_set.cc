#include "tools/metric_set.h"

#include <algorithm>
#include <set>

#include "profile/sass.h"

namespace kernelpro::tools {

std::vector<const profile::SassKernel*> SassEntryKernels(const profile::SassView& view) {
  std::set<std::string, std::less<>> entries(view.entry_points.begin(), view.entry_points.end());
  std::vector<const profile::SassKernel*> kernels;
  for (const profile::SassKernel& k : view.kernels) {
    if (entries.empty() || entries.contains(k.name)) kernels.push_back(&k);
  }
  return kernels;
}

namespace {

void AddNcu(const profile::NcuView& ncu, MetricSet& set) {
  for (const auto& [name, value] : ncu.aggregate.values) {
    auto unit = ncu.aggregate.units.find(name);
    set.Set(name, value, unit == ncu.aggregate.units.end() ? "" : unit->second);
  }
  set.Set("ncu.kernel_count", static_cast<double>(ncu.kernels.size()));
  double total = 0, longest = 0;
  for (const profile::NcuKernel& k : ncu.kernels) {
    total += k.duration_ns();
    longest = std::max(longest, k.duration_ns());
  }
  if (total > 0) set.Set("ncu.max_kernel_share", longest / total);
}

void AddSass(const profile::SassView& sass, MetricSet& set) {
  std::vector<const profile::SassKernel*> kernels = SassEntryKernels(sass);
  std::map<std::string, double> categories, opcodes;
  for (const std::string& name : profile::SassCategoryNames()) categories[name] = 0;
  double instructions = 0;
  std::int64_t registers = -1, stack = -1, local = -1, shared = -1;
  for (const profile::SassKernel* k : kernels) {
    for (const auto& [name, count] : k->categories) categories[name] += static_cast<double>(count);
    for (const auto& [name, count] : k->opcodes) opcodes[name] += static_cast<double>(count);
    instructions += static_cast<double>(k->total_instructions);
    registers = std::max<std::int64_t>(registers, k->registers);
    stack = std::max(stack, k->stack_bytes);
    local = std::max(local, k->local_bytes);
    shared = std::max(shared, k->shared_bytes);
  }
  for (const auto& [name, count] : categories) set.Set("sass." + name, count, "instructions");
  for (const auto& [name, count] : opcodes) set.Set("sass.op." + name, count, "instructions");
  set.Set("sass.instructions", instructions, "instructions");
  set.Set("sass.kernels", static_cast<double>(kernels.size()));
  set.Set("sass.registers_max", static_cast<double>(registers), "registers");
  set.Set("sass.stack_bytes_max", static_cast<double>(stack), "bytes");
  set.Set("sass.local_bytes_max", static_cast<double>(local), "bytes");
  set.Set("sass.shared_bytes_max", static_cast<double>(shared), "bytes");
  double cublas = 0, cudnn = 0;
  for (const std::string& call : sass.library_calls) {
    if (call.starts_with("cublas")) ++cublas;
    if (call.starts_with("cudnn")) ++cudnn;
  }
  set.Set("sass.library_calls", static_cast<double>(sass.library_calls.size()));
  set.Set("sass.calls_cublas", cublas);
  set.Set("sass.calls_cudnn", cudnn);
}

void AddTimeline(const profile::TimelineSummary& t, MetricSet& set) {
  set.Set("timeline.end_to_end_us", t.end_to_end_us, "us");
  set.Set("timeline.kernel_count", t.kernel_count);
  set.Set("timeline.gpu_busy_us", t.gpu_busy_us, "us");
  set.Set("timeline.launch_overhead_share", t.launch_overhead_share);
  set.Set("timeline.avg_launch_latency_us", t.avg_launch_latency_us, "us");
  set.Set("timeline.sync_calls", t.sync_calls);
  set.Set("timeline.sync_time_us", t.sync_time_us, "us");
  double count = 0, bytes = 0, time = 0, htod = 0, dtoh = 0, memsets = 0;
  for (const profile::MemcpySummary& m : t.memcpy) {
    if (m.direction == "memset") {
      memsets += m.count;
      continue;
    }
    count += m.count;
    bytes += static_cast<double>(m.bytes);
    time += m.time_us;
    if (m.direction == "HtoD") htod += static_cast<double>(m.bytes);
    if (m.direction == "DtoH") dtoh += static_cast<double>(m.bytes);
  }
  set.Set("timeline.memcpy_count", count);
  set.Set("timeline.memcpy_bytes", bytes, "bytes");
  set.Set("timeline.memcpy_time_us", time, "us");
  set.Set("timeline.memcpy_htod_bytes", htod, "bytes");
  set.Set("timeline.memcpy_dtoh_bytes", dtoh, "bytes");
  set.Set("timeline.memset_count", memsets);
  double gap_time = 0, largest = 0;
  for (const profile::IdleGap& g : t.gaps) {
    gap_time += g.duration_us;
    largest = std::max(largest, g.duration_us);
  }
  set.Set("timeline.gap_count", static_cast<double>(t.gaps.size()));
  set.Set("timeline.gap_time_us", gap_time, "us");
  set.Set("timeline.largest_gap_us", largest, "us");
  set.Set("timeline.gap_threshold_us", t.gap_threshold_us, "us");
}

}  // namespace

MetricSet BuildMetricSet(const profile::Metrics& metrics) {
  MetricSet set;
  if (metrics.ncu && !metrics.ncu->kernels.empty()) AddNcu(*metrics.ncu, set);
  // An extension without device code and without library calls says nothing about the GPU.
  if (metrics.sass && (!metrics.sass->kernels.empty() || !metrics.sass->library_calls.empty())) {
    AddSass(*metrics.sass, set);
  }
  if (metrics.timeline) AddTimeline(*metrics.timeline, set);
  return set;
}

}  // namespace kernelpro::tools
