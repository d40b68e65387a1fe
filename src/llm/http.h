// HTTP for the LLM backends, behind a seam so tests can swap the network out.
//
// HttpTransport sends one request and returns the response or a transport-level llm::Error
// (kConnection, kTimeout); it never interprets HTTP status codes — the backends do. The libcurl
// transport (MakeCurlTransport) is the only one kernelpro ships; it is safe to call from several
// threads at once (one easy handle per call).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "llm/types.h"

namespace kernelpro::llm {

struct HttpRequest {
  std::string method = "POST";
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::chrono::milliseconds connect_timeout{10'000};  // to establish the connection
  std::chrono::milliseconds total_timeout{600'000};   // for the whole exchange
};

struct HttpResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // The first header with this name, compared without case; "" when absent.
  std::string Header(const std::string& name) const;
};

class HttpResult {
 public:
  HttpResult(HttpResponse r) : response_(std::move(r)) {}  // NOLINT: implicit by design
  HttpResult(Error e) : error_(std::move(e)) {}            // NOLINT: implicit by design
  bool ok() const { return response_.has_value(); }
  const HttpResponse& response() const { return *response_; }
  const Error& error() const { return error_; }

 private:
  std::optional<HttpResponse> response_;
  Error error_;
};

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  virtual HttpResult Send(const HttpRequest& request) = 0;
};

std::shared_ptr<HttpTransport> MakeCurlTransport();

// Maps a non-2xx response to an Error (429 → kRateLimited with Retry-After in seconds, either
// delta-seconds or an HTTP date; 5xx → kServer; 401/403 → kAuth; other 4xx → kBadRequest). The
// message carries the provider's own error text when the body has one, trimmed.
Error HttpStatusError(const HttpResponse& response, const std::string& provider);

// "Retry-After: 7" or an HTTP date; nullopt when absent or unreadable.
std::optional<double> ParseRetryAfter(const std::string& value);

// `url` without trailing '/': a configured base URL may end in one, and base + "/v1/messages"
// must not hold two.
std::string WithoutTrailingSlashes(std::string url);

}  // namespace kernelpro::llm
