// AWS credentials and where kernelpro finds them: the environment, then the shared credentials
// file, in the order and with the names the AWS CLI uses, so a machine already set up for the CLI
// works unchanged.
//
// Only static keys are read (long-term keys or keys with a session token). Profiles that need a
// process to run (SSO, role assumption, credential_process) are reported as unsupported, with the
// CLI command that exports usable keys. The environment is read through a function argument, so
// tests never depend on the real environment. Safe to call from several threads at once.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "core/status.h"
#include "llm/environment.h"

namespace kernelpro::llm {

struct AwsCredentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // empty for long-term keys; set for temporary (STS) credentials
};

// The credentials the AWS CLI would use:
//   1. AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN), unless `profile` is
//      non-empty: as with `aws --profile`, a profile asked for by name wins over the environment;
//   2. the shared credentials file (AWS_SHARED_CREDENTIALS_FILE, else $HOME/.aws/credentials),
//      profile `profile`, else AWS_PROFILE, else "default".
// Failure is NotFound or InvalidArgument with a message naming every place looked; it never
// contains a secret.
Result<AwsCredentials> LoadAwsCredentials(const std::string& profile = "");
Result<AwsCredentials> LoadAwsCredentials(const std::string& profile, const EnvLookup& getenv);

}  // namespace kernelpro::llm
