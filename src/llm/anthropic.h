// The Anthropic Messages backend: api.anthropic.com and servers that speak its protocol.
//
// One Complete is one POST to {base_url}/v1/messages. The protocol wants user and assistant turns
// to alternate and carries tool results as blocks inside a user turn, so consecutive kTool
// messages (and the user text after them) become one user message. Anthropic has no
// response_format: a response_schema always goes into the system prompt and the JSON is
// extracted from the reply (structured.h). The backend keeps no state between calls and is safe
// to call from several threads at once.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "llm/backend.h"
#include "llm/http.h"
#include "llm/types.h"

namespace kernelpro::llm {

struct AnthropicOptions {
  // The API root; "/v1/messages" is appended.
  std::string base_url = "https://api.anthropic.com";
  // The "model" field of every request, e.g. "claude-sonnet-4-5".
  std::string model;
  // Sent as "x-api-key"; empty: no key header (a local proxy that adds its own).
  std::string api_key;
  // The "anthropic-version" header: the protocol version the request and reply are written in.
  std::string version = "2023-06-01";
  // To establish the connection.
  std::chrono::milliseconds connect_timeout{10'000};
  // For one whole HTTP exchange; long, since a large completion is slow.
  std::chrono::milliseconds total_timeout{600'000};
};

// `transport`: nullptr for the libcurl transport; tests pass their own.
std::unique_ptr<Backend> MakeAnthropicBackend(const AnthropicOptions& options,
                                              std::shared_ptr<HttpTransport> transport);

// The request body for `request`, as sent (exposed for golden tests).
Json AnthropicRequestBody(const Request& request, const std::string& model);

// The Response in an HTTP reply (exposed for tests on recorded replies): a non-2xx status becomes
// HttpStatusError, a body that is empty, not JSON or without content a kMalformed error. It does
// not fill `structured` (it does not know whether a schema was asked for) or latency.
Outcome ParseAnthropicResponse(const HttpResponse& response);

}  // namespace kernelpro::llm
