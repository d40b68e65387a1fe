#include "llm/openai.h"

#include <atomic>
#include <utility>
#include <variant>

#include "core/text.h"
#include "llm/structured.h"

namespace kernelpro::llm {
namespace {

constexpr char kOpenAi[] = "openai";

Json MessageJson(const Message& message) {
  switch (message.role) {
    case Role::kUser:
      return {{"role", "user"}, {"content", message.text}};
    case Role::kAssistant: {
      Json json = {{"role", "assistant"}};
      // Always a string, "" for a turn that only calls tools: the OpenAI API accepts "" as well
      // as null, but llama-cpp-python's server rejects null (HTTP 500, "Input should be a valid
      // string"; seen against llama-cpp-python 0.3.36).
      json["content"] = message.text;
      if (!message.tool_calls.empty()) {
        Json calls = Json::array();
        for (const ToolCall& call : message.tool_calls) {
          // The protocol carries arguments as a JSON string, not an object.
          calls.push_back(
              {{"id", call.id},
               {"type", "function"},
               {"function", {{"name", call.name}, {"arguments", DumpJson(call.arguments)}}}});
        }
        json["tool_calls"] = std::move(calls);
      }
      return json;
    }
    case Role::kTool: {
      ToolResult result = message.tool_result.value_or(ToolResult{});
      // Chat Completions has no error flag on tool results; without the prefix the model could
      // not tell a failed call from one that returned this text.
      std::string content = result.is_error ? "Error: " + result.content : result.content;
      return {{"role", "tool"}, {"tool_call_id", result.tool_call_id}, {"content", content}};
    }
  }
  return Json::object();
}

FinishReason OpenAiFinishReason(const std::string& finish_reason) {
  if (finish_reason == "length") return FinishReason::kLength;
  if (finish_reason == "tool_calls" || finish_reason == "function_call") {
    return FinishReason::kToolUse;
  }
  if (finish_reason == "content_filter") return FinishReason::kRefusal;
  return FinishReason::kEnd;  // "stop", and whatever a server invents
}

// Arguments arrive as a JSON string written by the model, so they can be broken; a broken one is
// kept for the agent to see and answer rather than failing the whole turn. Some servers send an
// object instead of a string.
Json ParseArguments(const Json& arguments) {
  if (arguments.is_object()) return arguments;
  if (!arguments.is_string()) return Json::object();
  const std::string& text = arguments.get_ref<const std::string&>();
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return Json::object();
  Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_object()) return parsed;
  return {{"_raw", text}};
}

// Content is a string or null; a few servers send an array of parts.
std::string ContentText(const Json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string text;
  if (content.is_array()) {
    for (const Json& part : content) {
      if (JsonGet<std::string>(part, "type", "") == "text") {
        text += JsonGet<std::string>(part, "text", "");
      }
    }
  }
  return text;
}

Outcome ParseOpenAiBody(const Json& body, int http_status) {
  auto choices = body.find("choices");
  if (choices == body.end() || !choices->is_array() || choices->empty() ||
      !(*choices)[0].is_object()) {
    // Some proxies answer 200 with an error object; the start of the body shows it.
    return MakeError(
        ErrorKind::kMalformed,
        std::string(kOpenAi) + ": response has no choices: \"" + Snippet(DumpJson(body)) + "\"",
        http_status);
  }
  const Json& choice = (*choices)[0];
  auto message = choice.find("message");
  if (message == choice.end() || !message->is_object()) {
    return MakeError(
        ErrorKind::kMalformed,
        std::string(kOpenAi) + ": choice without a message: \"" + Snippet(DumpJson(choice)) + "\"",
        http_status);
  }
  Response response;
  response.text = ContentText(message->value("content", Json()));
  response.provider_stop_reason = JsonGet<std::string>(choice, "finish_reason", "");
  response.stop_reason = OpenAiFinishReason(response.provider_stop_reason);

  Json calls = message->value("tool_calls", Json::array());
  if (calls.is_array() && calls.empty() && message->contains("function_call")) {
    calls.push_back({{"function", (*message)["function_call"]}});  // the pre-tools protocol
  }
  if (calls.is_array()) {
    for (const Json& call : calls) {
      Json function = call.value("function", Json::object());
      std::string name = JsonGet<std::string>(function, "name", "");
      if (name.empty()) {
        return MakeError(ErrorKind::kMalformed,
                         std::string(kOpenAi) + ": tool call without a function name: \"" +
                             Snippet(DumpJson(call)) + "\"",
                         http_status);
      }
      std::string id = JsonGet<std::string>(call, "id", "");
      if (id.empty()) id = "call_" + std::to_string(response.tool_calls.size());
      response.tool_calls.push_back(
          {std::move(id), std::move(name), ParseArguments(function.value("arguments", Json()))});
    }
  }
  // Ollama and some llama-server versions say "stop" even when the turn calls tools.
  if (!response.tool_calls.empty() && response.stop_reason == FinishReason::kEnd) {
    response.stop_reason = FinishReason::kToolUse;
  }
  std::string refusal = JsonGet<std::string>(*message, "refusal", "");
  if (!refusal.empty()) {
    response.stop_reason = FinishReason::kRefusal;
    if (response.text.empty()) response.text = refusal;
  }
  Json usage = body.value("usage", Json::object());
  response.usage.input_tokens = JsonGet<std::int64_t>(usage, "prompt_tokens", 0);
  response.usage.output_tokens = JsonGet<std::int64_t>(usage, "completion_tokens", 0);
  response.model = JsonGet<std::string>(body, "model", "");
  return response;
}

// Whether a failed reply says the server cannot do response_format json_schema. OpenAI and vLLM
// answer 400 or 422; llama.cpp answered 500 before it supported json_schema, with "response_format
// type must be one of \"text\" or \"json_object\"". vLLM and llama.cpp also fail schemas their
// grammar engines cannot compile.
bool RejectsResponseFormat(const HttpResponse& response) {
  if (response.status != 400 && response.status != 422 && response.status != 500) return false;
  const std::string text = Lower(response.body);
  for (const char* sign : {"response_format", "json_schema", "json schema", "structured output",
                           "grammar", "guided_", "xgrammar"}) {
    if (text.find(sign) != std::string::npos) return true;
  }
  return false;
}

class OpenAiBackend : public Backend {
 public:
  OpenAiBackend(OpenAiOptions options, std::shared_ptr<HttpTransport> transport)
      : options_(std::move(options)), transport_(std::move(transport)) {
    options_.base_url = WithoutTrailingSlashes(std::move(options_.base_url));
  }

