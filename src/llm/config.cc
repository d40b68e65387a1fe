#include "llm/config.h"

#include <toml++/toml.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace kernelpro::llm {
namespace {

const std::set<std::string> kProviders = {"openai", "anthropic", "bedrock", "replay"};

Status Validate(const LlmConfig& c, const std::string& where) {
  if (!kProviders.contains(c.provider)) {
    return Status::InvalidArgument(where + "unknown provider '" + c.provider +
                                   "' (known: openai, anthropic, bedrock, replay)");
  }
  if (c.model.empty()) {
    return Status::InvalidArgument(where + (c.provider == "replay"
                                                ? "replay needs a cassette path (replay:PATH)"
                                                : "no model given (" + c.provider + ":MODEL)"));
  }
  if (!c.base_url.empty() && c.base_url.rfind("http://", 0) != 0 &&
      c.base_url.rfind("https://", 0) != 0) {
    return Status::InvalidArgument(where + "base URL '" + c.base_url +
                                   "' must start with http:// or https://");
  }
  if (c.replay_mode != "fingerprint" && c.replay_mode != "sequential") {
    return Status::InvalidArgument(where + "replay_mode must be fingerprint or sequential, not '" +
                                   c.replay_mode + "'");
  }
  if (c.timeout_s <= 0 || c.connect_timeout_s <= 0) {
    return Status::InvalidArgument(where + "timeouts must be positive");
  }
  if (c.max_attempts < 1 || c.max_concurrency < 1 || c.max_tokens_cap < 1) {
    return Status::InvalidArgument(where +
                                   "max_attempts, max_concurrency and max_tokens_cap must be >= 1");
  }
  return Status::Ok();
}

}  // namespace

Result<LlmConfig> ParseLlmSpec(const std::string& spec) {
  auto colon = spec.find(':');
  if (colon == std::string::npos) {
    return Status::InvalidArgument("--llm '" + spec +
                                   "': expected PROVIDER:MODEL[@BASE_URL], e.g. openai:gpt-4o or "
                                   "openai:my-model@http://127.0.0.1:8080/v1");
  }
  LlmConfig c;
  c.provider = spec.substr(0, colon);
  std::string rest = spec.substr(colon + 1);
  if (c.provider == "replay") {
    c.model = rest;  // a path; '@' may be part of it
  } else if (auto at = rest.find('@'); at != std::string::npos) {
    c.model = rest.substr(0, at);
    c.base_url = rest.substr(at + 1);
    if (c.base_url.empty()) return Status::InvalidArgument("--llm '" + spec + "': empty base URL");
  } else {
    c.model = rest;
  }
  if (Status s = Validate(c, "--llm '" + spec + "': "); !s.ok()) return s;
  return c;
}

Result<LlmConfig> LoadLlmProfile(const std::string& path, const std::string& name) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("LLM profile file " + path + " cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  toml::table root;
  try {
    root = toml::parse(text.str(), path);
  } catch (const toml::parse_error& e) {
    std::ostringstream msg;
    msg << path << ":" << e.source().begin.line << ": " << e.description();
    return Status::InvalidArgument(msg.str());
  }
  const toml::table* profiles = root["profiles"].as_table();
  if (profiles == nullptr) {
    return Status::InvalidArgument(path + ": no [profiles.NAME] tables");
  }
  const toml::table* p = (*profiles)[name].as_table();
  if (p == nullptr) {
    std::string known;
    for (const auto& [k, v] : *profiles)
      known += (known.empty() ? "" : ", ") + std::string(k.str());
    return Status::NotFound(path + ": no profile '" + name + "' (it has: " + known + ")");
  }
  const std::string where = path + ", profile '" + name + "': ";
  LlmConfig c;
  for (const auto& [key_node, value] : *p) {
    const std::string key(key_node.str());
    auto bad_type = [&](const char* want) {
      return Status::InvalidArgument(where + "'" + key + "' must be " + want);
    };
    auto str = [&](std::string& field) -> Status {
      auto v = value.value<std::string>();
      if (!v) return bad_type("a string");
      field = *v;
      return Status::Ok();
    };
    auto num = [&](double& field) -> Status {
      auto v = value.value<double>();
      if (!v) return bad_type("a number");
      field = *v;
      return Status::Ok();
    };
    auto integer = [&](int& field) -> Status {
      auto v = value.value<int64_t>();
      if (!v || !value.is_integer()) return bad_type("an integer");
      field = static_cast<int>(*v);
      return Status::Ok();
    };
    Status s;
    if (key == "provider")
      s = str(c.provider);
    else if (key == "model")
      s = str(c.model);
    else if (key == "base_url")
      s = str(c.base_url);
    else if (key == "api_key_env")
      s = str(c.api_key_env);
    else if (key == "region")
      s = str(c.region);
    else if (key == "aws_profile")
      s = str(c.aws_profile);
    else if (key == "replay_mode")
      s = str(c.replay_mode);
    else if (key == "record_to")
      s = str(c.record_to);
    else if (key == "prices_file")
      s = str(c.prices_file);
    else if (key == "connect_timeout_s")
      s = num(c.connect_timeout_s);
    else if (key == "timeout_s")
      s = num(c.timeout_s);
    else if (key == "max_attempts")
      s = integer(c.max_attempts);
    else if (key == "max_concurrency")
      s = integer(c.max_concurrency);
    else if (key == "max_tokens_cap")
      s = integer(c.max_tokens_cap);
    else if (key == "structured_output") {
      auto v = value.value<bool>();
      if (!v)
        s = bad_type("true or false");
      else
        c.structured_output = *v;
    } else if (key == "api_key") {
      s = Status::InvalidArgument(where +
                                  "keys do not belong in profile files; name the environment "
                                  "variable that holds it with api_key_env");
    } else {
      s = Status::InvalidArgument(where + "unknown key '" + key + "'");
    }
    if (!s.ok()) return s;
  }
  if (Status s = Validate(c, where); !s.ok()) return s;
  return c;
}

Json DescribeLlmConfig(const LlmConfig& c) {
  Json j = {{"provider", c.provider}, {"model", c.model}};
  if (!c.base_url.empty()) j["base_url"] = c.base_url;
  if (!c.api_key_env.empty()) j["api_key_env"] = c.api_key_env;
  if (!c.region.empty()) j["region"] = c.region;
  if (!c.record_to.empty()) j["record_to"] = c.record_to;
  return j;
}

}  // namespace kernelpro::llm
