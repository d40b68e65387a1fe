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
};

// Reads a problem file and detects its kind: Triton when it imports triton, CUDA when its
// reference builds CUDA source itself (load_inline / a __global__ kernel), PyTorch otherwise.
Result<ProblemSource> ReadProblemSource(const std::string& path);
InputKind DetectInputKind(const std::string& code);

}  // namespace kernelpro::agents
