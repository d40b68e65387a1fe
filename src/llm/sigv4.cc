#include "llm/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <map>
#include <optional>

#include "core/text.h"

namespace kernelpro::llm {
namespace {

constexpr char kAlgorithm[] = "AWS4-HMAC-SHA256";

std::string Hex(const unsigned char* data, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (size_t i = 0; i < size; ++i) {
    out.push_back(kDigits[data[i] >> 4]);
    out.push_back(kDigits[data[i] & 0xf]);
  }
  return out;
}

// HMAC-SHA256 as raw bytes; nullopt only when OpenSSL itself fails.
std::optional<std::string> HmacSha256(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), out,
           &size) == nullptr) {
    return std::nullopt;
  }
  return std::string(reinterpret_cast<const char*>(out), size);
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Query names and values arrive percent-encoded (or not, in sloppy URLs); decoding first and
// encoding again gives one canonical spelling either way. A '%' not followed by two hex digits is
// taken literally. '+' stays '+': SigV4 wants spaces as %20, and a '+' the caller meant literally
// must not change meaning here.
std::string PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && HexValue(text[i + 1]) >= 0 &&
        HexValue(text[i + 2]) >= 0) {
      out.push_back(static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2])));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

struct ParsedUrl {
  std::string scheme, authority, path, query;
};

std::optional<ParsedUrl> ParseUrl(const std::string& url) {
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos || scheme_end == 0) return std::nullopt;
  ParsedUrl parsed;
  parsed.scheme = Lower(url.substr(0, scheme_end));
  size_t authority_begin = scheme_end + 3;
  size_t authority_end = url.find_first_of("/?#", authority_begin);
  if (authority_end == std::string::npos) authority_end = url.size();
  parsed.authority = url.substr(authority_begin, authority_end - authority_begin);
  if (size_t at = parsed.authority.rfind('@'); at != std::string::npos) {
    parsed.authority.erase(0, at + 1);  // user:password@ never reaches the Host header
  }
  if (parsed.authority.empty()) return std::nullopt;
  size_t fragment = url.find('#', authority_end);
  std::string rest = url.substr(
      authority_end, fragment == std::string::npos ? std::string::npos : fragment - authority_end);
  size_t question = rest.find('?');
  parsed.path = rest.substr(0, question);
  if (question != std::string::npos) parsed.query = rest.substr(question + 1);
  return parsed;
}

// The Host header an HTTP client sends for this authority: the port only when it is not the
// scheme's default (libcurl does the same), since the server checks the signature against what
// it received.
std::string HostHeader(const ParsedUrl& url) {
  std::string host = url.authority;
  size_t colon = host.rfind(':');
  if (colon != std::string::npos && host.find(']', colon) == std::string::npos) {
    std::string port = host.substr(colon + 1);
    if ((url.scheme == "https" && port == "443") || (url.scheme == "http" && port == "80")) {
      host.erase(colon);
    }
  }
  return host;
}

// RFC 3986 dot-segment removal, and empty segments dropped too ("//a//" -> "/a/"), as AWS's test
// suite expects for every service but S3.
std::string NormalizePath(const std::string& path) {
  std::vector<std::string> kept;
  bool trailing_slash = !path.empty() && path.back() == '/';
  size_t begin = 0;
  while (begin <= path.size()) {
    size_t end = path.find('/', begin);
    if (end == std::string::npos) end = path.size();
    std::string segment = path.substr(begin, end - begin);
    bool last = end == path.size();
    if (segment == "..") {
      if (!kept.empty()) kept.pop_back();
      if (last) trailing_slash = true;
    } else if (segment == ".") {
      if (last) trailing_slash = true;
    } else if (!segment.empty()) {
      kept.push_back(segment);
    }
    begin = end + 1;
  }
  std::string out;
  for (const std::string& segment : kept) out += "/" + segment;
  if (out.empty() || trailing_slash) out += "/";
  return out;
}

std::string CanonicalUri(const std::string& path, const SigV4Options& options) {
  std::string p = path.empty() ? "/" : path;
  if (options.normalize_path) p = NormalizePath(p);
  // The path as sent is already encoded once; AWS signs it encoded a second time.
  return options.double_encode_path ? UriEncode(p, /*keep_slash=*/true) : p;
}

std::string CanonicalQuery(const std::string& query) {
  std::vector<std::pair<std::string, std::string>> params;
  size_t begin = 0;
  while (begin <= query.size()) {
    size_t end = query.find('&', begin);
    if (end == std::string::npos) end = query.size();
    std::string_view piece(query.data() + begin, end - begin);
    if (!piece.empty()) {
      size_t equals = piece.find('=');
      std::string_view name = piece.substr(0, equals);
      std::string_view value =
          equals == std::string_view::npos ? std::string_view() : piece.substr(equals + 1);
      params.emplace_back(UriEncode(PercentDecode(name)), UriEncode(PercentDecode(value)));
    }
    begin = end + 1;
  }
  // Sorted by encoded name, then encoded value, byte by byte.
  std::sort(params.begin(), params.end());
  std::string out;
  for (const auto& [name, value] : params) {
    if (!out.empty()) out += "&";
    out += name + "=" + value;
  }
  return out;
}

}  // namespace

