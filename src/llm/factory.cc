#include "llm/factory.h"

#include <algorithm>

#include "llm/anthropic.h"
#include "llm/aws_credentials.h"
#include "llm/bedrock.h"
#include "llm/cassette.h"
#include "llm/key_policy.h"
#include "llm/openai.h"
#include "llm/recovery.h"

namespace kernelpro::llm {
namespace {

std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
}

// The provider backend alone; nullptr with an error when a key or credential is missing.
Result<std::unique_ptr<Backend>> MakeProvider(const LlmConfig& c, const BackendDependencies& d) {
  auto key = [&]() -> std::string {
    const std::string var = ApiKeyVariable(c);
    if (var.empty()) return "";
    return d.env(var).value_or("");
  };
  if (c.provider == "openai") {
    OpenAiOptions o;
    if (!c.base_url.empty()) o.base_url = c.base_url;
    o.model = c.model;
    o.api_key = key();
    // The public API always needs a key; a local server usually does not.
    if (o.api_key.empty() && c.base_url.empty()) {
      return Status::InvalidArgument("openai: set " + ApiKeyVariable(c) +
                                     " (or give a base URL for a local OpenAI-compatible server)");
    }
    if (!o.api_key.empty()) {
      Status where = CheckKeyDestination(o.base_url, ApiKeyVariable(c), c.allow_insecure_key);
      if (!where.ok()) return Status::InvalidArgument("openai: " + where.message());
    }
    o.structured_output = c.structured_output;
    o.connect_timeout = Millis(c.connect_timeout_s);
    o.total_timeout = Millis(c.timeout_s);
    return MakeOpenAiBackend(o, d.transport);
  }
  if (c.provider == "anthropic") {
    AnthropicOptions o;
    if (!c.base_url.empty()) o.base_url = c.base_url;
    o.model = c.model;
    o.api_key = key();
    if (o.api_key.empty() && c.base_url.empty()) {
      return Status::InvalidArgument("anthropic: set " + ApiKeyVariable(c));
    }
    if (!o.api_key.empty()) {
      Status where = CheckKeyDestination(o.base_url, ApiKeyVariable(c), c.allow_insecure_key);
      if (!where.ok()) return Status::InvalidArgument("anthropic: " + where.message());
    }
    o.connect_timeout = Millis(c.connect_timeout_s);
    o.total_timeout = Millis(c.timeout_s);
    return MakeAnthropicBackend(o, d.transport);
  }
  if (c.provider == "bedrock") {
    BedrockOptions o;
    o.region = !c.region.empty()
                   ? c.region
                   : d.env("AWS_REGION").value_or(d.env("AWS_DEFAULT_REGION").value_or(""));
    if (o.region.empty()) {
      return Status::InvalidArgument(
          "bedrock: no region (set region in the profile, or AWS_REGION / AWS_DEFAULT_REGION)");
    }
    o.model = c.model;
    o.base_url = c.base_url;
    // The default endpoint is https by construction; a custom one (a VPC endpoint, a proxy) is
    // held to the same rule as any key.
    if (!o.base_url.empty()) {
      Status where = CheckKeyDestination(o.base_url, "AWS credentials", c.allow_insecure_key);
      if (!where.ok()) return Status::InvalidArgument("bedrock: " + where.message());
    }
    auto credentials = LoadAwsCredentials(c.aws_profile, d.env);
    if (!credentials.ok())
      return Status::InvalidArgument("bedrock: " + credentials.status().message());
    o.credentials = *credentials;
    o.connect_timeout = Millis(c.connect_timeout_s);
    o.total_timeout = Millis(c.timeout_s);
    return MakeBedrockBackend(o, d.transport);
  }
  return Status::InvalidArgument("unknown provider '" + c.provider + "'");
}

}  // namespace

Status CheckServerReachable(const LlmConfig& config, HttpTransport& transport,
                            std::chrono::milliseconds timeout) {
  std::string url;
  if (config.provider == "openai") {
    url = WithoutTrailingSlashes(config.base_url.empty() ? OpenAiOptions{}.base_url
                                                         : config.base_url) +
          "/models";
  } else if (config.provider == "anthropic") {
    url = WithoutTrailingSlashes(config.base_url.empty() ? AnthropicOptions{}.base_url
                                                         : config.base_url);
  } else {
    return Status::Ok();
  }
  HttpRequest request;
  request.method = "GET";
  request.url = url;
  request.connect_timeout = timeout;
  request.total_timeout = timeout;
  HttpResult result = transport.Send(request);
  if (result.ok()) return Status::Ok();
  std::string reason = result.error().message;
  if (reason.starts_with(url + ": ")) reason = reason.substr(url.size() + 2);  // said once
  return Status::Unavailable("cannot reach the model's server at " + url + ": " + reason +
                             "; is it running, and is the URL right?");
}

std::string ApiKeyVariable(const LlmConfig& config) {
  if (!config.api_key_env.empty()) return config.api_key_env;
  if (config.provider == "openai") return "OPENAI_API_KEY";
  if (config.provider == "anthropic") return "ANTHROPIC_API_KEY";
  return "";
}

Result<std::unique_ptr<Backend>> MakeBackend(const LlmConfig& config,
                                             BackendDependencies dependencies) {
  if (!dependencies.env) dependencies.env = ProcessEnvironment();
  if (!dependencies.transport) dependencies.transport = MakeCurlTransport();
  ClientOptions client;
  client.max_attempts = config.max_attempts;
  client.max_concurrency = config.max_concurrency;
  client.on_exchange = dependencies.on_exchange;
  client.sleep = dependencies.sleep;
  if (config.provider == "replay") {
    std::map<std::string, size_t> skip;
    for (const auto& [stream, n] : config.replay_skip) skip[stream] = std::max(0, n);
    auto replay = MakeReplayBackend(
        config.model,
        config.replay_mode == "sequential" ? ReplayMode::kSequential : ReplayMode::kFingerprint, "",
        std::move(skip));
    if (!replay.ok()) return replay.status();
    client.max_attempts = 1;  // a cassette answers the same way every time
    return MakeReliableBackend(std::move(*replay), std::move(client));
  }
  if (!config.prices_file.empty()) {
    auto prices = PriceTable::FromTomlFile(config.prices_file);
    if (!prices.ok()) return prices.status();
    client.prices = std::move(*prices);
  }
  auto provider = MakeProvider(config, dependencies);
  if (!provider.ok()) return provider.status();
  std::unique_ptr<Backend> backend = MakeReliableBackend(std::move(*provider), std::move(client));
  if (dependencies.recover_truncation) {
    RecoveryOptions recovery;
    recovery.max_tokens_cap = config.max_tokens_cap;
    backend = MakeTruncationRecoveringBackend(std::move(backend), recovery);
  }
  if (config.record_to.empty()) return backend;
  return MakeRecordingBackend(std::move(backend), config.record_to);
}

}  // namespace kernelpro::llm
