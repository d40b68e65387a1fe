// From an LlmConfig to a ready Backend: the provider, then the layers every provider shares.
//
//   live:    Recording? ( TruncationRecovery ( Reliable ( provider ) ) )
//   replay:  Reliable ( Replay(cassette) )      one attempt, no network
//
// Recording sits outside so a cassette holds what the caller finally got for each request it
// made (after retries and truncation recovery), and replaying it reproduces a run exactly
// without paying twice. Keys are read here, from the environment variable the config names, and
// go only into the provider backend, and only when the base URL may receive them (key_policy.h).
// The returned backend is safe to use from several threads.
#pragma once

#include <functional>
#include <memory>

#include "llm/backend.h"
#include "llm/client.h"
#include "llm/config.h"
#include "llm/environment.h"
#include "llm/http.h"

namespace kernelpro::llm {

struct BackendDependencies {
  EnvLookup env = ProcessEnvironment();              // where keys and AWS settings come from
  std::shared_ptr<HttpTransport> transport;          // nullptr: libcurl
  std::function<void(const Exchange&)> on_exchange;  // every finished request; may be empty
  // How the retry layer waits; unset: really sleep. Tests make waits instant.
  std::function<void(std::chrono::duration<double>)> sleep;
  // Retry a reply cut off at max_tokens with a bigger budget (paper §3.2.2). Off: a truncated
  // reply comes back as it is, with FinishReason::kLength.
  bool recover_truncation = true;
};

Result<std::unique_ptr<Backend>> MakeBackend(const LlmConfig& config,
                                             BackendDependencies dependencies = {});

// Whether the server `config` talks to answers at all, asked before a run is started on it: one GET
// of its base URL (an OpenAI-compatible server: BASE_URL/models) without a key, within
// `timeout`. Any HTTP answer (401 and 404 included) is reachable; no connection, or none in time,
// is Unavailable naming the URL: "cannot reach the model's server at URL: REASON; is it running?".
// Replay and Bedrock (its endpoint is AWS's, signed per request) are not probed: OK.
Status CheckServerReachable(const LlmConfig& config, HttpTransport& transport,
                            std::chrono::milliseconds timeout = std::chrono::seconds(5));

// The environment variable holding the API key for `config` ("" when none is needed: Bedrock
// signs with AWS credentials, replay needs nothing).
std::string ApiKeyVariable(const LlmConfig& config);

}  // namespace kernelpro::llm
