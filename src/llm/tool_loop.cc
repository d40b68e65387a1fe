#include "llm/tool_loop.h"

#include <exception>
#include <utility>

namespace kernelpro::llm {
namespace {

std::string ToolNames(const std::map<std::string, ToolHandler>& handlers) {
  std::string names;
  for (const auto& [name, handler] : handlers) names += (names.empty() ? "" : ", ") + name;
  return names.empty() ? "none" : names;
}

// The result the model reads for one call. Counts the call in `conversation`.
ToolResult RunCall(const ToolCall& call, const std::map<std::string, ToolHandler>& handlers,
                   const ToolLoopOptions& options, ToolConversation& conversation) {
  ToolResult result{call.id, call.name, "", false};
  auto handler = handlers.find(call.name);
  if (handler == handlers.end()) {
    ++conversation.refused[call.name];
    result.is_error = true;
    result.content = "no such tool: \"" + call.name + "\"; the tools are: " + ToolNames(handlers);
    return result;
  }
  auto budget_it = options.budgets.find(call.name);
  int budget = budget_it == options.budgets.end() ? options.default_budget : budget_it->second;
  int& used = conversation.calls[call.name];
  if (used >= budget) {
    ++conversation.refused[call.name];
    result.is_error = true;
    result.content = "budget for tool " + call.name + " exhausted (" + std::to_string(budget) +
                     " calls); answer with what you have";
    return result;
  }
  ++used;
  Result<std::string> output = Status::Internal("handler did not run");
  try {
    output = handler->second(call.arguments);
  } catch (const std::exception& e) {
    output = Status::Internal(std::string("the tool crashed: ") + e.what());
  } catch (...) {
    output = Status::Internal("the tool crashed");
  }
  if (output.ok()) {
    result.content = std::move(*output);
  } else {
    result.is_error = true;
    result.content = output.status().message();
  }
  return result;
}

bool AllBudgetsSpent(const std::map<std::string, ToolHandler>& handlers,
                     const ToolLoopOptions& options, const ToolConversation& conversation) {
  for (const auto& [name, handler] : handlers) {
    auto budget_it = options.budgets.find(name);
    int budget = budget_it == options.budgets.end() ? options.default_budget : budget_it->second;
    auto used = conversation.calls.find(name);
    if (used == conversation.calls.end() || used->second < budget) return false;
  }
  return true;
}

}  // namespace

ToolConversation RunToolConversation(Backend& backend, Request initial,
                                     const std::map<std::string, ToolHandler>& handlers,
                                     const ToolLoopOptions& options) {
  ToolConversation conversation;
  Request request = std::move(initial);
  for (;;) {
    if (conversation.turns >= options.max_turns) {
      conversation.error =
          MakeError(ErrorKind::kBudget,
                    "no final answer after " + std::to_string(conversation.turns) +
                        " model calls (max_turns " + std::to_string(options.max_turns) + ")");
      break;
    }
    ++conversation.turns;
    Outcome outcome = backend.Complete(request);
    if (!outcome.ok()) {
      conversation.error = outcome.error();
      break;
    }
    Response& response = outcome.response();
    conversation.usage.input_tokens += response.usage.input_tokens;
    conversation.usage.output_tokens += response.usage.output_tokens;
    request.messages.push_back(Message::Assistant(response.text, response.tool_calls));
    if (response.tool_calls.empty()) {
      if (response.stop_reason == FinishReason::kToolUse) {
        // Asking again would send the same conversation; nothing would change.
        conversation.error = MakeError(ErrorKind::kMalformed,
                                       "the model stopped for tool use but asked for no tool call");
      } else {
        conversation.response = std::move(response);
      }
      break;
    }
    for (const ToolCall& call : response.tool_calls) {
      request.messages.push_back(Message::Tool(RunCall(call, handlers, options, conversation)));
    }
    // A forced choice (kRequired, kNamed) is for the first turn: forcing every turn would never
    // let the model answer. Once every tool's budget is spent, say so with kNone too, where the
    // provider can (Bedrock cannot; the budget message still tells the model).
    const bool last_turn =
        options.answer_on_last_turn && conversation.turns + 1 >= options.max_turns;
    request.tool_choice = last_turn || AllBudgetsSpent(handlers, options, conversation)
                              ? ToolChoice::kNone
                              : ToolChoice::kAuto;
  }
  conversation.transcript = std::move(request.messages);
  return conversation;
}

}  // namespace kernelpro::llm
