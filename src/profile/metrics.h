// The Metrics record: everything kernelpro knows about one profiled candidate, from three views.
//
//   ncu       kernel-level hardware counters per kernel, plus a duration-weighted aggregate
//   sass      instruction-level facts from the built binary: per-kernel instruction histograms,
//             resource usage (registers, shared, local, stack), library calls (cuBLAS, cuDNN)
//   timeline  system-level view of one forward call: launches, GPU busy time, syncs, copies, gaps
//
// Each view is optional: a collector that could not run leaves its view empty and says why in
// `notes`, and the loop carries on with what it has. The JSON form carries kSchemaVersion; plain
// structs, no synchronisation (build one per thread or share read-only).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"

namespace kernelpro::profile {

inline constexpr int kMetricsSchemaVersion = 1;

// ---- ncu ------------------------------------------------------------------------------------

struct NcuKernel {
  int id = -1;       // ncu's launch ID
  std::string name;  // kernel name as ncu printed it (mangled with --kernel-name-base mangled)
  std::string block_size, grid_size;         // "(256, 1, 1)"
  std::map<std::string, double> values;      // metric name -> value in base units
  std::map<std::string, std::string> units;  // metric name -> unit ("byte", "nsecond", "%", "")
  double duration_ns() const;                // gpu__time_duration.sum, 0 when absent
};

struct NcuView {
  std::vector<NcuKernel> kernels;  // in launch order
  // Duration-weighted mean over kernels for rates and percentages; sums for counts and bytes.
  NcuKernel aggregate;
  std::vector<std::string> warnings;  // ncu's own ==WARNING== / ==PROF== lines worth keeping
  // What kernelpro did to ncu's numbers while reading them: counters dropped as implausible
  // (profile/counter_check.h), kernels left out, per-kernel counters cut. Not part of the JSON
  // form: CollectFromTexts moves them into Metrics::notes, where commands print them.
  std::vector<std::string> notes;
};

// ---- SASS -------------------------------------------------------------------------------------

struct SassKernel {
  std::string name;                                // mangled entry name
  std::map<std::string, std::int64_t> opcodes;     // base opcode ("FFMA", "LDG") -> static count
  std::map<std::string, std::int64_t> categories;  // see sass.h: "tensor_wgmma", "ldgsts", ...
  std::int64_t total_instructions = 0;
  // From cuobjdump -res-usage; -1 when unknown.
  int registers = -1;
  std::int64_t shared_bytes = -1, local_bytes = -1, stack_bytes = -1;
};

struct SassView {
  std::string arch;                        // "sm_90a"
  std::vector<SassKernel> kernels;         // entry kernels first, then device functions
  std::vector<std::string> entry_points;   // STB_GLOBAL/STO_ENTRY names (cuobjdump -symbols)
  std::vector<std::string> library_calls;  // e.g. "cublasGemmEx", "cublasLtMatmul" (nm -D)
};

// ---- Timeline --------------------------------------------------------------------------------

struct MemcpySummary {
  std::string direction;  // "HtoD", "DtoH", "DtoD", "HtoH", "memset"
  int count = 0;
  std::int64_t bytes = 0;
  double time_us = 0;
};

struct IdleGap {
  double start_us = 0;  // from the start of the window
  double duration_us = 0;
};

struct TimelineSummary {
  std::string source;        // "torch_profiler" or "nsys"
  double end_to_end_us = 0;  // first API call to last GPU activity
  int kernel_count = 0;
  double gpu_busy_us = 0;            // union of kernel and copy intervals
  double launch_overhead_share = 0;  // 1 - busy / end-to-end, in [0, 1]
  double avg_launch_latency_us = 0;  // launch API call to kernel start, averaged
  int sync_calls = 0;
  double sync_time_us = 0;
  std::vector<MemcpySummary> memcpy;
  std::vector<IdleGap> gaps;  // GPU idle gaps above max(1 % of end-to-end, 5 us)
  double gap_threshold_us = 0;
};

// ---- The record ------------------------------------------------------------------------------

struct Metrics {
  int schema_version = kMetricsSchemaVersion;
  std::optional<NcuView> ncu;
  std::optional<SassView> sass;
  std::optional<TimelineSummary> timeline;
  std::vector<std::string> notes;  // why a view is missing, what was selected, fallbacks taken
};

Json ToJson(const NcuView& view);
Json ToJson(const SassView& view);
Json ToJson(const TimelineSummary& timeline);
Json ToJson(const Metrics& metrics);

}  // namespace kernelpro::profile
