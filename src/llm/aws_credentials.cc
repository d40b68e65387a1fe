#include "llm/aws_credentials.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "core/text.h"

namespace kernelpro::llm {
namespace {

using IniSections = std::map<std::string, std::map<std::string, std::string>>;

// The AWS CLI's INI dialect: [section] headers, `key = value` lines, whole-line comments with '#'
// or ';', keys without case. A key with an empty value opens a nested block ("s3 =" followed by
// indented lines) that holds no credentials and is skipped. Inline comments are not stripped,
// since the CLI keeps them as part of the value too.
IniSections ParseIni(const std::string& text) {
  IniSections sections;
  std::string section;
  bool in_nested_block = false;
  std::istringstream lines(text);
  std::string raw;
  while (std::getline(lines, raw)) {
    std::string line(Trim(raw));
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    bool indented = std::isspace(static_cast<unsigned char>(raw[0]));
    if (line.front() == '[' && line.back() == ']') {
      section = std::string(Trim(line.substr(1, line.size() - 2)));
      sections[section];
      in_nested_block = false;
      continue;
    }
    if (in_nested_block && indented) continue;
    size_t equals = line.find('=');
    if (equals == std::string::npos || section.empty()) continue;
    std::string key = Lower(Trim(line.substr(0, equals)));
    std::string value(Trim(line.substr(equals + 1)));
    in_nested_block = value.empty();
    if (!in_nested_block) sections[section][key] = value;
  }
  return sections;
}

std::optional<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string Get(const std::map<std::string, std::string>& keys, const std::string& name) {
  auto it = keys.find(name);
  return it == keys.end() ? "" : it->second;
}

// Settings that mean the profile's keys come from somewhere kernelpro does not go.
constexpr const char* kIndirectKeys[] = {"credential_process", "sso_session",
                                         "sso_start_url",      "role_arn",
                                         "source_profile",     "web_identity_token_file"};

// One file to look in: where, and the section name the profile has there.
struct Place {
  std::string path;
  std::string section;
};

}  // namespace

Result<AwsCredentials> LoadAwsCredentials(const std::string& profile) {
  return LoadAwsCredentials(profile, ProcessEnvironment());
}

Result<AwsCredentials> LoadAwsCredentials(const std::string& profile, const EnvLookup& getenv) {
  auto env = [&](const char* name) { return getenv(name).value_or(""); };

  std::vector<std::string> looked;
  if (profile.empty()) {
    std::string key_id = env("AWS_ACCESS_KEY_ID");
    std::string secret = env("AWS_SECRET_ACCESS_KEY");
    if (!key_id.empty() && !secret.empty()) {
      return AwsCredentials{key_id, secret, env("AWS_SESSION_TOKEN")};
    }
    if (!key_id.empty() || !secret.empty()) {
      return Status::InvalidArgument(
          std::string("AWS credentials: ") +
          (key_id.empty() ? "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not"
                          : "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"));
    }
    looked.push_back("AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (not set)");
  }

  std::string name = !profile.empty() ? profile : env("AWS_PROFILE");
  if (name.empty()) name = "default";
  const std::string home = env("HOME");
  auto expand = [&](std::string path) {
    if (path.starts_with("~/") && !home.empty()) path = home + path.substr(1);
    return path;
  };
  std::string credentials_file = expand(env("AWS_SHARED_CREDENTIALS_FILE"));
  std::string config_file = expand(env("AWS_CONFIG_FILE"));
  if (credentials_file.empty() && !home.empty()) credentials_file = home + "/.aws/credentials";
  if (config_file.empty() && !home.empty()) config_file = home + "/.aws/config";

  // The credentials file names sections after the profile; the config file says "profile NAME"
  // except for the default profile. The CLI reads keys from both, the credentials file first.
  std::vector<Place> places;
  if (!credentials_file.empty()) places.push_back({credentials_file, name});
  if (!config_file.empty()) {
    places.push_back({config_file, name == "default" ? name : "profile " + name});
  }
  if (places.empty()) looked.push_back("no credentials file (HOME is not set)");

  for (const Place& place : places) {
    std::optional<std::string> text = ReadWholeFile(place.path);
    if (!text) {
      std::error_code ignored;
      looked.push_back(place.path + (std::filesystem::exists(place.path, ignored)
                                         ? " (cannot be read)"
                                         : " (does not exist)"));
      continue;
    }
    IniSections sections = ParseIni(*text);
    auto it = sections.find(place.section);
    if (it == sections.end()) {
      std::string there;
      for (const auto& [section, keys] : sections) there += (there.empty() ? "" : ", ") + section;
      looked.push_back(place.path + " (no [" + place.section +
                       "]; it has: " + (there.empty() ? "nothing" : there) + ")");
      continue;
    }
    const auto& keys = it->second;
    AwsCredentials credentials{Get(keys, "aws_access_key_id"), Get(keys, "aws_secret_access_key"),
                               Get(keys, "aws_session_token")};
    if (credentials.session_token.empty()) {
      credentials.session_token = Get(keys, "aws_security_token");  // the older name
    }
    if (!credentials.access_key_id.empty() && !credentials.secret_access_key.empty()) {
      return credentials;
    }
    const std::string where = "AWS profile '" + name + "' in " + place.path;
    if (!credentials.access_key_id.empty() || !credentials.secret_access_key.empty()) {
      return Status::InvalidArgument(where + " has " +
                                     (credentials.access_key_id.empty()
                                          ? "aws_secret_access_key but no aws_access_key_id"
                                          : "aws_access_key_id but no aws_secret_access_key"));
    }
    for (const char* indirect : kIndirectKeys) {
      if (keys.count(indirect)) {
        return Status::InvalidArgument(
            where + " gets its keys through " + indirect +
            ", which kernelpro does not run; export static keys first, e.g. `eval \"$(aws "
            "configure export-credentials --profile " +
            name + " --format env)\"`");
      }
    }
    looked.push_back(place.path + " ([" + place.section + "] has no aws_access_key_id)");
  }

  std::string message = "no AWS credentials for profile '" + name + "'; looked in: ";
  for (size_t i = 0; i < looked.size(); ++i) message += (i ? "; " : "") + looked[i];
  return Status::NotFound(message);
}

}  // namespace kernelpro::llm
