// PromptBuilder: the Programmer Agent's prompts (paper §3.2.2), assembled from the Markdown
// components under src/prompts: shared optimisation strategies, a section for the language of the
// reference (§3.2.5), guidance for the target GPU's architecture with its exact tensor-core
// instruction shapes, the CUTLASS build settings when CUTLASS is enabled (§3.2.4), the search
// memory, the output contract, then the task of the mode with the code and feedback it needs.
//
// A prompt's parts, in order (Prompt::sections names the ones present):
//   system: base_strategies, input_<kind>, gpu_<family>, [cutlass], [energy_preferences],
//           [memory], output_contract
//   user:   mode_<mode>, [examples], problem, [parent_code], [feedback]
// gpu_<family> is gpu_sm80 (sm_80, sm_86, sm_87, sm_89), gpu_sm90, gpu_sm100 (sm_100, sm_103) or
// gpu_generic for any other architecture, or for an unknown one (GpuTarget::arch "").
//
// Size budget: when system + user exceed max_chars, the least important parts give way first:
//   1. examples      dropped;
//   2. memory        its oldest entries dropped, the newest kept;
//   3. base_strategies  shortened to the part above its "kernelpro:" marker line;
//   4. feedback      cut from its end.
// The problem code, the parent code, the output contract and the mode instructions are never
// trimmed. Prompt::trimmed says what gave way; a prompt that still does not fit is an error.
//
// Everything here is a pure function of its arguments (the same context gives a byte-identical
// prompt) and safe to call from any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

// TrimBuildErrors trims a debug prompt's feedback (PromptContext::feedback); included here so that
// code including only this header keeps reaching it.
#include "agents/build_errors.h"
#include "agents/gpu_target.h"
#include "agents/problem_source.h"
#include "agents/prompt.h"
#include "agents/prompt_mode.h"
#include "core/status.h"

namespace kernelpro::agents {

struct PromptContext {
  PromptMode mode = PromptMode::kInitial;
  // The reference: its code and its kind (PyTorch, Triton, CUDA), which picks the input section.
  ProblemSource problem;
  // Picks the GPU section and the architecture flag. Default: sm_90.
  GpuTarget gpu;
  // Where candidates run: "cuda" (CUDA kernels for `gpu`) or "cpu" (C++ CPU extensions: the
  // GPU section and the CUDA example give way to the CPU target and a CPU example).
  std::string device = "cuda";
  // How many candidates the answer must hold: 1 to 16. Default 2.
  int num_candidates = 2;
  // Root of a CUTLASS checkout (include/ and tools/util/include/ below it). "" = CUTLASS off.
  std::string cutlass_dir;
  // With cutlass_dir: the constraints CUTLASS/CuTe code must meet (agents/cutlass_tools.h, a
  // Markdown block with its own heading), carried whole in the system part as non-negotiable.
  // "" = none.
  std::string cutlass_constraints;
  // Stage 1's analysis of the reference (roofline::RenderStageOneBrief), shown after the problem in
  // every mode and never trimmed; not shown for a CPU target, which no GPU roofline describes.
  // "" = none.
  std::string stage1;
  // Debug: the candidate that failed. Optimize: the working candidate to improve. Required there.
  std::string parent_code;
  // Debug (required): the compiler, runtime or correctness errors, trimmed with TrimBuildErrors.
  // Optimize (optional): the profiling analysis of the parent.
  std::string feedback;
  // Optimize: the parent's measured speedup over the reference, shown with its code.
  std::optional<double> parent_speedup;
  // The search memory rendered as Markdown: "#" headings open sections; each list item (or each
  // paragraph outside a list) is one entry, oldest first within its section, as an append-only
  // store writes them. "" = no memory section.
  std::string memory_block;
  // `optimize --energy aware` (paper Appendix I.2): the "Energy preferences" section, which asks
  // for the less energy-hungry of equally fast designs. Off: the prompt is as without energy.
  bool energy_preferences = false;
  // Budget for system + user together, in characters. Default 60000 (about 15k tokens).
  size_t max_chars = 60000;
  // Debug: bound on the errors after TrimBuildErrors, before the budget above applies.
  size_t max_error_chars = 6000;
};

// Assembles the prompt. InvalidArgument when a required input is missing (debug without the
// failing code or its errors, optimize without the parent code, no problem code), when
// num_candidates is out of range, or when the parts that are never trimmed exceed max_chars.
Result<Prompt> BuildPrompt(const PromptContext& context);

}  // namespace kernelpro::agents
