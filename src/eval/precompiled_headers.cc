#include "eval/precompiled_headers.h"

#include <chrono>
#include <filesystem>

namespace kernelpro::eval {

Result<PrecompiledHeaders> PrecompiledHeadersFromResult(const Json& result) {
  const std::string status = JsonGet<std::string>(result, "status", "");
  if (status != "ok") {
    return Status::Internal("the pch step failed (" + status +
                            "): " + JsonGet<std::string>(result, "message", "no message"));
  }
  PrecompiledHeaders headers;
  headers.dir = JsonGet<std::string>(result, "pch_dir", "");
  headers.manifest = JsonGet<Json>(result, "pch_manifest", Json::object());
  if (!headers.manifest.is_object()) headers.manifest = Json::object();
  for (const Json& note : JsonGet<Json>(result, "notes", Json::array())) {
    if (note.is_string()) headers.notes.push_back(note.get<std::string>());
  }
  for (const Json& entry : JsonGet<Json>(result, "entries", Json::array())) {
    if (auto error = JsonGet<std::string>(entry, "error", ""); !error.empty()) {
      headers.notes.push_back("no precompiled header for " +
                              JsonGet<Json>(entry, "variant", Json::object()).dump() + ": " +
                              error);
    }
  }
  if (headers.manifest.empty()) headers.dir.clear();
  return headers;
}

Result<PrecompiledHeaders> PreparePrecompiledHeaders(const WorkerClient& worker,
                                                     const std::string& cache_dir,
                                                     const std::string& device,
                                                     const std::map<std::string, std::string>& env,
                                                     int timeout_s, int cancel_fd) {
  namespace fs = std::filesystem;
  Json request = {{"device", device},
                  {"pch_dir", (fs::absolute(cache_dir) / "pch").lexically_normal().string()}};
  ProcessLimits limits;
  limits.wall_timeout = std::chrono::seconds(timeout_s);
  limits.cpu_seconds = timeout_s * 8;
  limits.max_file_bytes = 16ull << 30;
  limits.max_open_files = 4096;
  // Unconfined: the step writes CACHE/pch and runs no candidate code.
  auto outcome =
      worker.Run("pch", request, limits, env, {}, 16 * 1024, Confinement::kNone, cancel_fd);
  if (!outcome.ok()) return outcome.status();
  if (outcome->process.cancelled) return Status::Unavailable("the pch step was stopped");
  if (!outcome->result) {
    return Status::Internal("the pch step wrote no result (" + outcome->result_error +
                            "): " + outcome->process.stderr_text.substr(0, 2000));
  }
  return PrecompiledHeadersFromResult(*outcome->result);
}

void OfferPrecompiledHeaders(const PrecompiledHeaders& headers, Json& request) {
  if (headers.dir.empty()) return;
  request["pch_dir"] = headers.dir;
  request["pch_manifest"] = headers.manifest;
}

}  // namespace kernelpro::eval
