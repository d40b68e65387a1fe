// The extension point for language models: one Backend per provider protocol.
//
// A Backend performs one exchange: it translates an llm::Request into its provider's wire form,
// sends it, and translates the reply back, classifying any failure as an llm::Error. It does not
// retry, wait, recover from truncation or count money; decorators do that for every provider
// alike (client.h: retries with backoff, a concurrency bound, the exchange hook; recovery.h:
// truncation recovery; cassette.h: record and replay). Backends are safe to call from several
// threads at once.
#pragma once

#include <memory>
#include <string>

#include "llm/types.h"

namespace kernelpro::llm {

class Backend {
 public:
  virtual ~Backend() = default;
  // "openai", "anthropic", "bedrock", "replay", ...
  virtual std::string provider() const = 0;
  // The model the requests ask for.
  virtual std::string model() const = 0;
  // One exchange. Never throws.
  virtual Outcome Complete(const Request& request) = 0;
};

// Whether the provider's protocol has a sampling seed (Request::seed): false for "anthropic" and
// "bedrock", whose APIs have none (their backends leave the seed out); true for the others.
inline bool ProviderTakesSeed(const std::string& provider) {
  return provider != "anthropic" && provider != "bedrock";
}

}  // namespace kernelpro::llm
