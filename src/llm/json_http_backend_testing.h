// A minimal Backend over the real libcurl transport, for integration tests of the decorators
// against FakeServer (fake_server_testing.h). It is not a provider: it POSTs
// {"model": ..., "request": ToJson(request)} to <base_url>/complete with the API key in an
// "Authorization: Bearer" and an "x-api-key" header, reads a reply in the ToJson(Response) form,
// and classifies non-2xx replies with HttpStatusError, as real providers do. Safe to call from
// several threads at once.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include "llm/backend.h"
#include "llm/http.h"

namespace kernelpro::llm::testing {

class JsonHttpBackend : public Backend {
 public:
  JsonHttpBackend(std::string base_url, std::string api_key,
                  std::chrono::milliseconds total_timeout = std::chrono::seconds(10))
      : base_url_(std::move(base_url)),
        api_key_(std::move(api_key)),
        total_timeout_(total_timeout),
        transport_(MakeCurlTransport()) {}

  std::string provider() const override { return "json-http"; }
  std::string model() const override { return "test-model"; }

  Outcome Complete(const Request& request) override {
    HttpRequest http;
    http.url = base_url_ + "/complete";
    http.headers = {{"Content-Type", "application/json"},
                    {"Authorization", "Bearer " + api_key_},
                    {"x-api-key", api_key_}};
    http.body = DumpJson(Json{{"model", model()}, {"request", ToJson(request)}});
    http.total_timeout = total_timeout_;
    HttpResult result = transport_->Send(http);
    if (!result.ok()) return result.error();
    if (result.response().status / 100 != 2) return HttpStatusError(result.response(), provider());
    Json body = Json::parse(result.response().body, nullptr, false);
    Result<Response> response = ResponseFromJson(body);
    if (!response.ok()) return MakeError(ErrorKind::kMalformed, response.status().message());
    return *response;
  }

 private:
  const std::string base_url_;
  const std::string api_key_;
  const std::chrono::milliseconds total_timeout_;
  std::shared_ptr<HttpTransport> transport_;
};

}  // namespace kernelpro::llm::testing
