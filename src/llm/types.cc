#include "llm/types.h"

#include <array>
#include <utility>

#include "core/enum_names.h"

namespace kernelpro::llm {
namespace {

constexpr std::array<std::pair<Role, const char*>, 3> kRoles = {
    {{Role::kUser, "user"}, {Role::kAssistant, "assistant"}, {Role::kTool, "tool"}}};
constexpr std::array<std::pair<FinishReason, const char*>, 4> kFinishReasons = {
    {{FinishReason::kEnd, "end"},
     {FinishReason::kLength, "length"},
     {FinishReason::kToolUse, "tool_use"},
     {FinishReason::kRefusal, "refusal"}}};
constexpr std::array<std::pair<ToolChoice, const char*>, 4> kChoices = {
    {{ToolChoice::kAuto, "auto"},
     {ToolChoice::kRequired, "required"},
     {ToolChoice::kNone, "none"},
     {ToolChoice::kNamed, "named"}}};
constexpr std::array<std::pair<ErrorKind, const char*>, 11> kKinds = {{
    {ErrorKind::kConnection, "connection"},
    {ErrorKind::kTimeout, "timeout"},
    {ErrorKind::kRateLimited, "rate_limited"},
    {ErrorKind::kServer, "server"},
    {ErrorKind::kAuth, "auth"},
    {ErrorKind::kBadRequest, "bad_request"},
    {ErrorKind::kMalformed, "malformed"},
    {ErrorKind::kTruncated, "truncated"},
    {ErrorKind::kReplayMiss, "replay_miss"},
    {ErrorKind::kConfig, "config"},
    {ErrorKind::kBudget, "budget"},
}};

Json ToJson(const ToolCall& call) {
  return {{"id", call.id}, {"name", call.name}, {"arguments", call.arguments}};
}

Result<ToolCall> ToolCallFromJson(const Json& j) {
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) {
    return Status::InvalidArgument("tool call without a name: " + DumpJson(j));
  }
  return ToolCall{JsonGet<std::string>(j, "id", ""), j["name"].get<std::string>(),
                  j.value("arguments", Json::object())};
}

}  // namespace

Message Message::User(std::string text) {
  Message m;
  m.role = Role::kUser;
  m.text = std::move(text);
  return m;
}

Message Message::Assistant(std::string text, std::vector<ToolCall> calls) {
  Message m;
  m.role = Role::kAssistant;
  m.text = std::move(text);
  m.tool_calls = std::move(calls);
  return m;
}

Message Message::Tool(ToolResult result) {
  Message m;
  m.role = Role::kTool;
  m.tool_result = std::move(result);
  return m;
}

bool Error::retryable() const {
  return kind == ErrorKind::kConnection || kind == ErrorKind::kTimeout ||
         kind == ErrorKind::kRateLimited || kind == ErrorKind::kServer;
}

bool Error::permanent() const {
  switch (kind) {
    case ErrorKind::kReplayMiss:
    case ErrorKind::kAuth:
    case ErrorKind::kConfig:
    case ErrorKind::kBudget:
      return true;
    case ErrorKind::kBadRequest:
      return http_status == 404;  // no such model (or endpoint)
    default:
      return false;
  }
}

std::string Error::ToString() const {
  std::string out;
  switch (kind) {
    case ErrorKind::kConnection:
      out = "connection failed";
      break;
    case ErrorKind::kTimeout:
      out = "timed out";
      break;
    case ErrorKind::kRateLimited:
      out = "rate limited";
      break;
    case ErrorKind::kServer:
      out = "server error";
      break;
    case ErrorKind::kAuth:
      out = "not authorised";
      break;
    case ErrorKind::kBadRequest:
      out = "request rejected";
      break;
    case ErrorKind::kMalformed:
      out = "malformed response";
      break;
    case ErrorKind::kTruncated:
      out = "response truncated";
      break;
    case ErrorKind::kReplayMiss:
      out = "not in the cassette";
      break;
    case ErrorKind::kConfig:
      out = "configuration error";
      break;
    case ErrorKind::kBudget:
      out = "budget exhausted";
      break;
  }
  if (http_status != 0) out += " (HTTP " + std::to_string(http_status) + ")";
  if (attempts > 1) out += " after " + std::to_string(attempts) + " attempts";
  if (!message.empty()) out += ": " + message;
  return out;
}

Status Error::ToStatus() const {
  switch (kind) {
    case ErrorKind::kTimeout:
      return Status::Timeout(ToString());
    case ErrorKind::kConnection:
    case ErrorKind::kRateLimited:
    case ErrorKind::kServer:
      return Status::Unavailable(ToString());
    case ErrorKind::kConfig:
    case ErrorKind::kBadRequest:
      return Status::InvalidArgument(ToString());
    case ErrorKind::kReplayMiss:
      return Status::NotFound(ToString());
    default:
      return Status::Internal(ToString());
  }
}

