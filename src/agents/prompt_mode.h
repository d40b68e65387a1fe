// What a prompt asks the programmer to do. The mode is stored with every tree node and run-store
// candidate ("initial", "debug", "optimize"), so its names never change.
#pragma once

#include <optional>
#include <string>

namespace kernelpro::agents {

// Initial: reference only. Debug: fix a failing candidate (compiler or correctness errors).
// Optimize: improve a working candidate using its profiling analysis.
enum class PromptMode { kInitial, kDebug, kOptimize };

std::string ToString(PromptMode mode);
// Any case; "optimise" is read as "optimize".
std::optional<PromptMode> ParsePromptMode(const std::string& text);

}  // namespace kernelpro::agents
