#include "llm/key_policy.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>

#include <memory>

#include "core/text.h"

namespace kernelpro::llm {
namespace {

struct UrlDeleter {
  void operator()(CURLU* url) const { curl_url_cleanup(url); }
};

// One part of a parsed URL; "" when absent.
std::string Part(CURLU* url, CURLUPart part) {
  char* text = nullptr;
  if (curl_url_get(url, part, &text, 0) != CURLUE_OK || text == nullptr) return "";
  std::string value(text);
  curl_free(text);
  return value;
}

}  // namespace

bool IsLoopbackHost(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (!host.empty() && host.back() == '.') host.remove_suffix(1);  // "localhost." is absolute
  const std::string name = Lower(host);
  if (name == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, name.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, name.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

Status CheckKeyDestination(const std::string& base_url, const std::string& key_name,
                           bool allowed_by_profile) {
  std::unique_ptr<CURLU, UrlDeleter> url(curl_url());
  if (!url || curl_url_set(url.get(), CURLUPART_URL, base_url.c_str(), 0) != CURLUE_OK) {
    return Status::InvalidArgument("refusing to send " + key_name + " to '" + base_url +
                                   "': not a URL that can be checked");
  }
  const std::string scheme = Part(url.get(), CURLUPART_SCHEME);
  if (scheme == "https") return Status::Ok();
  if (scheme == "http" && (IsLoopbackHost(Part(url.get(), CURLUPART_HOST)) || allowed_by_profile)) {
    return Status::Ok();
  }
  // Shown without user:password, which would be a secret of its own.
  curl_url_set(url.get(), CURLUPART_USER, nullptr, 0);
  curl_url_set(url.get(), CURLUPART_PASSWORD, nullptr, 0);
  std::string shown = Part(url.get(), CURLUPART_URL);
  if (shown.empty()) shown = scheme + "://" + Part(url.get(), CURLUPART_HOST);
  return Status::InvalidArgument(
      "refusing to send " + key_name + " over plain " + scheme + " to " + shown +
      ": use https, a loopback address (127.0.0.1, ::1, localhost), or name this base_url in an "
      "--llm-config profile with allow_insecure_key = true");
}

}  // namespace kernelpro::llm