  std::string provider() const override { return kOpenAi; }
  std::string model() const override { return options_.model; }

  Outcome Complete(const Request& request) override {
    const bool wants_schema = request.response_schema.has_value();
    const bool structured =
        wants_schema && options_.structured_output && !response_format_rejected_.load();
    // Latency covers a rejected first call too: it is what the caller waited.
    const auto start = std::chrono::steady_clock::now();
    HttpResult http = transport_->Send(HttpRequestFor(request, structured));
    int attempts = 1;
    if (structured && http.ok() && RejectsResponseFormat(http.response())) {
      response_format_rejected_.store(true);
      http = transport_->Send(HttpRequestFor(request, /*structured=*/false));
      attempts = 2;
    }
    const double latency_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!http.ok()) {
      Error error = http.error();
      error.attempts = attempts;
      return error;
    }
    Outcome outcome = ParseOpenAiResponse(http.response());
    if (!outcome.ok()) {
      outcome.error().attempts = attempts;
      return outcome;
    }
    Response& response = outcome.response();
    response.latency_ms = latency_ms;
    response.attempts = attempts;
    if (response.model.empty()) response.model = options_.model;
    if (!wants_schema) return outcome;
    return AttachStructured(std::move(response), kOpenAi);
  }

 private:
  HttpRequest HttpRequestFor(const Request& request, bool structured) const {
    HttpRequest http;
    http.url = options_.base_url + "/chat/completions";
    http.headers = {{"Content-Type", "application/json"}};
    if (!options_.api_key.empty()) {
      http.headers.emplace_back("Authorization", "Bearer " + options_.api_key);
    }
    // DumpJson: a tool result may hold invalid UTF-8 (compiler output), which must not throw.
    http.body = DumpJson(OpenAiRequestBody(request, options_.model, structured));
    http.connect_timeout = options_.connect_timeout;
    http.total_timeout = options_.total_timeout;
    return http;
  }

  OpenAiOptions options_;
  std::shared_ptr<HttpTransport> transport_;
  // Set once the server has refused response_format; never cleared, since a server does not
  // learn json_schema while this process runs.
  std::atomic<bool> response_format_rejected_{false};
};

}  // namespace

Json OpenAiRequestBody(const Request& request, const std::string& model, bool structured) {
  Json body = {{"model", model}};
  const bool schema_in_prompt = request.response_schema.has_value() && !structured;
  // One system message, first: llama.cpp chat templates reject a second one or one later on.
  std::string system = schema_in_prompt
                           ? SystemWithSchemaInstruction(request.system, *request.response_schema)
                           : request.system;
  Json messages = Json::array();
  if (!system.empty()) messages.push_back({{"role", "system"}, {"content", system}});
  for (const Message& message : request.messages) messages.push_back(MessageJson(message));
  body["messages"] = std::move(messages);
  if (!request.tools.empty()) {
    Json tools = Json::array();
    for (const ToolDefinition& tool : request.tools) {
      tools.push_back({{"type", "function"},
                       {"function",
                        {{"name", tool.name},
                         {"description", tool.description},
                         {"parameters", tool.input_schema}}}});
    }
    body["tools"] = std::move(tools);
    switch (request.tool_choice) {
      case ToolChoice::kAuto:
        break;  // the server's default
      case ToolChoice::kRequired:
        body["tool_choice"] = "required";
        break;
      case ToolChoice::kNone:
        body["tool_choice"] = "none";
        break;
      case ToolChoice::kNamed:
        body["tool_choice"] = {{"type", "function"},
                               {"function", {{"name", request.tool_choice_name}}}};
        break;
    }
  }
  if (request.max_tokens > 0) body["max_tokens"] = request.max_tokens;
  if (request.temperature) body["temperature"] = *request.temperature;
  if (!request.stop.empty()) body["stop"] = request.stop;
  // Only when set, like every optional field here: a server that refuses fields it does not know
  // never sees one it was not asked to take.
  if (request.seed) body["seed"] = *request.seed;
  if (request.response_schema && structured) {
    // strict: false, since strict mode demands additionalProperties: false and every property
    // required, which kernelpro's schemas do not promise.
    body["response_format"] = {{"type", "json_schema"},
                               {"json_schema",
                                {{"name", request.response_schema->name},
                                 {"schema", request.response_schema->schema},
                                 {"strict", false}}}};
  }
  return body;
}

Outcome ParseOpenAiResponse(const HttpResponse& response) {
  return ParseJsonReply(response, kOpenAi,
                        [&](const Json& body) { return ParseOpenAiBody(body, response.status); });
}

std::unique_ptr<Backend> MakeOpenAiBackend(const OpenAiOptions& options,
                                           std::shared_ptr<HttpTransport> transport) {
  if (transport == nullptr) transport = MakeCurlTransport();
  return std::make_unique<OpenAiBackend>(options, std::move(transport));
}

}  // namespace kernelpro::llm
