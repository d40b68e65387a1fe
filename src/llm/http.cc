#include "llm/http.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <mutex>

#include "core/text.h"

namespace kernelpro::llm {
namespace {

size_t WriteBody(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

size_t WriteHeader(char* data, size_t size, size_t count, void* user) {
  auto* response = static_cast<HttpResponse*>(user);
  const std::string_view line(data, size * count);
  if (line.starts_with("HTTP/")) {
    response->headers.clear();  // a new status line (after a 100 Continue or a redirect)
  } else if (auto colon = line.find(':'); colon != std::string_view::npos) {
    response->headers.emplace_back(Trim(line.substr(0, colon)), Trim(line.substr(colon + 1)));
  }
  return size * count;
}

class CurlTransport : public HttpTransport {
 public:
  CurlTransport() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  }

  HttpResult Send(const HttpRequest& request) override {
    CURL* curl = curl_easy_init();
    if (curl == nullptr) return MakeError(ErrorKind::kConnection, "curl_easy_init failed");
    HttpResponse response;
    curl_slist* headers = nullptr;
    for (const auto& [name, value] : request.headers) {
      headers = curl_slist_append(headers, (name + ": " + value).c_str());
    }
    // libcurl would otherwise send "Expect: 100-continue" on large bodies and wait for it.
    headers = curl_slist_append(headers, "Expect:");
    curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    if (request.method != "GET") {
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                       static_cast<curl_off_t>(request.body.size()));
    }
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(request.connect_timeout.count()));
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(request.total_timeout.count()));
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // thread-safe timeouts
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, WriteBody);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response.body);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, WriteHeader);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &response);
    curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");  // whatever libcurl can decode
    CURLcode code = curl_easy_perform(curl);
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    if (code == CURLE_OPERATION_TIMEDOUT) {
      return MakeError(ErrorKind::kTimeout, request.url + ": " + curl_easy_strerror(code));
    }
    if (code != CURLE_OK) {
      return MakeError(ErrorKind::kConnection, request.url + ": " + curl_easy_strerror(code));
    }
    response.status = static_cast<int>(status);
    return response;
  }
};

// The provider's own error text from a JSON error body ({"error": {"message": ...}},
// {"error": "..."}, {"message": ...}, {"Message": ...}), else the start of the body.
std::string RawErrorText(const std::string& body) {
  Json j = Json::parse(body, nullptr, false);
  if (j.is_object()) {
    if (j.contains("error")) {
      const Json& e = j["error"];
      if (e.is_string()) return e.get<std::string>();
      if (e.is_object() && e.contains("message") && e["message"].is_string()) {
        return e["message"].get<std::string>();
      }
    }
    for (const char* key : {"message", "Message", "detail"}) {
      if (j.contains(key) && j[key].is_string()) return j[key].get<std::string>();
    }
  }
  std::string text(Trim(body));
  if (text.size() > 300) text = text.substr(0, 300) + "...";
  return text;
}

std::string ErrorText(const std::string& body) {
  std::string text(Trim(RawErrorText(body)));
  return text.empty() || text == "{}" ? "(the server gave no error message)" : text;
}

}  // namespace

std::string HttpResponse::Header(const std::string& name) const {
  for (const auto& [n, v] : headers) {
    if (EqualsIgnoreCase(n, name)) return v;
  }
  return "";
}

std::shared_ptr<HttpTransport> MakeCurlTransport() { return std::make_shared<CurlTransport>(); }

std::optional<double> ParseRetryAfter(const std::string& value) {
  std::string v(Trim(value));
  if (v.empty()) return std::nullopt;
  if (std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit(c) || c == '.'; })) {
    try {
      return std::stod(v);
    } catch (...) {
      return std::nullopt;
    }
  }
  time_t when = curl_getdate(v.c_str(), nullptr);  // RFC 7231 HTTP-date
  if (when < 0) return std::nullopt;
  return std::max(0.0, std::difftime(when, std::time(nullptr)));
}

std::string WithoutTrailingSlashes(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

Error HttpStatusError(const HttpResponse& response, const std::string& provider) {
  Error e;
  e.http_status = response.status;
  if (response.status == 429) {
    e.kind = ErrorKind::kRateLimited;
    e.retry_after_s = ParseRetryAfter(response.Header("Retry-After"));
  } else if (response.status >= 500) {
    e.kind = ErrorKind::kServer;
    e.retry_after_s = ParseRetryAfter(response.Header("Retry-After"));
  } else if (response.status == 401 || response.status == 403) {
    e.kind = ErrorKind::kAuth;
  } else {
    e.kind = ErrorKind::kBadRequest;
  }
  e.message = provider + ": " + ErrorText(response.body);
  return e;
}

}  // namespace kernelpro::llm
