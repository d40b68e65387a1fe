#include "llm/anthropic.h"

#include <utility>
#include <variant>

#include "llm/structured.h"

namespace kernelpro::llm {
namespace {

constexpr char kProvider[] = "anthropic";

// The blocks one Message becomes. Empty text blocks are left out: the API rejects them, and an
// assistant turn that only calls tools has no text.
Json ContentBlocks(const Message& message) {
  Json blocks = Json::array();
  if (message.role == Role::kTool) {
    ToolResult result = message.tool_result.value_or(ToolResult{});
    blocks.push_back({{"type", "tool_result"},
                      {"tool_use_id", result.tool_call_id},
                      {"content", result.content},
                      {"is_error", result.is_error}});
    return blocks;
  }
  if (!message.text.empty()) blocks.push_back({{"type", "text"}, {"text", message.text}});
  for (const ToolCall& call : message.tool_calls) {
    blocks.push_back(
        {{"type", "tool_use"}, {"id", call.id}, {"name", call.name}, {"input", call.arguments}});
  }
  return blocks;
}

FinishReason FinishReasonFor(const std::string& stop_reason) {
  if (stop_reason == "max_tokens") return FinishReason::kLength;
  if (stop_reason == "tool_use") return FinishReason::kToolUse;
  if (stop_reason == "refusal") return FinishReason::kRefusal;
  return FinishReason::kEnd;  // "end_turn", "stop_sequence", and whatever comes later
}

Outcome ParseBody(const Json& body, int http_status) {
  auto content = body.find("content");
  if (content == body.end() || !content->is_array()) {
    return MakeError(
        ErrorKind::kMalformed,
        std::string(kProvider) + ": response has no content: \"" + Snippet(DumpJson(body)) + "\"",
        http_status);
  }
  Response response;
  for (const Json& block : *content) {
    const std::string type = JsonGet<std::string>(block, "type", "");
    if (type == "text") {
      response.text += JsonGet<std::string>(block, "text", "");
    } else if (type == "tool_use") {
      std::string id = JsonGet<std::string>(block, "id", "");
      if (id.empty()) id = "call_" + std::to_string(response.tool_calls.size());
      std::string name = JsonGet<std::string>(block, "name", "");
      if (name.empty()) {
        return MakeError(ErrorKind::kMalformed,
                         std::string(kProvider) + ": tool_use block without a name: \"" +
                             Snippet(DumpJson(block)) + "\"",
                         http_status);
      }
      Json input = block.value("input", Json::object());
      if (!input.is_object()) input = Json::object();
      response.tool_calls.push_back({std::move(id), std::move(name), std::move(input)});
    }
    // Thinking blocks and server tool blocks are not part of the answer.
  }
  response.provider_stop_reason = JsonGet<std::string>(body, "stop_reason", "");
  response.stop_reason = FinishReasonFor(response.provider_stop_reason);
  Json usage = body.value("usage", Json::object());
  response.usage.input_tokens = JsonGet<std::int64_t>(usage, "input_tokens", 0);
  response.usage.output_tokens = JsonGet<std::int64_t>(usage, "output_tokens", 0);
  response.model = JsonGet<std::string>(body, "model", "");
  return response;
}

class AnthropicBackend : public Backend {
 public:
  AnthropicBackend(AnthropicOptions options, std::shared_ptr<HttpTransport> transport)
      : options_(std::move(options)), transport_(std::move(transport)) {
    options_.base_url = WithoutTrailingSlashes(std::move(options_.base_url));
  }

  std::string provider() const override { return kProvider; }
  std::string model() const override { return options_.model; }

  Outcome Complete(const Request& request) override {
    HttpRequest http;
    http.url = options_.base_url + "/v1/messages";
    http.headers = {{"content-type", "application/json"}, {"anthropic-version", options_.version}};
    if (!options_.api_key.empty()) http.headers.emplace_back("x-api-key", options_.api_key);
    // DumpJson: a tool result may hold invalid UTF-8 (compiler output), which must not throw.
    http.body = DumpJson(AnthropicRequestBody(request, options_.model));
    http.connect_timeout = options_.connect_timeout;
    http.total_timeout = options_.total_timeout;

    const auto start = std::chrono::steady_clock::now();
    HttpResult result = transport_->Send(http);
    const double latency_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!result.ok()) return result.error();
    Outcome outcome = ParseAnthropicResponse(result.response());
    if (!outcome.ok()) return outcome;
    Response& response = outcome.response();
    response.latency_ms = latency_ms;
    if (response.model.empty()) response.model = options_.model;
    if (!request.response_schema) return outcome;
    return AttachStructured(std::move(response), kProvider);
  }

 private:
  AnthropicOptions options_;
  std::shared_ptr<HttpTransport> transport_;
};

}  // namespace

Json AnthropicRequestBody(const Request& request, const std::string& model) {
  Json body = {{"model", model}, {"max_tokens", request.max_tokens}};
  std::string system = request.response_schema
                           ? SystemWithSchemaInstruction(request.system, *request.response_schema)
                           : request.system;
  if (!system.empty()) body["system"] = system;
  body["messages"] = AlternatingTurns(request.messages, ContentBlocks);
  if (!request.tools.empty()) {
    Json tools = Json::array();
    for (const ToolDefinition& tool : request.tools) {
      tools.push_back({{"name", tool.name},
                       {"description", tool.description},
                       {"input_schema", tool.input_schema}});
    }
    body["tools"] = std::move(tools);
    switch (request.tool_choice) {
      case ToolChoice::kAuto:
        break;  // the API's default
      case ToolChoice::kRequired:
        body["tool_choice"] = {{"type", "any"}};
        break;
      case ToolChoice::kNone:
        body["tool_choice"] = {{"type", "none"}};
        break;
      case ToolChoice::kNamed:
        body["tool_choice"] = {{"type", "tool"}, {"name", request.tool_choice_name}};
        break;
    }
  }
  if (request.temperature) body["temperature"] = *request.temperature;
  if (!request.stop.empty()) body["stop_sequences"] = request.stop;
  return body;
}

Outcome ParseAnthropicResponse(const HttpResponse& response) {
  return ParseJsonReply(response, kProvider,
                        [&](const Json& body) { return ParseBody(body, response.status); });
}

std::unique_ptr<Backend> MakeAnthropicBackend(const AnthropicOptions& options,
                                              std::shared_ptr<HttpTransport> transport) {
  if (transport == nullptr) transport = MakeCurlTransport();
  return std::make_unique<AnthropicBackend>(options, std::move(transport));
}

}  // namespace kernelpro::llm
