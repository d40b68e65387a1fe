#include "llm/bedrock.h"

#include <exception>
#include <utility>

#include "llm/sigv4.h"
#include "llm/structured.h"

namespace kernelpro::llm {
namespace {

constexpr char kBedrock[] = "bedrock";

Json TextBlock(const std::string& text) { return {{"text", text}}; }

// Converse's content blocks for one message. Converse rejects blank text blocks, so an assistant
// turn that only calls tools has no text block.
Json BedrockContentBlocks(const Message& message) {
  Json blocks = Json::array();
  if (message.role == Role::kTool && message.tool_result) {
    const ToolResult& result = *message.tool_result;
    blocks.push_back({{"toolResult",
                       {{"toolUseId", result.tool_call_id},
                        {"content", Json::array({TextBlock(result.content)})},
                        {"status", result.is_error ? "error" : "success"}}}});
    return blocks;
  }
  if (!message.text.empty() || message.tool_calls.empty())
    blocks.push_back(TextBlock(message.text));
  for (const ToolCall& call : message.tool_calls) {
    blocks.push_back(
        {{"toolUse", {{"toolUseId", call.id}, {"name", call.name}, {"input", call.arguments}}}});
  }
  return blocks;
}

// Bedrock's ModelTimeoutException (408) is the model running long, worth a retry like any timeout;
// HttpStatusError alone would call it a bad request. The error type from x-amzn-ErrorType
// ("ThrottlingException:http://...") goes before the message so a user sees which one it was.
Error BedrockHttpError(const HttpResponse& response) {
  Error error = HttpStatusError(response, kBedrock);
  std::string type = response.Header("x-amzn-ErrorType");
  type = type.substr(0, type.find(':'));
  const std::string prefix = std::string(kBedrock) + ": ";
  if (!type.empty() && error.message.starts_with(prefix)) {
    std::string text = error.message.substr(prefix.size());
    error.message = prefix + type + (text.empty() ? "" : ": " + text);
  }
  if (response.status == 408) error.kind = ErrorKind::kTimeout;
  return error;
}

FinishReason BedrockFinishReason(const std::string& reason) {
  if (reason == "max_tokens" || reason == "model_context_window_exceeded") {
    return FinishReason::kLength;
  }
  if (reason == "tool_use") return FinishReason::kToolUse;
  if (reason == "guardrail_intervened" || reason == "content_filtered")
    return FinishReason::kRefusal;
  return FinishReason::kEnd;  // end_turn, stop_sequence, and whatever Bedrock adds next
}

class BedrockBackend : public Backend {
 public:
  BedrockBackend(BedrockOptions options, std::shared_ptr<HttpTransport> transport,
                 SystemClockFunction now)
      : options_(std::move(options)), transport_(std::move(transport)), now_(std::move(now)) {}

  std::string provider() const override { return kBedrock; }
  std::string model() const override { return options_.model; }

  Outcome Complete(const Request& request) override {
    try {
      return CompleteOrThrow(request);
    } catch (const std::exception& e) {  // nothing may escape a backend
      return MakeError(ErrorKind::kMalformed, std::string(kBedrock) + ": " + e.what());
    }
  }

 private:
  std::string BaseUrl() const {
    return WithoutTrailingSlashes(options_.base_url.empty() ? "https://bedrock-runtime." +
                                                                  options_.region + ".amazonaws.com"
                                                            : options_.base_url);
  }

  Outcome CompleteOrThrow(const Request& request) {
    if (options_.model.empty()) {
      return MakeError(ErrorKind::kConfig, "bedrock: no model configured");
    }
    if (options_.region.empty()) {
      return MakeError(ErrorKind::kConfig, "bedrock: no AWS region configured");
    }
    if (options_.credentials.access_key_id.empty() ||
        options_.credentials.secret_access_key.empty()) {
      return MakeError(ErrorKind::kAuth,
                       "bedrock: no AWS credentials (set AWS_ACCESS_KEY_ID and "
                       "AWS_SECRET_ACCESS_KEY, or use a profile in ~/.aws/credentials)");
    }
    if (transport_ == nullptr) return MakeError(ErrorKind::kConfig, "bedrock: no HTTP transport");

    HttpRequest http;
    http.method = "POST";
    // The model id goes in one path segment: its ':' (and an ARN's '/') must be encoded.
    http.url = BaseUrl() + "/model/" + UriEncode(options_.model) + "/converse";
    http.headers = {{"Content-Type", "application/json"}, {"Accept", "application/json"}};
    http.body = DumpJson(BedrockRequestBody(request));
    http.connect_timeout = options_.connect_timeout;
    http.total_timeout = options_.total_timeout;

    SigV4Options signing{options_.region, "bedrock"};
    Result<SigV4Signature> signature = SignV4({http.method, http.url, http.headers, http.body},
                                              options_.credentials, signing, now_());
    if (!signature.ok()) {
      return MakeError(ErrorKind::kConfig, "bedrock: " + signature.status().message());
    }
    for (const auto& header : signature->headers) http.headers.push_back(header);

    const auto start = std::chrono::steady_clock::now();
    HttpResult result = transport_->Send(http);
    const double latency_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!result.ok()) return result.error();
    Outcome outcome = ParseBedrockResponse(result.response());
    if (!outcome.ok()) return outcome;
    Response& response = outcome.response();
    response.latency_ms = latency_ms;
    response.model = options_.model;
    if (request.response_schema && response.tool_calls.empty()) {
      return AttachStructured(std::move(response), kBedrock);
    }
    return outcome;
  }

