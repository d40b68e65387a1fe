// The OpenAI Chat Completions backend: api.openai.com and the OpenAI-compatible servers that
// serve local models (llama.cpp's llama-server, vLLM, Ollama, ...).
//
// One Complete is one POST to {base_url}/chat/completions (two when the server rejects
// response_format, see below). Structured output uses response_format json_schema; a server that
// rejects it is remembered for the life of the backend, and that request and every later one use
// the schema-in-the-prompt fallback (structured.h) instead, so a local server costs one wasted
// call, not one per request. The backend is safe to call from several threads at once; the
// remembered rejection is the only state it keeps.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "llm/backend.h"
#include "llm/http.h"
#include "llm/types.h"

namespace kernelpro::llm {

struct OpenAiOptions {
  // The API root; "/chat/completions" is appended. A local llama-server: "http://host:8080/v1".
  std::string base_url = "https://api.openai.com/v1";
  // The "model" field of every request. Local servers that serve one model ignore it.
  std::string model;
  // Sent as "Authorization: Bearer <key>"; empty: no Authorization header (local servers).
  std::string api_key;
  // Use response_format json_schema when a request has a response_schema; false: always put the
  // schema in the prompt (for servers known not to support it, saving the rejected first call).
  bool structured_output = true;
  // To establish the connection.
  std::chrono::milliseconds connect_timeout{10'000};
  // For one whole HTTP exchange; long, since a large completion from a local model is slow.
  std::chrono::milliseconds total_timeout{600'000};
};

// `transport`: nullptr for the libcurl transport; tests pass their own.
std::unique_ptr<Backend> MakeOpenAiBackend(const OpenAiOptions& options,
                                           std::shared_ptr<HttpTransport> transport);

// The request body for `request`, as sent (exposed for golden tests). `structured`: ask for the
// response_schema through response_format; false: append the schema instruction to the system
// prompt instead. Without a response_schema it makes no difference.
Json OpenAiRequestBody(const Request& request, const std::string& model, bool structured);

// The Response in an HTTP reply (exposed for tests on recorded replies): a non-2xx status becomes
// HttpStatusError, a body that is empty, not JSON or without choices a kMalformed error. It does
// not fill `structured` (it does not know whether a schema was asked for) or latency.
Outcome ParseOpenAiResponse(const HttpResponse& response);

}  // namespace kernelpro::llm
