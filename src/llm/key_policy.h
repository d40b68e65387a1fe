// Where a provider key may be sent. A key travels in the request headers (OpenAI-compatible
// `Authorization: Bearer`, Anthropic `x-api-key`, the AWS access key and session token in Bedrock's
// SigV4 headers), and over plain http anyone on the path reads it. So a key goes only
//
//   - over https, or
//   - over plain http to a loopback host (127.0.0.0/8, ::1, localhost): it never leaves the
//   machine,
//   - or to a plain-http base URL that an --llm-config profile names with allow_insecure_key = true
//     (a lab network the user vouches for).
//
// `--llm PROVIDER:MODEL@http://host/...` on the command line alone is never enough for a plain-http
// host elsewhere: a pasted URL or a typo must not leak a key. Without a key nothing is refused, so
// keyless local servers work anywhere. MakeBackend checks this before the backend that holds the
// key exists; curl follows no redirects, so the checked URL is the only one the key is sent to.
// Pure functions; safe from any thread.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace kernelpro::llm {

// OK when `key_name` (the variable holding the key, or "AWS credentials") may go to `base_url`;
// otherwise InvalidArgument naming the key, the URL (without any user:password in it) and the
// rule. `allowed_by_profile`: the profile that names this base_url sets allow_insecure_key.
Status CheckKeyDestination(const std::string& base_url, const std::string& key_name,
                           bool allowed_by_profile);

// "localhost", an IPv4 address in 127.0.0.0/8, or ::1 (brackets allowed, also as an IPv4-mapped
// IPv6 address). Names that merely start with one ("127.0.0.1.example.com") are not loopback.
bool IsLoopbackHost(std::string_view host);

}  // namespace kernelpro::llm