std::string UriEncode(std::string_view text, bool keep_slash) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' ||
        (keep_slash && c == '/')) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kDigits[c >> 4]);
      out.push_back(kDigits[c & 0xf]);
    }
  }
  return out;
}

std::string SigV4SigningKey(std::string_view secret_access_key, std::string_view date,
                            std::string_view region, std::string_view service) {
  std::optional<std::string> key = HmacSha256("AWS4" + std::string(secret_access_key), date);
  for (std::string_view part : {region, service, std::string_view("aws4_request")}) {
    if (!key) return "";
    key = HmacSha256(*key, part);
  }
  return key.value_or("");
}

std::string AmzDate(std::chrono::system_clock::time_point when) {
  std::time_t seconds =
      std::chrono::system_clock::to_time_t(std::chrono::floor<std::chrono::seconds>(when));
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y%m%dT%H%M%SZ", &utc);
  return text;
}

Result<SigV4Signature> SignV4(const SigV4Request& request, const AwsCredentials& credentials,
                              const SigV4Options& options,
                              std::chrono::system_clock::time_point when) {
  if (credentials.access_key_id.empty() || credentials.secret_access_key.empty()) {
    return Status::InvalidArgument("SigV4: no access key id or secret access key to sign with");
  }
  if (options.region.empty() || options.service.empty()) {
    return Status::InvalidArgument("SigV4: region and service are required");
  }
  std::optional<ParsedUrl> url = ParseUrl(request.url);
  if (!url) return Status::InvalidArgument("SigV4: not an absolute URL: " + request.url);

  // Lowercased name -> values in the order given; std::map keeps names sorted byte-wise.
  std::map<std::string, std::vector<std::string>> headers;
  std::string payload_hash;
  for (const auto& [name, value] : request.headers) {
    std::string key = Lower(CollapseWhitespace(name));  // trimmed too
    if (key == "authorization" || key == "x-amz-date" || key == "x-amz-security-token") {
      return Status::InvalidArgument("SigV4: the request already has " + name +
                                     "; the signer sets it");
    }
    // A caller-supplied x-amz-content-sha256 (S3's "UNSIGNED-PAYLOAD") is the payload hash.
    if (key == "x-amz-content-sha256") payload_hash = CollapseWhitespace(value);
    headers[key].push_back(CollapseWhitespace(value));
  }
  if (!headers.count("host")) headers["host"].push_back(HostHeader(*url));

  SigV4Signature out;
  const std::string amz_date = AmzDate(when);
  headers["x-amz-date"].push_back(amz_date);
  out.headers.emplace_back("X-Amz-Date", amz_date);
  if (!credentials.session_token.empty()) {
    if (options.sign_session_token) {
      headers["x-amz-security-token"].push_back(credentials.session_token);
    }
    out.headers.emplace_back("X-Amz-Security-Token", credentials.session_token);
  }
  if (payload_hash.empty()) payload_hash = Sha256Hex(request.body);
  if (options.add_content_sha256 && !headers.count("x-amz-content-sha256")) {
    headers["x-amz-content-sha256"].push_back(payload_hash);
    out.headers.emplace_back("x-amz-content-sha256", payload_hash);
  }

  std::string canonical_headers;
  for (const auto& [name, values] : headers) {
    std::string joined;
    for (size_t i = 0; i < values.size(); ++i) joined += (i ? "," : "") + values[i];
    canonical_headers += name + ":" + joined + "\n";
    out.signed_headers += (out.signed_headers.empty() ? "" : ";") + name;
  }
  out.canonical_request = request.method + "\n" + CanonicalUri(url->path, options) + "\n" +
                          CanonicalQuery(url->query) + "\n" + canonical_headers + "\n" +
                          out.signed_headers + "\n" + payload_hash;

  const std::string date = amz_date.substr(0, 8);
  const std::string scope = date + "/" + options.region + "/" + options.service + "/aws4_request";
  out.string_to_sign = std::string(kAlgorithm) + "\n" + amz_date + "\n" + scope + "\n" +
                       Sha256Hex(out.canonical_request);
  std::string key =
      SigV4SigningKey(credentials.secret_access_key, date, options.region, options.service);
  std::optional<std::string> mac = key.empty() ? std::nullopt : HmacSha256(key, out.string_to_sign);
  if (!mac || payload_hash.empty()) return Status::Internal("SigV4: OpenSSL failed to hash");
  out.signature = Hex(reinterpret_cast<const unsigned char*>(mac->data()), mac->size());
  out.authorization = std::string(kAlgorithm) + " Credential=" + credentials.access_key_id + "/" +
                      scope + ", SignedHeaders=" + out.signed_headers +
                      ", Signature=" + out.signature;
  out.headers.emplace_back("Authorization", out.authorization);
  return out;
}

}  // namespace kernelpro::llm
