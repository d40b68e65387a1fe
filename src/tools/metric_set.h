// The flat MetricSet the micro-profiling tools read, built from one Metrics record.
//
// Names, by view (a view missing from the record contributes no names, so tools that need it are
// skipped, never fed zeros):
//
//   ncu        every value of the duration-weighted aggregate over the candidate's kernels, under
//              its ncu name ("launch__registers_per_thread", "dram__bytes_read.sum", ...), plus
//              ncu.kernel_count (launches profiled) and
//              ncu.max_kernel_share (the longest launch's share of the total duration, 0..1).
//   sass       over the candidate's entry kernels (all functions when the .so lists none):
//              sass.<category> for every SASS category (sass.tensor_wgmma, sass.ldgsts,
//              sass.local_store, sass.mufu_rcp, ...; see profile/sass.h), sass.op.<OPCODE> for
//              every base opcode (sass.op.FCHK), sass.instructions (static total), sass.kernels,
//              sass.registers_max, sass.stack_bytes_max, sass.local_bytes_max,
//              sass.shared_bytes_max (each -1 when cuobjdump did not report it),
//              sass.library_calls, sass.calls_cublas, sass.calls_cudnn (counts of nm -D symbols).
//   timeline   timeline.end_to_end_us, timeline.kernel_count, timeline.gpu_busy_us,
//              timeline.launch_overhead_share (0..1), timeline.avg_launch_latency_us,
//              timeline.sync_calls, timeline.sync_time_us, timeline.memcpy_count,
//              timeline.memcpy_bytes, timeline.memcpy_time_us (copies only, memsets apart),
//              timeline.memcpy_htod_bytes, timeline.memcpy_dtoh_bytes, timeline.memset_count,
//              timeline.gap_count, timeline.gap_time_us, timeline.largest_gap_us,
//              timeline.gap_threshold_us.
#pragma once

#include "profile/metrics.h"
#include "tools/tool.h"

namespace kernelpro::tools {

MetricSet BuildMetricSet(const profile::Metrics& metrics);

// The SASS functions the sass.* names summarise: the entry kernels, or every function when the
// view names no entry points.
std::vector<const profile::SassKernel*> SassEntryKernels(const profile::SassView& view);

}  // namespace kernelpro::tools
