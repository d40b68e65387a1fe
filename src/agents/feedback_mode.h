// What the profiling agent gives the programmer between iterations (--feedback). Stored with each
// run's options and profiling step ("tools", "reactive", "raw", "none"), so its names never change.
#pragma once

#include <optional>
#include <string>

namespace kernelpro::agents {

// The modes of paper appendices C and F:
//   kTools     proactive: every relevant micro-profiling tool runs and its guidance is injected
//              (the default);
//   kReactive  the tools are offered as callable functions and the LLM decides what to call;
//   kRaw       about 50 ncu counters as name=value, no tools, no classification;
//   kNone      no profiling feedback at all (only compile and correctness errors reach the LLM).
enum class FeedbackMode { kTools, kReactive, kRaw, kNone };

std::string ToString(FeedbackMode mode);
// Any case; "proactive" is read as "tools".
std::optional<FeedbackMode> ParseFeedbackMode(const std::string& text);

}  // namespace kernelpro::agents
