// AWS Signature Version 4: how kernelpro authenticates to AWS services (Bedrock) without an SDK.
//
// SignV4 takes a request exactly as it will be sent (method, URL, headers, body), the credentials,
// region, service and the signing time, and returns the headers to add (X-Amz-Date, the security
// token, Authorization) together with the intermediate canonical request and string to sign, so
// tests can compare every step against AWS's published test suite. The time is an argument, not
// read from a clock, so a signature is a pure function of its inputs. Hashing and HMAC come from
// OpenSSL; nothing here is hand-written cryptography.
//
// Where the keys come from is aws_credentials.h. Every function here is pure: safe to call from
// several threads at once.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/hash.h"
#include "core/status.h"
#include "llm/aws_credentials.h"

namespace kernelpro::llm {

struct SigV4Request {
  std::string method = "POST";
  // As it goes on the wire: scheme://host[:port]/path?query, the path already percent-encoded
  // (a Bedrock model id "a:0" appears as "a%3A0").
  std::string url;
  // The headers that will be sent; all of them are signed. Host is taken from the URL when absent.
  // X-Amz-Date, X-Amz-Security-Token, x-amz-content-sha256 and Authorization belong to the signer.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

struct SigV4Options {
  std::string region;   // "us-east-1"
  std::string service;  // "bedrock", "s3", ...
  // Remove "." and ".." segments and empty segments from the path before signing. Every service
  // but S3 expects it; S3 object keys may legitimately contain "//".
  bool normalize_path = true;
  // Percent-encode each path segment once more in the canonical request, so "%3A" is signed as
  // "%253A". Every service but S3 expects it (S3 signs the path as sent).
  bool double_encode_path = true;
  // Add and sign x-amz-content-sha256 with the body's hash. S3 requires it; other services do not.
  bool add_content_sha256 = false;
  // Sign X-Amz-Security-Token (most services require it). When false the token header is still
  // returned, but added after signing, as a few older services want.
  bool sign_session_token = true;
};

struct SigV4Signature {
  // To add to the request, in this order: X-Amz-Date, [X-Amz-Security-Token],
  // [x-amz-content-sha256], Authorization.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string canonical_request;
  std::string string_to_sign;
  std::string signed_headers;  // "host;x-amz-date"
  std::string signature;       // lowercase hex
  std::string authorization;   // the Authorization header's value
};

// Signs `request` for `options.service` in `options.region` at `when`. Fails (InvalidArgument) on
// a URL without scheme or host, missing keys, an empty region or service, or a request that
// already carries one of the signer's own headers.
Result<SigV4Signature> SignV4(const SigV4Request& request, const AwsCredentials& credentials,
                              const SigV4Options& options,
                              std::chrono::system_clock::time_point when);

// "20150830T123600Z": the X-Amz-Date form of `when`, in UTC.
std::string AmzDate(std::chrono::system_clock::time_point when);

// RFC 3986 percent-encoding as SigV4 defines it: A-Z a-z 0-9 - . _ ~ stay, every other byte
// becomes %XX (uppercase hex); '/' stays only when `keep_slash`.
std::string UriEncode(std::string_view text, bool keep_slash = false);

// Lowercase hex SHA-256 of `data`.
using ::kernelpro::Sha256Hex;  // core/hash.h: SHA-256 as lowercase hex

// The derived key HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request"),
// as raw bytes; `date` is YYYYMMDD.
std::string SigV4SigningKey(std::string_view secret_access_key, std::string_view date,
                            std::string_view region, std::string_view service);

}  // namespace kernelpro::llm
