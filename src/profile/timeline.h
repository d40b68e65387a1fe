// The timeline collector's readers: the system-level view of one profiled run (kernel launches,
// GPU busy time, host synchronisations, copies, idle gaps) reduced to a TimelineSummary
// (profile/metrics.h), from either of two sources:
//
//   ParseTorchProfilerTrace  a PyTorch profiler Chrome trace (torch.profiler with
//                            ProfilerActivity.CPU and .CUDA, written by export_chrome_trace)
//   ParseNsysSqlite          an Nsight Systems report exported with `nsys export --type sqlite`
//
// The two readers only differ in how they read: each turns its input into TimelineEvents (GPU
// activities and host API calls) and hands them to SummarizeTimeline, which owns every definition
// below. The launch-overhead tool reads `launch_overhead_share` as p in the estimated speedup
// 1 / (1 - p) of removing launch overhead, so the definitions favour what the GPU was doing over
// what the host thought it was doing.
//
// Definitions (all times in microseconds):
//   GPU activity    kernels, memcpys and memsets, on every device and stream of the input: a run
//                   that uses several streams or GPUs is treated as one device, so concurrent
//                   work counts once. Annotations on the GPU rows (gpu_user_annotation) and
//                   Kineto's GPU-side `cuda_sync` rows are not activity.
//   API call        a CUDA runtime or driver API call on the host (Chrome categories
//                   cuda_runtime / cuda_driver; nsys table CUPTI_ACTIVITY_KIND_RUNTIME).
//   window          from the start of the first API call or GPU activity, whichever is earlier,
//                   to the end of the last GPU activity. end_to_end_us is its length. API calls
//                   after the last GPU activity (a final synchronize) do not extend it.
//   kernel_count    number of kernel activities.
//   gpu_busy_us     length of the union of all GPU activity intervals.
//   launch_overhead_share
//                   1 - gpu_busy_us / end_to_end_us, clamped to [0, 1]: the share of the window in
//                   which no GPU work ran. 0 when the window has zero length.
//   avg_launch_latency_us
//                   mean over kernels whose correlation id matches an API call of (kernel start -
//                   start of that call); 0 when none match. Kernels of one cudaGraphLaunch all
//                   match the one launch call, so their latencies grow along the graph.
//   sync_calls, sync_time_us
//                   count and summed duration of API calls that block the host until GPU work
//                   finishes: cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize,
//                   cudaThreadSynchronize and their driver forms cuCtxSynchronize,
//                   cuStreamSynchronize, cuEventSynchronize; and the blocking copies, every
//                   cudaMemcpy* / cuMemcpy* call without "Async" in its name (cudaMemcpy,
//                   cudaMemcpy2D, cudaMemcpyToSymbol, cuMemcpyDtoH...). Not counted:
//                   cudaStreamWaitEvent (a GPU-side dependency; the host does not wait), the
//                   non-blocking queries cudaStreamQuery / cudaEventQuery, cudaMemset (asynchronous
//                   for device memory), and allocator calls. Every sync call in the input counts,
//                   also one that starts after the window. Version suffixes that nsys adds
//                   ("_v3020", "_ptsz") are ignored when matching names.
//   memcpy          one row per direction that occurs, in the order HtoD, DtoH, DtoD, HtoH,
//                   other, memset: count, bytes, summed duration. CUDA-array copies fold into the
//                   device side (HtoA -> HtoD, AtoH -> DtoH, AtoA/AtoD/DtoA -> DtoD); peer copies
//                   between GPUs (PtoP) count as DtoD; an unrecognised kind is "other".
//   gap_threshold_us
//                   max(1 % of end_to_end_us, 5).
//   gaps            every interval inside the window in which no GPU activity runs and which is
//                   longer than gap_threshold_us, in time order, start relative to the window
//                   start. This includes the idle stretch from the window start to the first GPU
//                   activity (the first launch's host-side cost), so the gaps and the busy time
//                   together account for the window; there is no gap after the last activity,
//                   since the window ends there.
//
// Malformed input is an error value, never a crash: text that is not JSON (a truncated file) or
// has no traceEvents array is InvalidArgument; individual events with missing or mistyped fields
// (a "ts" that is a string, a negative "dur") are skipped. An input without GPU activity is
// InvalidArgument with a hint on how to record one.
//
// Free functions without shared state: safe to call from several threads at once.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "profile/metrics.h"

