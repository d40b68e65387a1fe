// The problem a run optimises, as the prompts show it: the reference file's text and the language
// it is written in. Plain values; copy freely across threads.
#pragma once

#include <optional>
#include <string>

#include "core/status.h"

namespace kernelpro::agents {

// The language of the reference the user gave (paper §3.2.5). All three are normalised to the
// KernelBench form (class Model + get_inputs + get_init_inputs); the kind selects the prompt's
// input section.
enum class InputKind { kPyTorch, kTriton, kCuda };

std::string ToString(InputKind kind);                              // "pytorch", "triton", "cuda"
std::optional<InputKind> ParseInputKind(const std::string& text);  // any case

// A problem file as the prompts show it.
struct ProblemSource {
  std::string path;
  std::string code;  // the file's text
  InputKind kind = InputKind::kPyTorch;
  // A program (docs/programs.md): a Triton or Python file naming its launcher in ENTRY, or a .cu
  // file with a /* kernelpro */ block. The worker wraps it as Model(*init) whose forward(*inputs)
  // returns ENTRY(*inputs, *init); the program is the baseline the candidates are timed against.
  bool program = false;
  std::string entry;           // ENTRY's value, for a program
  std::string reference_path;  // REFERENCE resolved beside the program; "" when none
  std::string reference_code;  // its text (the outputs the candidates must match)
};

// "Triton", "CUDA" or "Python": what a program (ProblemSource::program) is written in, as eval and
// the report name it ("Triton program"). A Python program's kernels are whatever its launcher
// calls, so it is not called a PyTorch one.
std::string ProgramKindName(InputKind kind);

// Reads a problem file and detects its kind: Triton when it imports triton, CUDA when its
// reference builds CUDA source itself (load_inline / a __global__ kernel) or is a .cu program,
// PyTorch otherwise. A file that is neither a KernelBench problem (class Model) nor a program
// (ENTRY) is InvalidArgument naming both forms; a REFERENCE that cannot be read is NotFound.
Result<ProblemSource> ReadProblemSource(const std::string& path);
InputKind DetectInputKind(const std::string& code);

}  // namespace kernelpro::agents