std::string ToString(Role role) { return NameOf(kRoles, role); }
std::string ToString(FinishReason reason) { return NameOf(kFinishReasons, reason); }
std::string ToString(ErrorKind kind) { return NameOf(kKinds, kind); }
std::string ToString(ToolChoice choice) { return NameOf(kChoices, choice); }
std::optional<ToolChoice> ParseToolChoice(const std::string& text) {
  return ValueOf(kChoices, text);
}
std::optional<Role> ParseRole(const std::string& text) { return ValueOf(kRoles, text); }
std::optional<FinishReason> ParseFinishReason(const std::string& text) {
  return ValueOf(kFinishReasons, text);
}
std::optional<ErrorKind> ParseErrorKind(const std::string& text) { return ValueOf(kKinds, text); }

Json ToJson(const Request& request) {
  Json messages = Json::array();
  for (const Message& m : request.messages) {
    Json j = {{"role", ToString(m.role)}};
    if (!m.text.empty() || m.role != Role::kTool) j["text"] = m.text;
    if (!m.tool_calls.empty()) {
      j["tool_calls"] = Json::array();
      for (const ToolCall& c : m.tool_calls) j["tool_calls"].push_back(ToJson(c));
    }
    if (m.tool_result) {
      j["tool_result"] = {{"tool_call_id", m.tool_result->tool_call_id},
                          {"name", m.tool_result->name},
                          {"content", m.tool_result->content},
                          {"is_error", m.tool_result->is_error}};
    }
    messages.push_back(std::move(j));
  }
  Json tools = Json::array();
  for (const ToolDefinition& t : request.tools) {
    tools.push_back(
        {{"name", t.name}, {"description", t.description}, {"input_schema", t.input_schema}});
  }
  Json j = {{"system", request.system},
            {"messages", messages},
            {"tools", tools},
            {"max_tokens", request.max_tokens},
            {"stop", request.stop}};
  if (request.temperature) j["temperature"] = *request.temperature;
  // Only when set, so a request without one serialises (and fingerprints) as before seeds existed.
  if (request.seed) j["seed"] = *request.seed;
  if (request.tool_choice != ToolChoice::kAuto) {
    j["tool_choice"] = ToString(request.tool_choice);
    if (request.tool_choice == ToolChoice::kNamed) j["tool_choice_name"] = request.tool_choice_name;
  }
  if (request.response_schema) {
    j["response_schema"] = {{"name", request.response_schema->name},
                            {"schema", request.response_schema->schema}};
  }
  return j;
}

Json ToJson(const Response& response) {
  Json calls = Json::array();
  for (const ToolCall& c : response.tool_calls) calls.push_back(ToJson(c));
  Json j = {{"text", response.text},
            {"tool_calls", calls},
            {"stop_reason", ToString(response.stop_reason)},
            {"provider_stop_reason", response.provider_stop_reason},
            {"input_tokens", response.usage.input_tokens},
            {"output_tokens", response.usage.output_tokens},
            {"latency_ms", response.latency_ms},
            {"model", response.model},
            {"attempts", response.attempts}};
  if (response.structured) j["structured"] = *response.structured;
  return j;
}

Json ToJson(const Error& error) {
  Json j = {{"kind", ToString(error.kind)},
            {"message", error.message},
            {"http_status", error.http_status},
            {"attempts", error.attempts}};
  if (error.retry_after_s) j["retry_after_s"] = *error.retry_after_s;
  if (!error.reply_text.empty()) j["reply_text"] = error.reply_text;
  return j;
}

