// How kernelpro invokes Nsight Compute on the worker's `run` step.
//
// The worker runs warm-up calls, then the profiled forward call inside the NVTX range
// "kernelpro"; ncu profiles only kernels inside that range (never input generation or
// warm-up), and only the candidate's own entry kernels when their mangled names are known
// (`cuobjdump -symbols` of the built .so). Clock control is off by default (`--clock-control
// none`): kernelpro never changes a GPU's clocks unless asked to with `lock_clocks`. Caches are
// flushed before every replay (`--cache-control all`, ncu's default, passed explicitly): DRAM
// counters count a kernel's cold reads, which the verified_work tool compares with its inputs.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "profile/metrics.h"

namespace kernelpro::profile {

struct NcuOptions {
  std::vector<std::string> metrics;  // empty: the catalog (ncu_catalog.h)
  bool lock_clocks = false;          // opt-in: ncu's --clock-control base (changes GPU clocks)
  std::string nvtx_range = "kernelpro";
  int timeout_s = 1800;  // replay passes are expensive: minutes per kernel are normal
};

// ncu's argv up to (not including) the target program. `kernel_names` are mangled entry names;
// empty profiles every kernel in the NVTX range.
std::vector<std::string> NcuArgv(const std::string& ncu_path, const NcuOptions& options,
                                 const std::vector<std::string>& kernel_names);

// Keeps the parts of ncu's stdout the CSV parser needs (==PROF==/==WARNING==/==ERROR== lines and
// the CSV from its header row on), dropping whatever the profiled program printed.
std::string TrimNcuOutput(std::string_view stdout_text);

// The C++ signature of a mangled name ("swish_vec4(float4 const*, float4*, int)"); other names
// unchanged.
std::string DemangleKernelName(const std::string& name);

// "swish_vec4" for "_Z10swish_vec4PK6float4PS_i", "swish_vec4(const float4 *, float4 *, int)" and
// "void ns::k<4, F>(float *)" alike: how a demangled ncu report is matched to mangled entries.
std::string KernelBaseName(const std::string& name);

// Keeps only the candidate's own kernels in `view`: those named in `entry_points`. When none of
// them was profiled, or the candidate calls a library (`calls_libraries`: cuBLAS, cuDNN... in
// `nm -D`), the longest-running kernels that together take 95 % of the time (at most 8) are kept
// as well, since the library's kernels are where such a candidate spends its time. Says what it
// did in `notes`.
void SelectCandidateKernels(NcuView& view, const std::vector<std::string>& entry_points,
                            bool calls_libraries, std::vector<std::string>& notes);

// ---- The pieces of that rule, shared with the streaming reader (ReadNcuCsv with
// select_candidate_kernels), which applies it without holding every kernel.

inline constexpr std::size_t kMaxLongestOtherKernels = 8;

// Whether a kernel is one of the candidate's entry kernels: by exact (mangled) name, or by base
// name for reports printed with demangled names.
class CandidateKernelMatcher {
 public:
  explicit CandidateKernelMatcher(std::vector<std::string> entry_points);
  bool IsOwn(const std::string& kernel_name) const;

 private:
  std::vector<std::string> entry_points_, entry_bases_;
};

// Which kernels that are not the candidate's own to keep as well, by launch index: none when some
// own kernel ran and the candidate calls no library; otherwise the longest others (ties: earlier
// first), until the kernels walked take 95 % of the time or kMaxLongestOtherKernels are added.
// `durations` in ns (0 when unknown) and `own` are per launch.
std::vector<std::size_t> LongestOtherKernels(const std::vector<double>& durations,
                                             const std::vector<bool>& own, bool calls_libraries);

// What the selection did, for the notes ("kept the candidate's 1 own kernel launch(es) and the 1
// longest other(s) of 3 profiled (it calls a library)"); "" when it kept every kernel.
std::string KernelSelectionNote(std::size_t own, std::size_t longest, std::size_t profiled);

}  // namespace kernelpro::profile
