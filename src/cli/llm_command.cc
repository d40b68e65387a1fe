// `kernelpro llm ping`: is the model reachable, and what does an exchange cost? Sends a trivial
// prompt (or, with --tool-call, a one-tool conversation) through the same stack the agents use
// (retries, truncation recovery, recording) and prints the reply, latency, tokens and attempts.
#include <iostream>
#include <mutex>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/option_groups.h"
#include "llm/factory.h"
#include "llm/tool_loop.h"
#include "tools/tool.h"

namespace kernelpro::cli {
namespace {

struct PingArgs {
  LlmOptions llm;
  std::string prompt = "Reply with the single word: pong";
  int max_tokens = 64;
  bool tool_call = false;
  bool json = false;
};

// What every exchange of the ping cost, summed (a tool conversation makes several).
struct Totals {
  std::mutex mu;
  double latency_ms = 0, cost_usd = 0;
  bool cost_known = true;
  int attempts = 0, exchanges = 0;
  llm::Usage usage;
};

llm::ToolDefinition AddTool() {
  return {"add", "Adds two integers and returns their sum", Json::parse(R"({"type": "object",
                          "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                          "required": ["a", "b"]})")};
}

Result<std::string> RunAdd(const Json& arguments) {
  auto number = [&](const char* key) -> std::optional<double> {
    if (!arguments.is_object() || !arguments.contains(key)) return std::nullopt;
    const Json& v = arguments[key];
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
      try {
        return std::stod(v.get<std::string>());
      } catch (...) {
        return std::nullopt;
      }
    }
    return std::nullopt;
  };
  auto a = number("a"), b = number("b");
  if (!a || !b) {
    return Status::InvalidArgument("add needs numbers a and b, got " + DumpJson(arguments));
  }
  return tools::FormatNumber(*a + *b);
}

int Ping(const PingArgs& args) {
  auto config = ResolveLlmConfig(args.llm);
  if (!config.ok()) {
    std::cerr << "kernelpro llm ping: " << config.status().message() << "\n";
    return 2;
  }
  Totals totals;
  llm::BackendDependencies deps;
  // A ping asks whether the model answers; a reply cut off at --max-tokens is still an answer.
  deps.recover_truncation = false;
  deps.on_exchange = [&](const llm::Exchange& e) {
    std::lock_guard<std::mutex> lock(totals.mu);
    totals.latency_ms += e.latency_ms;
    totals.cost_usd += e.cost_usd;
    totals.cost_known = totals.cost_known && e.cost_known;
    totals.attempts += e.attempts;
    totals.usage.input_tokens += e.usage.input_tokens;
    totals.usage.output_tokens += e.usage.output_tokens;
    ++totals.exchanges;
  };
  auto backend = llm::MakeBackend(*config, deps);
  if (!backend.ok()) {
    std::cerr << "kernelpro llm ping: " << backend.status().message() << "\n";
    return 2;
  }

  llm::Request request;
  request.max_tokens = args.max_tokens;
  Json tool_calls = Json::array();
  std::optional<llm::Response> response;
  std::optional<llm::Error> error;
  int turns = 1;
  if (args.tool_call) {
    request.system = "You can call tools. Use them when asked.";
    request.messages.push_back(
        llm::Message::User("What is 2 + 3? Call the add tool, then answer with the sum."));
    request.tools = {AddTool()};
    // Named rather than kRequired: llama-cpp-python's function-calling format accepts a named
    // tool but not "required". First turn only; the loop relaxes it.
    request.tool_choice = llm::ToolChoice::kNamed;
    request.tool_choice_name = "add";
    llm::ToolLoopOptions loop;
    loop.budgets = {{"add", 1}};
    loop.max_turns = 3;
    llm::ToolConversation c = llm::RunToolConversation(**backend, request, {{"add", RunAdd}}, loop);
    for (const llm::Message& m : c.transcript) {
      for (const llm::ToolCall& call : m.tool_calls) {
        tool_calls.push_back({{"id", call.id}, {"name", call.name}, {"arguments", call.arguments}});
      }
      if (m.tool_result) {
        for (Json& call : tool_calls) {
          if (call["id"] == m.tool_result->tool_call_id && !call.contains("result")) {
            call["result"] = m.tool_result->content;
            call["is_error"] = m.tool_result->is_error;
          }
        }
      }
    }
    response = c.response;
    error = c.error;
    turns = c.turns;
  } else {
    request.messages.push_back(llm::Message::User(args.prompt));
    llm::Outcome outcome = (*backend)->Complete(request);
    if (outcome.ok()) {
      response = outcome.response();
    } else {
      error = outcome.error();
    }
  }

  Json out = llm::DescribeLlmConfig(*config);
  out["latency_ms"] = totals.latency_ms;
  out["input_tokens"] = totals.usage.input_tokens;
  out["output_tokens"] = totals.usage.output_tokens;
  out["attempts"] = totals.attempts;
  out["exchanges"] = totals.exchanges;
  out["cost_usd"] = totals.cost_usd;
  out["cost_known"] = totals.cost_known && totals.exchanges > 0;
  if (args.tool_call) {
    out["tool_calls"] = tool_calls;
    out["turns"] = turns;
  }
  if (response) {
    out["text"] = response->text;
    out["stop_reason"] = llm::ToString(response->stop_reason);
    out["model_reported"] = response->model;
  } else {
    out["error"] = llm::ToJson(*error);
    out["error"]["description"] = error->ToString();
  }
  if (args.json) {
    std::cout << DumpJson(out, 2) << "\n";
    return response ? 0 : 1;
  }
  std::cout << "kernelpro llm ping: " << config->provider << " " << config->model
            << (config->base_url.empty() ? "" : " at " + config->base_url) << "\n";
  for (const Json& call : tool_calls) {
    std::cout << "tool call: " << call["name"].get<std::string>() << "("
              << DumpJson(call["arguments"]) << ") -> "
              << (call.contains("result") ? call["result"].get<std::string>() : "(not run)")
              << "\n";
  }
  if (response) {
    std::cout << "reply: " << response->text << "\n";
  } else {
    std::cout << "error: " << error->ToString() << "\n";
  }
  std::cout << tools::FormatNumber(totals.latency_ms) << " ms, " << totals.usage.input_tokens
            << " input + " << totals.usage.output_tokens << " output tokens, " << totals.attempts
            << (totals.attempts == 1 ? " attempt" : " attempts");
  if (args.tool_call) std::cout << ", " << turns << " model calls";
  if (response) {
    std::cout << ", stop: " << llm::ToString(response->stop_reason);
    if (response->stop_reason == llm::FinishReason::kLength) std::cout << " (at --max-tokens)";
  }
  if (out["cost_known"].get<bool>()) std::cout << ", $" << totals.cost_usd;
  std::cout << "\n";
  return response ? 0 : 1;
}

}  // namespace

CommandRunner RegisterLlmCommand(CLI::App& app) {
  auto args = std::make_shared<PingArgs>();
  CLI::App* llm = app.add_subcommand("llm", "Talk to the configured language model");
  llm->require_subcommand(1);
  CLI::App* ping = llm->add_subcommand(
      "ping", "Send a trivial prompt and print the reply, latency and token counts");
  AddLlmOptions(*ping, args->llm);
  ping->add_option("--prompt", args->prompt, "The prompt to send")->capture_default_str();
  AddOption(*ping, kMaxTokensOption, args->max_tokens)
      ->capture_default_str()
      ->check(WholeRange(1, 1e7));
  ping->add_flag("--tool-call", args->tool_call,
                 "Offer an add(a, b) tool and run the conversation until the model answers");
  ping->footer(
      "--json prints one object: text, latency_ms, input_tokens, output_tokens, "
      "attempts, ...");
  AddOption(*ping, kJsonOption, args->json);
  return [args] { return Ping(*args); };
}

}  // namespace kernelpro::cli