namespace kernelpro::profile {

// One piece of GPU work. Times are microseconds from an origin each reader picks near its first
// event: absolute trace clocks (~5e12 us) would leave a double only about a nanosecond of
// resolution and summing a thousand kernel lengths would drift by a fraction of a microsecond.
struct GpuActivity {
  enum class Kind { kKernel, kMemcpy, kMemset };
  Kind kind = Kind::kKernel;
  double start_us = 0;
  double end_us = 0;
  std::int64_t correlation_id = -1;  // the API call that issued it; -1 when unknown
  std::string copy_direction;        // kMemcpy only: "HtoD", "DtoH", "DtoD", "HtoH" or "other"
  std::int64_t bytes = 0;            // kMemcpy and kMemset
};

// One CUDA runtime or driver API call on the host, on the same clock as the GPU activities.
struct HostApiCall {
  std::string name;  // as recorded ("cudaLaunchKernel", nsys's "cudaLaunchKernel_v7000")
  double start_us = 0;
  double end_us = 0;
  std::int64_t correlation_id = -1;  // -1 when unknown
};

struct TimelineEvents {
  std::vector<GpuActivity> gpu;        // any order
  std::vector<HostApiCall> api_calls;  // any order
};

// Applies the definitions above. `source` is copied into the summary ("torch_profiler",
// "nsys"). Entries with an end before their start, or a time beyond +-1e17 us (millennia: a
// corrupted field, not a clock) are ignored. Fails with InvalidArgument when no GPU activity is
// left.
Result<TimelineSummary> SummarizeTimeline(std::string source, const TimelineEvents& events);

// Reads a PyTorch profiler Chrome trace: the object export_chrome_trace writes (events under
// "traceEvents"), or a bare array of events. Uses complete ("ph": "X") events of the categories
// kernel, gpu_memcpy, gpu_memset, cuda_runtime and cuda_driver (also the capitalised names older
// PyTorch releases wrote: Kernel, Memcpy, Memset, Runtime, Driver); the copy direction comes from
// the event name ("Memcpy HtoD (Pageable -> Device)"), bytes and correlation id from "args".
// When the trace holds user_annotation ranges named kTraceRangeName (the worker wraps the recorded
// forward calls in torch.profiler.record_function of that name), only the API calls that start
// inside them and the GPU work those calls launched count: the profiler's own synchronisations
// at the start and end of its recording stay out of the numbers. Without such a range the whole
// trace counts.
Result<TimelineSummary> ParseTorchProfilerTrace(std::string_view json_text);
inline constexpr std::string_view kTraceRangeName = "kernelpro";

// The same for a trace file; NotFound when it cannot be read.
Result<TimelineSummary> ParseTorchProfilerTraceFile(const std::string& path);

// Reads an `nsys export --type sqlite` database (opened read-only): CUPTI_ACTIVITY_KIND_KERNEL
// (start, end, correlationId), CUPTI_ACTIVITY_KIND_MEMCPY (start, end, correlationId, bytes,
// copyKind as CUpti_ActivityMemcpyKind), CUPTI_ACTIVITY_KIND_MEMSET (start, end, correlationId,
// bytes) and CUPTI_ACTIVITY_KIND_RUNTIME (start, end, correlationId, nameId into StringIds);
// times in nanoseconds. nsys leaves out the tables of activity kinds that did not occur, so any of
// them may be missing. NotFound when the file cannot be opened, InvalidArgument when it is not an
// SQLite database or its tables lack those columns. Unavailable when kernelpro was built without
// SQLite (CMake defines KERNELPRO_HAVE_SQLITE when it finds it).
Result<TimelineSummary> ParseNsysSqlite(const std::string& path);

}  // namespace kernelpro::profile
