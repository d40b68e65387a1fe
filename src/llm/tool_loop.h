// The tool-calling conversation loop, the same for every provider.
//
// RunToolConversation sends a Request, and while the model asks for tool calls it appends the
// assistant turn, runs each call through its handler, appends one kTool message per call and asks
// again; it ends at the first reply with no tool calls (the final answer) or after `max_turns`
// model calls. Failures a model can act on are told to the model as error results rather than
// ending the conversation: a handler's error, an unknown tool name, and a tool whose per-
// conversation call budget is spent ("budget for tool X exhausted (N calls); answer with what you
// have"). Budgets exist because agents otherwise re-run expensive profiling tools in a loop;
// saying so plainly lets the model finish with what it has instead of retrying blindly.
//
// The initial request's tool_choice applies to the first turn only (a forced call on every turn
// would never end); later turns are kAuto, or kNone once every tool's budget is spent.
//
// Errors of the backend itself (after whatever retries it does) end the conversation, as does a
// reply that stops for tool use but names no tool. Either way the caller gets the transcript so
// far. The loop itself keeps no state between calls; handlers run on the calling thread, one at a
// time, in the order the model listed the calls.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "llm/backend.h"

namespace kernelpro::llm {

// Runs one tool call. The text is the tool result the model reads; a non-OK Status is sent to
// the model as an error result carrying the status message. Handlers should not throw; an
// exception is caught and reported to the model as an error result.
using ToolHandler = std::function<Result<std::string>(const Json& arguments)>;

struct ToolLoopOptions {
  // Calls each tool may make per conversation, unless `budgets` names the tool.
  int default_budget = 10;
  // Per-tool budgets, by tool name; they override `default_budget`.
  std::map<std::string, int> budgets;
  // Model calls per conversation, the first included; reaching it without a final answer is a
  // kBudget error.
  int max_turns = 20;
  // Ask the last allowed turn (turn `max_turns`) with tool_choice kNone, so that a model still
  // calling tools is made to answer instead of ending the conversation with the kBudget error. A
  // model that calls tools anyway gets them refused and the kBudget error follows.
  bool answer_on_last_turn = false;
};

struct ToolConversation {
  std::optional<Response> response;    // the final answer; unset when `error` is set
  std::optional<Error> error;          // why the conversation ended without one
  std::vector<Message> transcript;     // the initial messages, then every turn, the final included
  std::map<std::string, int> calls;    // per tool: handler runs (failures included)
  std::map<std::string, int> refused;  // per tool name: calls not run (unknown or over budget)
  int turns = 0;                       // model calls made
  Usage usage;                         // tokens summed over every turn

  bool ok() const { return response.has_value(); }
};

ToolConversation RunToolConversation(Backend& backend, Request initial,
                                     const std::map<std::string, ToolHandler>& handlers,
                                     const ToolLoopOptions& options = {});

}  // namespace kernelpro::llm
