// What the programmer gets when a run has CUTLASS (paper §4.3): the code-search tools and the
// shared-memory layout probe it may call while it writes candidates, the constraints its prompt
// carries as non-negotiable, the validator that rejects a candidate breaking them before a build
// is spent, and the search memory's "Key Files" and "Search Findings" taken from its tool calls.
//
// One CutlassKit per run: it loads the tree's index (about 130 ms, 800 headers) and mines the
// constraints once. Each iteration asks ForIteration() for a fresh ProgrammerTools whose budgets
// start anew:
//   search_cutlass          `search_budget` searches per iteration, shared by the iteration's
//                           requests (searches that ran; one refused for its arguments is free);
//                           the paper budgets searches "to encourage convergence toward
//                           generation".
//   read_cutlass_file,      not budgeted in the paper: the model reads what its searches found.
//   list_cutlass_directory  A bound (`read_budget` per request) only stops a runaway loop.
//   check_smem_layout       not budgeted in the paper either; bounded by `probe_budget` per
//                           request (each probe compiles for a few seconds; answers are cached).
// The instruction the model reads names every tool and its budget.
//
// Thread-safety: a CutlassKit is immutable after Load and may be shared; the handlers of one
// ForIteration() result share a counter guarded by a mutex, so the iteration's requests may run
// on several threads.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agents/gpu_target.h"
#include "agents/programmer.h"
#include "agents/search_memory.h"
#include "core/status.h"
#include "cutlass/code_search.h"
#include "cutlass/constraints.h"
#include "cutlass/locate.h"
#include "cutlass/smem_probe.h"

namespace kernelpro::agents {

inline constexpr char kSmemProbeTool[] = "check_smem_layout";

struct CutlassKitOptions {
  bool tools = true;      // offer the tools (false: the constraints and the validator only)
  int search_budget = 6;  // search_cutlass calls per iteration
  int read_budget = 40;   // read_cutlass_file + list_cutlass_directory calls per request, each
  int probe_budget = 8;   // check_smem_layout calls per request
  int max_turns = 24;     // model turns per request; the last one must answer
  // Where check_smem_layout caches its answers ("" = no cache), and the nvcc it runs ("" = found
  // like the other CUDA tools).
  std::string probe_cache_dir;
  std::string nvcc;
  // True when the build step adds the CUTLASS flags itself (python/kernelpro_worker/buildcache.py
  // does for candidates that include CUTLASS or CuTe): the validator then reports only flags
  // that contradict them.
  bool build_adds_flags = true;
  // Bytes of the constraints block in the prompt.
  std::size_t constraints_bytes = 4096;
};

class CutlassKit {
 public:
  static Result<std::unique_ptr<CutlassKit>> Load(const cutlass::CutlassTree& tree,
                                                  CutlassKitOptions options = {});

  const cutlass::CutlassTree& tree() const { return tree_; }
  const CutlassKitOptions& options() const { return options_; }

  // The tools of one iteration, with their budgets fresh. Empty definitions when options.tools is
  // false.
  ProgrammerTools ForIteration() const;

  // The constraints block of the prompt (Markdown, at most options.constraints_bytes).
  const std::string& constraints_markdown() const { return constraints_markdown_; }
  const std::vector<cutlass::Constraint>& constraints() const { return constraints_; }

  // The pre-build check: "" for a candidate that includes no CUTLASS/CuTe header or breaks no
  // constraint; else the violations, one a line, under a sentence saying no build was spent.
  std::string Validate(const std::string& code) const;

 private:
  CutlassKit() = default;
  cutlass::CutlassTree tree_;
  CutlassKitOptions options_;
  std::shared_ptr<const cutlass::CutlassIndex> index_;
  std::vector<cutlass::Constraint> constraints_;
  std::string constraints_markdown_;
};

// Whether the prompt for `gpu` carries the constraints: they are Hopper's (GMMA, TMA, the SM90
// pipelines), so only for an sm_90 target.
bool ConstraintsApplyTo(const GpuTarget& gpu);

// Whether `code` includes a CUTLASS or CuTe header (#include <cute/...> or "cutlass/...").
bool IncludesCutlass(const std::string& code);

// The definition of check_smem_layout (element_type, atom, tile_shape).
llm::ToolDefinition SmemProbeToolDefinition();

// What the search memory keeps of an iteration's tool calls: one "Key Files" entry per file the
// model read (with the line ranges), and one "Search Findings" entry per search that found
// something (the query, the count, the first match) and per layout probe (the layout and its
// answer). Failed calls teach nothing and are left out.
std::vector<MemoryEntry> ToolCallMemory(const std::vector<ProgrammerToolCall>& calls,
                                        int iteration);

}  // namespace kernelpro::agents
