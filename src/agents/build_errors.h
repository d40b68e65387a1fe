// Trimming a failed build's or run's diagnostics (nvcc, gcc/clang, ptxas, the linker, Python
// tracebacks) down to what a programmer reads to fix them: the "What went wrong" part of a debug
// prompt (prompt_builder.h), and the errors a failed search node keeps for it.
//
// A pure function of its arguments (the same dump gives byte-identical text), safe to call from
// any thread.
#pragma once

#include <cstddef>
#include <string>

namespace kernelpro::agents {

// Cuts a failed build's or run's diagnostics down to what a programmer reads to fix them, at most
// max_chars characters:
//   - compiler errors first (nvcc, gcc/clang, ptxas, linker), each with the line before it when
//     that names the function, and up to three lines after it (source line, caret, the
//     instantiation it was detected in);
//   - then Python tracebacks: the exception line, and the last three frames of the last one;
//   - then any other line that reports an error, a failed assertion, a fault or a mismatch.
// Warnings, duplicate lines, include chains and build command lines are dropped, and a closing
// line says how much was cut. Text with neither compiler diagnostics nor a traceback (a
// correctness report, say) is kept as it is, cut from its end only if it exceeds max_chars.
std::string TrimBuildErrors(const std::string& diagnostics, size_t max_chars);

}  // namespace kernelpro::agents
