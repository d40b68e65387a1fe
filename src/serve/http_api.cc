#include "serve/http_api.h"

#include <httplib.h>
#include <openssl/crypto.h>

#include <exception>
#include <set>

#include "core/hash.h"

namespace kernelpro::serve {
namespace {

constexpr const char* kJsonType = "application/json";

void SendJson(httplib::Response& res, int code, const Json& body) {
  res.status = code;
  res.set_content(DumpJson(body) + "\n", kJsonType);
}

void SendError(httplib::Response& res, int code, const std::string& message) {
  SendJson(res, code, Json{{"error", message}});
}

// The route a path belongs to, for the request counter (never the job id: bounded labels).
std::string RouteOf(const std::string& path) {
  if (path == "/v1/eval") return "eval";
  if (path.rfind("/v1/jobs/", 0) == 0) return "jobs";
  if (path == "/v1/health") return "health";
  if (path == "/v1/metrics") return "metrics";
  return "other";
}

struct ParsedEval {
  EvalJob job;
  bool async = false;
};

// A POST /v1/eval body as a job; InvalidArgument (400) saying what is wrong.
Result<ParsedEval> ParseEvalBody(const std::string& body, const ApiConfig& config,
                                 const RequestOptions& resolver) {
  Json request = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (request.is_discarded() || !request.is_object()) {
    return Status::InvalidArgument("the body is not a JSON object");
  }
  static const std::set<std::string> kFields = {"problem_source", "candidate_source", "options",
                                                "async"};
  for (const auto& [key, value] : request.items()) {
    if (!kFields.count(key)) {
      return Status::InvalidArgument(
          "unknown field '" + key + "' (fields: problem_source, candidate_source, options, async)");
    }
  }
  ParsedEval parsed;
  for (const char* field : {"problem_source", "candidate_source"}) {
    auto it = request.find(field);
    if (it == request.end() || !it->is_string() || it->get<std::string>().empty()) {
      return Status::InvalidArgument(std::string(field) + " is required: the file's text");
    }
    if (it->get<std::string>().size() > config.max_source_bytes) {
      return Status::InvalidArgument(std::string(field) + " is over " +
                                     std::to_string(config.max_source_bytes) + " bytes");
    }
  }
  parsed.job.problem_source = request["problem_source"].get<std::string>();
  parsed.job.candidate_source = request["candidate_source"].get<std::string>();
  if (auto it = request.find("async"); it != request.end()) {
    if (!it->is_boolean()) return Status::InvalidArgument("async must be true or false");
    parsed.async = it->get<bool>();
  }
  Json options = JsonGet<Json>(request, "options", Json::object());
  if (!options.is_object()) {
    return Status::InvalidArgument("options must be an object of `kernelpro eval` options");
  }
  auto resolved = resolver.Resolve(options);
  if (!resolved.ok()) return resolved.status();
  parsed.job.options = std::move(*resolved);
  return parsed;
}

// A finished job's answer to the request that waited for it.
void SendFinished(httplib::Response& res, const JobRecord& record) {
  res.set_header("X-Kernelpro-Job", record.id);
  switch (record.state) {
    case JobState::kDone:
      SendJson(res, 200, record.result);
      return;
    case JobState::kFailed:
      SendError(res, record.http_code ? record.http_code : 500, record.error);
      return;
    default:  // cancelled (the server drains) or interrupted
      SendError(res, 503, record.error.empty() ? JobStateName(record.state) : record.error);
  }
}

}  // namespace

bool BearerMatches(const std::string& header, const std::string& token) {
  const std::string prefix = "Bearer ";
  const std::string given = header.rfind(prefix, 0) == 0 ? header.substr(prefix.size()) : "";
  const std::string a = Sha256Hex(given);
  const std::string b = Sha256Hex(token);
  return !token.empty() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

struct EvalApi::Impl {
  ApiConfig config;
  JobQueue& queue;
  const RequestOptions& options;
  ServeMetrics& metrics;
  httplib::Server server;

  Impl(ApiConfig c, JobQueue& q, const RequestOptions& o, ServeMetrics& m)
      : config(std::move(c)), queue(q), options(o), metrics(m) {}

  bool Authorized(const httplib::Request& req, httplib::Response& res) const {
    if (config.token.empty() || BearerMatches(req.get_header_value("Authorization"), config.token))
      return true;
    res.set_header("WWW-Authenticate", "Bearer");
    SendError(res, 401, "a bearer token is required (Authorization: Bearer <token>)");
    return false;
  }

  void Health(httplib::Response& res) const {
    const ServeMetrics::Gauges g = queue.Gauges();
    Json body = config.facts;
    body.update(queue.EvaluatorFacts());
    body["status"] = g.draining ? "draining" : "ok";
    body["queue_depth"] = g.queued;
    body["running"] = g.running;
    body["draining"] = g.draining;
    SendJson(res, g.draining ? 503 : 200, body);
  }

  void Eval(const httplib::Request& req, httplib::Response& res) {
    auto parsed = ParseEvalBody(req.body, config, options);
    if (!parsed.ok()) return SendError(res, 400, parsed.status().message());
    const bool async = parsed->async;
    JobQueue::Submitted submitted = queue.Submit(std::move(parsed->job));
    switch (submitted.refusal) {
      case JobQueue::Refusal::kNone:
        break;
      case JobQueue::Refusal::kDraining:
        return SendError(res, 503, submitted.why);
      case JobQueue::Refusal::kQueueFull:
        res.set_header("Retry-After", "5");
        return SendError(res, 429, submitted.why);
      case JobQueue::Refusal::kJournal:
        return SendError(res, 500, submitted.why);
    }
    res.set_header("X-Kernelpro-Job", submitted.id);
    if (async) return SendJson(res, 202, Json{{"job", submitted.id}, {"state", "queued"}});
    std::optional<JobRecord> record = queue.Wait(submitted.id);
    if (!record) return SendError(res, 500, "the evaluation's record was lost");
    SendFinished(res, *record);
  }

  void Job(const httplib::Request& req, httplib::Response& res) const {
    std::optional<JobRecord> record = queue.Get(req.matches[1]);
    if (!record) return SendError(res, 404, "no such job: " + std::string(req.matches[1]));
    SendJson(res, 200, ToJson(*record));
  }

  void Routes() {
    server.new_task_queue = [n = config.threads] { return new httplib::ThreadPool(n); };
    server.set_payload_max_length(config.max_body_bytes);
    server.Get("/v1/health",
               [this](const httplib::Request&, httplib::Response& res) { Health(res); });
    server.Post("/v1/eval", [this](const httplib::Request& req, httplib::Response& res) {
      if (Authorized(req, res)) Eval(req, res);
    });
    server.Get(R"(/v1/jobs/([0-9a-f]{1,64}))",
               [this](const httplib::Request& req, httplib::Response& res) {
                 if (Authorized(req, res)) Job(req, res);
               });
    server.Get("/v1/metrics", [this](const httplib::Request& req, httplib::Response& res) {
      if (!Authorized(req, res)) return;
      res.set_content(metrics.RenderText(queue.Gauges()), "text/plain; version=0.0.4");
    });
    // What the library answers by itself (no route, a body over the cap) gets a JSON body too.
    httplib::Server::HandlerWithResponse answer_in_json = [this](const httplib::Request& req,
                                                                 httplib::Response& res) {
      if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
      if (res.status == 413) {
        SendError(res, 413,
                  "the request body is over " + std::to_string(config.max_body_bytes) + " bytes");
      } else if (res.status == 404) {
        SendError(res, 404, "no such route: " + req.method + " " + req.path);
      } else {
        SendError(res, res.status, "the request could not be served");
      }
      return httplib::Server::HandlerResponse::Handled;
    };
    server.set_error_handler(answer_in_json);
    server.set_exception_handler(
        [](const httplib::Request&, httplib::Response& res, std::exception_ptr e) {
          std::string what = "internal error";
          try {
            if (e) std::rethrow_exception(e);
          } catch (const std::exception& ex) {
            what += std::string(": ") + ex.what();
          } catch (...) {
          }
          SendError(res, 500, what);
        });
    server.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
      metrics.CountRequest(RouteOf(req.path), res.status);
    });
  }
};

EvalApi::EvalApi(ApiConfig config, JobQueue& queue, const RequestOptions& options,
                 ServeMetrics& metrics)
    : impl_(std::make_unique<Impl>(std::move(config), queue, options, metrics)) {
  impl_->Routes();
}

EvalApi::~EvalApi() { Stop(); }

Result<int> EvalApi::Bind(const std::string& host, int port) {
  int bound = port == 0 ? impl_->server.bind_to_any_port(host) : port;
  if (port != 0 && !impl_->server.bind_to_port(host, port)) bound = -1;
  if (bound <= 0) {
    return Status::Unavailable("cannot listen on " + host + ":" + std::to_string(port) +
                               " (in use, or not an address of this machine)");
  }
  return bound;
}

void EvalApi::Run() { impl_->server.listen_after_bind(); }

void EvalApi::Stop() { impl_->server.stop(); }

}  // namespace kernelpro::serve
