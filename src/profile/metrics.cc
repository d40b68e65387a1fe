#include "profile/metrics.h"

namespace kernelpro::profile {
namespace {

Json KernelJson(const NcuKernel& k) {
  Json values = Json::object();
  for (const auto& [name, value] : k.values) values[name] = value;
  Json units = Json::object();
  for (const auto& [name, unit] : k.units) units[name] = unit;
  return Json{{"id", k.id},
              {"name", k.name},
              {"block_size", k.block_size},
              {"grid_size", k.grid_size},
              {"duration_ns", k.duration_ns()},
              {"values", values},
              {"units", units}};
}

}  // namespace

Json ToJson(const NcuView& view) {
  Json kernels = Json::array();
  for (const NcuKernel& k : view.kernels) kernels.push_back(KernelJson(k));
  return Json{
      {"kernels", kernels}, {"aggregate", KernelJson(view.aggregate)}, {"warnings", view.warnings}};
}

Json ToJson(const SassView& view) {
  Json kernels = Json::array();
  for (const SassKernel& k : view.kernels) {
    kernels.push_back(Json{{"name", k.name},
                           {"opcodes", k.opcodes},
                           {"categories", k.categories},
                           {"total_instructions", k.total_instructions},
                           {"registers", k.registers},
                           {"shared_bytes", k.shared_bytes},
                           {"local_bytes", k.local_bytes},
                           {"stack_bytes", k.stack_bytes}});
  }
  return Json{{"arch", view.arch},
              {"kernels", kernels},
              {"entry_points", view.entry_points},
              {"library_calls", view.library_calls}};
}

Json ToJson(const TimelineSummary& t) {
  Json memcpy = Json::array();
  for (const MemcpySummary& m : t.memcpy) {
    memcpy.push_back(Json{{"direction", m.direction},
                          {"count", m.count},
                          {"bytes", m.bytes},
                          {"time_us", m.time_us}});
  }
  Json gaps = Json::array();
  for (const IdleGap& g : t.gaps)
    gaps.push_back(Json{{"start_us", g.start_us}, {"duration_us", g.duration_us}});
  return Json{{"source", t.source},
              {"end_to_end_us", t.end_to_end_us},
              {"kernel_count", t.kernel_count},
              {"gpu_busy_us", t.gpu_busy_us},
              {"launch_overhead_share", t.launch_overhead_share},
              {"avg_launch_latency_us", t.avg_launch_latency_us},
              {"sync_calls", t.sync_calls},
              {"sync_time_us", t.sync_time_us},
              {"memcpy", memcpy},
              {"gaps", gaps},
              {"gap_threshold_us", t.gap_threshold_us}};
}

Json ToJson(const Metrics& m) {
  return Json{{"schema_version", m.schema_version},
              {"ncu", m.ncu ? ToJson(*m.ncu) : Json(nullptr)},
              {"sass", m.sass ? ToJson(*m.sass) : Json(nullptr)},
              {"timeline", m.timeline ? ToJson(*m.timeline) : Json(nullptr)},
              {"notes", m.notes}};
}

}  // namespace kernelpro::profile