Result<Request> RequestFromJson(const Json& json) {
  if (!json.is_object()) return Status::InvalidArgument("request: not a JSON object");
  Request r;
  try {
    r.system = json.value("system", "");
    for (const Json& m : json.value("messages", Json::array())) {
      auto role = ParseRole(m.value("role", ""));
      if (!role) return Status::InvalidArgument("request: message with bad role: " + DumpJson(m));
      Message msg;
      msg.role = *role;
      msg.text = m.value("text", "");
      for (const Json& c : m.value("tool_calls", Json::array())) {
        auto call = ToolCallFromJson(c);
        if (!call.ok()) return call.status();
        msg.tool_calls.push_back(*call);
      }
      if (m.contains("tool_result")) {
        const Json& t = m["tool_result"];
        msg.tool_result = ToolResult{t.value("tool_call_id", ""), t.value("name", ""),
                                     t.value("content", ""), t.value("is_error", false)};
      }
      r.messages.push_back(std::move(msg));
    }
    for (const Json& t : json.value("tools", Json::array())) {
      r.tools.push_back({t.value("name", ""), t.value("description", ""),
                         t.value("input_schema", Json::object())});
    }
    auto choice = ParseToolChoice(json.value("tool_choice", "auto"));
    if (!choice) return Status::InvalidArgument("request: bad tool_choice " + DumpJson(json));
    r.tool_choice = *choice;
    r.tool_choice_name = json.value("tool_choice_name", "");
    r.max_tokens = json.value("max_tokens", 4096);
    if (json.contains("temperature") && json["temperature"].is_number()) {
      r.temperature = json["temperature"].get<double>();
    }
    r.stop = json.value("stop", std::vector<std::string>{});
    if (json.contains("seed") && !json["seed"].is_null()) {
      if (!json["seed"].is_number_unsigned()) {
        return Status::InvalidArgument("request: seed is not a non-negative integer: " +
                                       DumpJson(json["seed"]));
      }
      r.seed = json["seed"].get<std::uint64_t>();
    }
    if (json.contains("response_schema")) {
      r.response_schema = ResponseSchema{json["response_schema"].value("name", "response"),
                                         json["response_schema"].value("schema", Json::object())};
    }
  } catch (const Json::exception& e) {
    return Status::InvalidArgument(std::string("request: ") + e.what());
  }
  return r;
}

Result<Response> ResponseFromJson(const Json& json) {
  if (!json.is_object()) return Status::InvalidArgument("response: not a JSON object");
  Response r;
  try {
    r.text = json.value("text", "");
    for (const Json& c : json.value("tool_calls", Json::array())) {
      auto call = ToolCallFromJson(c);
      if (!call.ok()) return call.status();
      r.tool_calls.push_back(*call);
    }
    auto stop = ParseFinishReason(json.value("stop_reason", "end"));
    if (!stop) return Status::InvalidArgument("response: bad stop_reason " + DumpJson(json));
    r.stop_reason = *stop;
    r.provider_stop_reason = json.value("provider_stop_reason", "");
    r.usage.input_tokens = json.value("input_tokens", std::int64_t{0});
    r.usage.output_tokens = json.value("output_tokens", std::int64_t{0});
    r.latency_ms = json.value("latency_ms", 0.0);
    r.model = json.value("model", "");
    r.attempts = json.value("attempts", 1);
    if (json.contains("structured")) r.structured = json["structured"];
  } catch (const Json::exception& e) {
    return Status::InvalidArgument(std::string("response: ") + e.what());
  }
  return r;
}

Result<Error> ErrorFromJson(const Json& json) {
  if (!json.is_object()) return Status::InvalidArgument("error: not a JSON object");
  auto kind = ParseErrorKind(JsonGet<std::string>(json, "kind", ""));
  if (!kind) return Status::InvalidArgument("error: bad kind in " + DumpJson(json));
  Error e;
  e.kind = *kind;
  e.message = JsonGet<std::string>(json, "message", "");
  e.http_status = JsonGet<int>(json, "http_status", 0);
  e.attempts = JsonGet<int>(json, "attempts", 1);
  e.reply_text = JsonGet<std::string>(json, "reply_text", "");
  if (json.contains("retry_after_s") && json["retry_after_s"].is_number()) {
    e.retry_after_s = json["retry_after_s"].get<double>();
  }
  return e;
}

namespace {

std::optional<Json> ParseJsonValue(const std::string& text) {
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !(j.is_object() || j.is_array())) return std::nullopt;
  return j;
}

// The end of the balanced {...} or [...] starting at `start`, honouring strings and escapes.
std::optional<size_t> BalancedEnd(const std::string& text, size_t start) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = start; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return i;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<Json> ExtractJson(const std::string& text) {
  if (auto whole = ParseJsonValue(text)) return whole;
  // Fenced blocks, ```json ones first.
  std::vector<std::pair<std::string, std::string>> fences;  // (info string, body)
  size_t pos = 0;
  while ((pos = text.find("```", pos)) != std::string::npos) {
    size_t info_end = text.find('\n', pos + 3);
    if (info_end == std::string::npos) break;
    size_t close = text.find("```", info_end + 1);
    if (close == std::string::npos) break;
    fences.emplace_back(text.substr(pos + 3, info_end - pos - 3),
                        text.substr(info_end + 1, close - info_end - 1));
    pos = close + 3;
  }
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& [info, body] : fences) {
      bool is_json = info.find("json") != std::string::npos;
      if ((pass == 0) != is_json) continue;
      if (auto j = ParseJsonValue(body)) return j;
    }
  }
  // The first balanced object or array that parses.
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '{' && text[i] != '[') continue;
    if (auto end = BalancedEnd(text, i)) {
      if (auto j = ParseJsonValue(text.substr(i, *end - i + 1))) return j;
    }
  }
  return std::nullopt;
}

}  // namespace kernelpro::llm
