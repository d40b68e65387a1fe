// The hard requirements CUTLASS/CuTe code for Hopper must meet, and a validator that checks a
// candidate's source against them before a build is spent on it.
//
// Two sources of constraints:
//  - mined: the static_asserts (with their messages) of the SM90 GMMA, TMA, pipeline and
//    collective headers of the CUTLASS tree in use, each with its file:line, so they follow the
//    version the candidate compiles against;
//  - curated: requirements no assert states (barrier life-cycle, warp-specialised roles,
//    swizzle alignment, tile divisibility, sm_90a and the CuTe compiler flags), written here.
// The constraints file (JSON, and a Markdown rendering bounded to a few KB, most important first)
// is what the programmer's prompt carries as non-negotiable.
//
// ValidateCandidate reads a candidate's text (the Python file with its CUDA source and
// load_inline flags) with regular expressions: it cannot prove code right, it catches the
// mistakes that otherwise cost a build (or a hang) to find, and words each as a fix. Only the
// curated constraints present in the list given to it are checked. Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/status.h"

namespace kernelpro::cutlass {

struct Constraint {
  std::string id;  // "barrier.fence_after_init"; mined ones "mined.<file stem>.<line>"
  std::string
      category;        // build, gmma, tma, pipeline, barrier, warp_specialization, smem, collective
  std::string text;    // one imperative sentence
  std::string source;  // "cute/atom/copy_traits_sm90_tma.hpp:71" for mined ones, "" for curated
  std::string condition;  // the asserted condition, for mined ones (bounded)
};

// The curated requirements, most important first. Their ids are the ones ValidateCandidate knows.
std::vector<Constraint> CuratedConstraints();

// The static_asserts with a message in the SM90 headers under `include_dir` (the folder holding
// cute/ and cutlass/), one per distinct message, most important category first. NotFound when the
// folder has no CuTe headers.
Result<std::vector<Constraint>> MineConstraints(const std::string& include_dir);

// Curated first, then mined.
Result<std::vector<Constraint>> AllConstraints(const std::string& include_dir);

Json ConstraintsToJson(const std::vector<Constraint>& constraints);
Result<std::vector<Constraint>> ConstraintsFromJson(const Json& json);

// The prompt's rendering: a heading, then one bullet per constraint in order until `max_bytes`,
// then a line saying how many more the JSON file holds.
std::string RenderConstraintsMarkdown(const std::vector<Constraint>& constraints,
                                      std::size_t max_bytes = 4096);

// Writes `<path_without_extension>.json` and `.md`.
Status WriteConstraintsFiles(const std::string& path_without_extension,
                             const std::vector<Constraint>& constraints,
                             std::size_t markdown_bytes = 4096);

struct ValidatorOptions {
  // True once the build step itself adds the CUTLASS flags (C++17, --expt-relaxed-constexpr,
  // sm_90a) to candidates that include CUTLASS: then only flags that contradict them are reported.
  bool build_adds_cutlass_flags = false;
};

struct ConstraintViolation {
  std::string constraint_id;
  int line = 0;         // 1-based line of the candidate's text; 0 when it concerns the whole file
  std::string message;  // phrased as the fix
};

std::vector<ConstraintViolation> ValidateCandidate(const std::string& source,
                                                   const std::vector<Constraint>& constraints,
                                                   const ValidatorOptions& options = {});

// Debug feedback for the programmer: "line 12 [barrier.fence_after_init] ...", one a line.
std::string RenderViolations(const std::vector<ConstraintViolation>& violations);

}  // namespace kernelpro::cutlass
