// The one form in which kernelpro talks to any language model.
//
// Agents build an llm::Request (system prompt, messages, tool definitions as JSON Schema, tool
// results, sampling limits, an optional response JSON Schema) and get an llm::Response back (text,
// tool calls, a normalised stop reason, token counts, latency). Each provider translates this form
// to its own protocol at the edge (openai.cc, anthropic.cc, bedrock.cc) and nowhere else. Failures
// are llm::Error values with a kind the retry and recovery layers act on; exceptions never leave
// this module. All types are plain values: copy them freely across threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/status.h"

namespace kernelpro::llm {

enum class Role { kUser, kAssistant, kTool };

// A function the model may call. `input_schema` is a JSON Schema object for the arguments.
struct ToolDefinition {
  std::string name;
  std::string description;
  Json input_schema = Json::object();
};

// The model asking for a call. `id` pairs it with its ToolResult (providers that have no ids
// get synthetic ones, "call_0", "call_1", ...).
struct ToolCall {
  std::string id;
  std::string name;
  Json arguments = Json::object();
};

struct ToolResult {
  std::string tool_call_id;
  std::string name;     // the tool that was called (Bedrock and some servers want it)
  std::string content;  // what the handler returned, as text (JSON is passed as its dump)
  bool is_error = false;
};

// One turn. kUser and kAssistant carry text; an assistant turn may also carry tool calls; a
// kTool turn carries exactly one tool result (providers that group results per turn, such as
// Anthropic and Bedrock, merge consecutive kTool turns).
struct Message {
  Role role = Role::kUser;
  std::string text;
  std::vector<ToolCall> tool_calls;
  std::optional<ToolResult> tool_result;

  static Message User(std::string text);
  static Message Assistant(std::string text, std::vector<ToolCall> calls = {});
  static Message Tool(ToolResult result);
};

// Ask for a JSON answer that validates against `schema`. Backends use the provider's structured
// output where the server supports it; otherwise the schema is put in the prompt and the JSON is
// extracted from the reply (ExtractJson).
struct ResponseSchema {
  std::string name = "response";
  Json schema = Json::object();
};

// Whether the model may (kAuto), must (kRequired: some tool; kNamed: tool_choice_name) or must
// not (kNone) call a tool in its next turn.
enum class ToolChoice { kAuto, kRequired, kNone, kNamed };

struct Request {
  std::string system;
  std::vector<Message> messages;
  std::vector<ToolDefinition> tools;
  ToolChoice tool_choice = ToolChoice::kAuto;  // only meaningful with tools
  std::string tool_choice_name;                // for kNamed
  int max_tokens = 4096;
  std::optional<double> temperature;  // unset: the server's default
  std::vector<std::string> stop;      // stop sequences
  std::optional<ResponseSchema> response_schema;
  // Sampling seed; unset: none is sent (the server draws its own). Sent by the OpenAI-compatible
  // backend ("seed": vLLM, SGLang, llama.cpp's server and OpenAI take it); the Anthropic and
  // Bedrock APIs have no such parameter, so there it only goes into cassettes. The same seed makes
  // a server's sampling repeatable as far as its batching and kernels allow, not bit-exact.
  std::optional<std::uint64_t> seed;
};

// Why the model stopped writing its reply, normalised across providers (the run's own
// search::StopReason is another thing). Stored as "end", "length", "tool_use", "refusal" under
// the JSON key "stop_reason" in cassettes and run stores, which is why Response keeps that name.
enum class FinishReason { kEnd, kLength, kToolUse, kRefusal };

struct Usage {
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
};

struct Response {
  std::string text;
  std::vector<ToolCall> tool_calls;
  FinishReason stop_reason = FinishReason::kEnd;
  std::string provider_stop_reason;  // as the server said it ("stop", "end_turn", "max_tokens")
  Usage usage;
  double latency_ms = 0;
  std::string model;               // as the server reported it, or the configured one
  std::optional<Json> structured;  // the parsed JSON when response_schema was asked for
  int attempts = 1;                // HTTP attempts it took (retries included)
};

// Why an exchange failed. The kind decides what happens next: the retry layer retries
// kConnection, kTimeout, kRateLimited and kServer; truncation recovery acts on kTruncated; every
// other kind goes straight back to the caller.
enum class ErrorKind {
  kConnection,   // could not connect, connection reset
  kTimeout,      // connect or total timeout
  kRateLimited,  // HTTP 429
  kServer,       // HTTP 5xx
  kAuth,         // HTTP 401 / 403, or no credentials
  kBadRequest,   // any other HTTP 4xx
  kMalformed,    // the body is empty, not JSON, or not the protocol's shape
  kTruncated,    // still cut off at the token limit after recovery
  kReplayMiss,   // a replay cassette has no answer for this request
  kConfig,       // unknown provider, missing model, unreadable profile
  kBudget,       // a spending or call budget would be exceeded
};

struct Error {
  ErrorKind kind = ErrorKind::kMalformed;
  std::string message;
  int http_status = 0;                  // 0 when no HTTP response was received
  std::optional<double> retry_after_s;  // from a Retry-After header
  int attempts = 1;
  // kMalformed about a reply's content (a final answer without the JSON that was asked for): the
  // reply's text, so a caller can still read it its own way.
  std::string reply_text;

  bool retryable() const;
  // True when asking again cannot help until the user changes something: a replay cassette with
  // no answer (spent, or a request it never recorded), credentials refused (kAuth: HTTP 401 or
  // 403), no such model (HTTP 404), a configuration or budget error. A run stops on one rather
  // than fail every iteration left; anything else (429 and 5xx after retries, timeouts, a
  // malformed or truncated reply, another 4xx) may pass on the next request.
  bool permanent() const;
  // "rate limited (HTTP 429): ..." — what a user reads.
  std::string ToString() const;
  Status ToStatus() const;
};

inline Error MakeError(ErrorKind kind, std::string message, int http_status = 0) {
  Error e;
  e.kind = kind;
  e.message = std::move(message);
  e.http_status = http_status;
  return e;
}

// Either a Response or an Error.
class Outcome {
 public:
  Outcome(Response r) : response_(std::move(r)) {}  // NOLINT: implicit by design
  Outcome(Error e) : error_(std::move(e)) {}        // NOLINT: implicit by design
  bool ok() const { return response_.has_value(); }
  const Response& response() const { return *response_; }
  Response& response() { return *response_; }
  const Error& error() const { return error_; }
  Error& error() { return error_; }

 private:
  std::optional<Response> response_;
  Error error_;
};

std::string ToString(Role role);
std::string ToString(FinishReason reason);
std::string ToString(ToolChoice choice);
std::string ToString(ErrorKind kind);
std::optional<Role> ParseRole(const std::string& text);
std::optional<FinishReason> ParseFinishReason(const std::string& text);
std::optional<ToolChoice> ParseToolChoice(const std::string& text);
std::optional<ErrorKind> ParseErrorKind(const std::string& text);

// Lossless JSON forms (cassettes, the run store, tests). FromJson reads what ToJson wrote and
// fails with a message naming the bad field.
Json ToJson(const Request& request);
Json ToJson(const Response& response);
Json ToJson(const Error& error);
Result<Request> RequestFromJson(const Json& json);
Result<Response> ResponseFromJson(const Json& json);
Result<Error> ErrorFromJson(const Json& json);

// The first JSON value in a model's free-text reply: a ```json fenced block, any fenced block
// that parses, or the first balanced {...} / [...] that parses. nullopt when there is none.
std::optional<Json> ExtractJson(const std::string& text);

}  // namespace kernelpro::llm
