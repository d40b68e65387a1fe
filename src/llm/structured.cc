#include "llm/structured.h"

#include <utility>

#include "core/text.h"

namespace kernelpro::llm {

std::string SchemaInstruction(const ResponseSchema& schema) {
  return "Reply with only one JSON value (no prose, no explanation) that validates against "
         "this JSON Schema, named \"" +
         schema.name + "\":\n```json\n" + DumpJson(schema.schema) + "\n```";
}

std::string SystemWithSchemaInstruction(const std::string& system, const ResponseSchema& schema) {
  if (system.empty()) return SchemaInstruction(schema);
  return system + "\n\n" + SchemaInstruction(schema);
}

Outcome AttachStructured(Response response, const std::string& provider) {
  if (response.stop_reason != FinishReason::kEnd && response.stop_reason != FinishReason::kLength) {
    return response;
  }
  response.structured = ExtractJson(response.text);
  if (!response.structured && response.stop_reason == FinishReason::kEnd) {
    Error error = MakeError(ErrorKind::kMalformed,
                            provider +
                                ": asked for a JSON answer, but the reply holds no JSON "
                                "value: \"" +
                                Snippet(response.text) + "\"");
    error.reply_text = response.text;
    return error;
  }
  return response;
}

std::variant<Json, Error> ParseJsonBody(const HttpResponse& response, const std::string& provider) {
  const std::string status = " (HTTP " + std::to_string(response.status) + ")";
  if (response.body.find_first_not_of(" \t\r\n") == std::string::npos) {
    return MakeError(ErrorKind::kMalformed, provider + ": empty response body" + status,
                     response.status);
  }
  Json body = Json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) {
    return MakeError(
        ErrorKind::kMalformed,
        provider + ": response body is not JSON" + status + ": \"" + Snippet(response.body) + "\"",
        response.status);
  }
  if (!body.is_object()) {
    return MakeError(ErrorKind::kMalformed,
                     provider + ": response body is not a JSON object" + status + ": \"" +
                         Snippet(response.body) + "\"",
                     response.status);
  }
  return body;
}

std::string Snippet(const std::string& text, size_t max_chars) {
  // Never split a UTF-8 sequence: the message may be written out as JSON.
  const size_t cut = Utf8Prefix(text, max_chars);
  std::string out = text.substr(0, cut);
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return cut < text.size() ? out + "..." : out;
}

Outcome ParseJsonReply(const HttpResponse& response, const std::string& provider,
                       const std::function<Outcome(const Json& body)>& parse_body) {
  if (response.status < 200 || response.status >= 300) return HttpStatusError(response, provider);
  std::variant<Json, Error> body = ParseJsonBody(response, provider);
  if (auto* error = std::get_if<Error>(&body)) return *error;
  try {
    return parse_body(std::get<Json>(body));
  } catch (const Json::exception& e) {
    return MakeError(ErrorKind::kMalformed, provider + ": unexpected response shape: " + e.what(),
                     response.status);
  }
}

Json AlternatingTurns(const std::vector<Message>& messages,
                      const std::function<Json(const Message&)>& content_blocks) {
  Json turns = Json::array();
  for (const Message& message : messages) {
    const char* role = message.role == Role::kAssistant ? "assistant" : "user";
    Json blocks = content_blocks(message);
    if (!turns.empty() && turns.back()["role"] == role) {
      for (Json& block : blocks) turns.back()["content"].push_back(std::move(block));
    } else {
      turns.push_back({{"role", role}, {"content", std::move(blocks)}});
    }
  }
  return turns;
}

}  // namespace kernelpro::llm
