#include "llm/config.h"

#include <toml++/toml.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace kernelpro::llm {
namespace {

const std::set<std::string> kProviders = {"openai", "anthropic", "bedrock", "replay"};

// What each numeric key accepts. A timeout of NaN or infinity would never fire (and overflows the
// milliseconds it is converted to); a count below 1 would never send anything.
struct NumericKey {
  const char* key;
  double min, max;
  bool min_exclusive;  // (min, max] rather than [min, max]
};
constexpr NumericKey kConnectTimeout{"connect_timeout_s", 0, 3600, true};
constexpr NumericKey kTimeout{"timeout_s", 0, 86400, true};
constexpr NumericKey kMaxAttempts{"max_attempts", 1, 100, false};
constexpr NumericKey kMaxConcurrency{"max_concurrency", 1, 1024, false};
constexpr NumericKey kMaxTokensCap{"max_tokens_cap", 1, 10'000'000, false};

// The shortest text that reads back as `v`, whole numbers in full: 4294967297, -1.5, nan, inf.
std::string Shortest(double v) {
  char text[400];
  const bool whole = std::isfinite(v) && v == std::floor(v);
  auto [end, error] = whole ? std::to_chars(text, text + sizeof text, v, std::chars_format::fixed)
                            : std::to_chars(text, text + sizeof text, v);
  return error == std::errc() ? std::string(text, end) : "?";
}

Status CheckNumber(const std::string& where, const NumericKey& k, double value) {
  const bool above_min = k.min_exclusive ? value > k.min : value >= k.min;
  if (std::isfinite(value) && above_min && value <= k.max) return Status::Ok();
  return Status::InvalidArgument(where + "'" + k.key + "' = " + Shortest(value) +
                                 " is not accepted: give a finite number " +
                                 (k.min_exclusive ? "> " : "from ") + Shortest(k.min) +
                                 (k.min_exclusive ? " and <= " : " to ") + Shortest(k.max));
}

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
  if (!c.base_url.empty() && !c.base_url.starts_with("http://") &&
      !c.base_url.starts_with("https://")) {
    return Status::InvalidArgument(where + "base URL '" + c.base_url +
                                   "' must start with http:// or https://");
  }
  if (c.replay_mode != "fingerprint" && c.replay_mode != "sequential") {
    return Status::InvalidArgument(where + "replay_mode must be fingerprint or sequential, not '" +
                                   c.replay_mode + "'");
  }
  for (const auto& [key, value] :
       {std::pair{&kConnectTimeout, c.connect_timeout_s}, std::pair{&kTimeout, c.timeout_s},
        std::pair{&kMaxAttempts, static_cast<double>(c.max_attempts)},
        std::pair{&kMaxConcurrency, static_cast<double>(c.max_concurrency)},
        std::pair{&kMaxTokensCap, static_cast<double>(c.max_tokens_cap)}}) {
    if (Status s = CheckNumber(where, *key, value); !s.ok()) return s;
  }
  if (c.allow_insecure_key && c.base_url.empty()) {
    return Status::InvalidArgument(
        where + "'allow_insecure_key' allows the profile's own base_url; give base_url");
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
    auto num = [&](double& field, const NumericKey& limits) -> Status {
      auto v = value.value<double>();
      if (!v) return bad_type("a number");
      field = *v;
      return CheckNumber(where, limits, field);
    };
    auto integer = [&](int& field, const NumericKey& limits) -> Status {
      auto v = value.value<int64_t>();
      if (!v || !value.is_integer()) return bad_type("an integer");
      // Checked before narrowing to int, so 2^32 + 1 is refused rather than read as 1.
      if (Status s = CheckNumber(where, limits, static_cast<double>(*v)); !s.ok()) return s;
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
      s = num(c.connect_timeout_s, kConnectTimeout);
    else if (key == "timeout_s")
      s = num(c.timeout_s, kTimeout);
    else if (key == "max_attempts")
      s = integer(c.max_attempts, kMaxAttempts);
    else if (key == "max_concurrency")
      s = integer(c.max_concurrency, kMaxConcurrency);
    else if (key == "max_tokens_cap")
      s = integer(c.max_tokens_cap, kMaxTokensCap);
    else if (key == "structured_output" || key == "allow_insecure_key") {
      auto v = value.value<bool>();
      if (!v || !value.is_boolean())
        s = bad_type("true or false");
      else
        (key == "structured_output" ? c.structured_output : c.allow_insecure_key) = *v;
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
  if (c.allow_insecure_key) j["allow_insecure_key"] = true;
  if (!c.region.empty()) j["region"] = c.region;
  if (!c.record_to.empty()) j["record_to"] = c.record_to;
  return j;
}

Json ToJson(const LlmConfig& c) {
  return Json{{"provider", c.provider},
              {"model", c.model},
              {"base_url", c.base_url},
              {"api_key_env", c.api_key_env},
              {"allow_insecure_key", c.allow_insecure_key},
              {"region", c.region},
              {"aws_profile", c.aws_profile},
              {"structured_output", c.structured_output},
              {"replay_mode", c.replay_mode},
              {"record_to", c.record_to},
              {"prices_file", c.prices_file},
              {"connect_timeout_s", c.connect_timeout_s},
              {"timeout_s", c.timeout_s},
              {"max_attempts", c.max_attempts},
              {"max_concurrency", c.max_concurrency},
              {"max_tokens_cap", c.max_tokens_cap}};
}

LlmConfig LlmConfigFromJson(const Json& j) {
  LlmConfig c;
  c.provider = JsonGet<std::string>(j, "provider", c.provider);
  c.model = JsonGet<std::string>(j, "model", c.model);
  c.base_url = JsonGet<std::string>(j, "base_url", c.base_url);
  c.api_key_env = JsonGet<std::string>(j, "api_key_env", c.api_key_env);
  // Stored from the profile that started the run, so `resume` sends the key where that profile
  // allowed it; a new --llm on resume replaces the whole config and with it this.
  c.allow_insecure_key = JsonGet<bool>(j, "allow_insecure_key", c.allow_insecure_key);
  c.region = JsonGet<std::string>(j, "region", c.region);
  c.aws_profile = JsonGet<std::string>(j, "aws_profile", c.aws_profile);
  c.structured_output = JsonGet<bool>(j, "structured_output", c.structured_output);
  c.replay_mode = JsonGet<std::string>(j, "replay_mode", c.replay_mode);
  c.record_to = JsonGet<std::string>(j, "record_to", c.record_to);
  c.prices_file = JsonGet<std::string>(j, "prices_file", c.prices_file);
  c.connect_timeout_s = JsonGet<double>(j, "connect_timeout_s", c.connect_timeout_s);
  c.timeout_s = JsonGet<double>(j, "timeout_s", c.timeout_s);
  c.max_attempts = JsonGet<int>(j, "max_attempts", c.max_attempts);
  c.max_concurrency = JsonGet<int>(j, "max_concurrency", c.max_concurrency);
  c.max_tokens_cap = JsonGet<int>(j, "max_tokens_cap", c.max_tokens_cap);
  return c;
}

}  // namespace kernelpro::llm