  const BedrockOptions options_;
  const std::shared_ptr<HttpTransport> transport_;
  const SystemClockFunction now_;
};

}  // namespace

std::unique_ptr<Backend> MakeBedrockBackend(const BedrockOptions& options,
                                            std::shared_ptr<HttpTransport> transport,
                                            SystemClockFunction now) {
  if (!now) now = std::chrono::system_clock::now;
  return std::make_unique<BedrockBackend>(options, std::move(transport), std::move(now));
}

Json BedrockRequestBody(const Request& request) {
  Json body = Json::object();
  // Converse wants strictly alternating roles, and tool results travel in user turns.
  body["messages"] = AlternatingTurns(request.messages, BedrockContentBlocks);

  const std::string system = request.response_schema ? SystemWithSchemaInstruction(
                                                           request.system, *request.response_schema)
                                                     : request.system;
  if (!system.empty()) body["system"] = Json::array({TextBlock(system)});

  Json inference = {{"maxTokens", request.max_tokens}};
  if (request.temperature) inference["temperature"] = *request.temperature;
  if (!request.stop.empty()) inference["stopSequences"] = request.stop;
  body["inferenceConfig"] = std::move(inference);

  if (!request.tools.empty()) {
    Json tools = Json::array();
    for (const ToolDefinition& tool : request.tools) {
      tools.push_back({{"toolSpec",
                        {{"name", tool.name},
                         {"description", tool.description},
                         {"inputSchema", {{"json", tool.input_schema}}}}}});
    }
    body["toolConfig"] = {{"tools", std::move(tools)}};
    // Converse has no "none": the tools must stay declared while the history holds tool calls,
    // so kNone is sent as auto and the caller (the tool loop) refuses further calls itself.
    switch (request.tool_choice) {
      case ToolChoice::kAuto:
      case ToolChoice::kNone:
        break;
      case ToolChoice::kRequired:
        body["toolConfig"]["toolChoice"] = {{"any", Json::object()}};
        break;
      case ToolChoice::kNamed:
        body["toolConfig"]["toolChoice"] = {{"tool", {{"name", request.tool_choice_name}}}};
        break;
    }
  }
  return body;
}

namespace {

Outcome ParseConverseBody(const Json& body, const HttpResponse& http) {
  const Json* content = nullptr;
  if (auto output = body.find("output"); output != body.end() && output->is_object()) {
    if (auto message = output->find("message"); message != output->end() && message->is_object()) {
      if (auto c = message->find("content"); c != message->end() && c->is_array()) content = &*c;
    }
  }
  if (content == nullptr) {
    return MakeError(
        ErrorKind::kMalformed,
        "bedrock: the response has no output.message.content array: " + Snippet(http.body),
        http.status);
  }

  Response response;
  for (const Json& block : *content) {
    if (!block.is_object()) continue;
    if (auto text = block.find("text"); text != block.end() && text->is_string()) {
      response.text += text->get<std::string>();
    }
    if (auto use = block.find("toolUse"); use != block.end() && use->is_object()) {
      std::string name = JsonGet<std::string>(*use, "name", "");
      if (name.empty()) {
        return MakeError(ErrorKind::kMalformed,
                         "bedrock: a toolUse block has no name: " + Snippet(DumpJson(*use)),
                         http.status);
      }
      std::string id = JsonGet<std::string>(*use, "toolUseId", "");
      if (id.empty()) id = "call_" + std::to_string(response.tool_calls.size());
      response.tool_calls.push_back(
          {std::move(id), std::move(name), use->value("input", Json::object())});
    }
    // reasoningContent and other block kinds carry nothing the Response form holds.
  }
  response.provider_stop_reason = JsonGet<std::string>(body, "stopReason", "");
  response.stop_reason = BedrockFinishReason(response.provider_stop_reason);
  if (auto usage = body.find("usage"); usage != body.end()) {
    response.usage.input_tokens = JsonGet<std::int64_t>(*usage, "inputTokens", 0);
    response.usage.output_tokens = JsonGet<std::int64_t>(*usage, "outputTokens", 0);
  }
  return response;
}

}  // namespace

Outcome ParseBedrockResponse(const HttpResponse& http) {
  if (http.status < 200 || http.status >= 300) return BedrockHttpError(http);
  return ParseJsonReply(http, kBedrock,
                        [&](const Json& body) { return ParseConverseBody(body, http); });
}

}  // namespace kernelpro::llm
