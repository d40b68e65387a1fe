// The evaluation server's HTTP/JSON API (docs/serve.md), on cpp-httplib:
//
//   GET  /v1/health      200 {"status": "ok", version, device, gpus, queue_depth, running,
//                         draining}; 503 {"status": "draining", ...} while it drains
//   POST /v1/eval        {"problem_source", "candidate_source", "options"?, "async"?}
//                        sync: 200 with `kernelpro eval --json`'s object (header X-Kernelpro-Job)
//                        async: 202 {"job", "state": "queued"}
//   GET  /v1/jobs/{id}   200 {"job", "state", "result" | "error"}; 404 when unknown
//   GET  /v1/metrics     Prometheus text (metrics.h)
//
// Every error is one line of JSON, {"error": "..."}: 400 a malformed request (not JSON, a field
// missing or of the wrong type, an unknown field or option, a bad option value), 401 a missing or
// wrong bearer token, 404 an unknown route or job, 413 a body over the cap, 422 a problem that
// cannot be evaluated, 429 the queue full, 500 the server's own failure, 503 draining. No
// handler lets an exception escape; no request names a file on the server.
//
// With a token, every route but /v1/health (load balancers probe it) wants
// `Authorization: Bearer <token>`, compared in constant time.
//
// Thread-safety: Run serves on a pool of threads (one per open request: a sync evaluation holds
// its thread until its verdict); Stop may be called from any thread.
#pragma once

#include <memory>
#include <string>

#include "core/json_io.h"
#include "core/status.h"
#include "serve/job_queue.h"
#include "serve/metrics.h"
#include "serve/request_options.h"

namespace kernelpro::serve {

struct ApiConfig {
  std::string token;                        // empty: no token asked for (loopback only)
  std::size_t max_body_bytes = 8u << 20;    // a larger request body is refused with 413
  std::size_t max_source_bytes = 2u << 20;  // each of problem_source and candidate_source
  std::size_t threads = 64;                 // requests served at once
  Json facts = Json::object();              // health's fixed fields: version, device, gpus
};

class EvalApi {
 public:
  EvalApi(ApiConfig config, JobQueue& queue, const RequestOptions& options, ServeMetrics& metrics);
  ~EvalApi();
  EvalApi(const EvalApi&) = delete;
  EvalApi& operator=(const EvalApi&) = delete;

  // Binds `host`:`port` (0: a free port); the port bound, or why it could not.
  Result<int> Bind(const std::string& host, int port);
  // Serves until Stop (after Bind).
  void Run();
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Whether `header` (an Authorization header's value) is "Bearer <token>", compared in constant
// time (digests of both, so their lengths do not show either).
bool BearerMatches(const std::string& header, const std::string& token);

}  // namespace kernelpro::serve
