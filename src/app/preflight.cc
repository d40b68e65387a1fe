#include "app/preflight.h"

#include <chrono>
#include <filesystem>
#include <map>

#include "core/json_io.h"
#include "eval/worker_client.h"
#include "llm/factory.h"
#include "llm/http.h"
#include "llm/price.h"

namespace kernelpro::app {

Status CheckCostLimitReachable(const llm::LlmConfig& config) {
  if (config.provider == "replay") {
    return Status::InvalidArgument(
        "--max-cost: a replayed model costs nothing, so the limit would never stop the run; "
        "leave it out (--iterations or --time-limit bound a replay)");
  }
  const std::string model = config.provider + ":" + config.model;
  if (config.prices_file.empty()) {
    return Status::InvalidArgument(
        "--max-cost: no price is known for " + model +
        ", so every exchange would count as $0 and the limit would never stop the run; give "
        "--llm-prices FILE (or prices_file in the LLM profile) with [models.\"" +
        config.model + "\"] input_per_mtok and output_per_mtok (0 for a local server)");
  }
  auto prices = llm::PriceTable::FromTomlFile(config.prices_file);
  if (!prices.ok()) return Status::InvalidArgument("--max-cost: " + prices.status().message());
  if (!prices->Find(config.model)) {
    return Status::InvalidArgument("--max-cost: the price table " + config.prices_file +
                                   " has no entry for " + model +
                                   ", so every exchange would count as $0 and the limit would "
                                   "never stop the run; add [models.\"" +
                                   config.model + "\"] (a glob such as \"" + config.model +
                                   "*\" also matches dated releases)");
  }
  return Status::Ok();
}

Status CheckLlmReady(const llm::LlmConfig& config) {
  // Building the backend is what reads the key, the AWS credentials and the cassette; nothing is
  // sent.
  auto backend = llm::MakeBackend(config);
  if (!backend.ok()) return backend.status();
  auto transport = llm::MakeCurlTransport();
  return llm::CheckServerReachable(config, *transport);
}

Status CheckDeviceReady(const std::string& device, const std::string& python,
                        const std::vector<std::string>& gpus) {
  if (device != "cuda") return Status::Ok();
  eval::WorkerOptions options;
  options.python = python;
  std::error_code ec;
  const std::filesystem::path temp = std::filesystem::temp_directory_path(ec);
  if (ec) return Status::IoError("no usable temporary directory (TMPDIR): " + ec.message());
  // MakeExecutor's default request directory: shared by kernelpro processes, never a run's.
  options.scratch_dir = (temp / "kernelpro-work" / "requests").string();
  // The inspect step runs no candidate code: no sandbox to set up.
  options.sandbox.enabled = false;
  auto worker = eval::WorkerClient::Create(options);
  if (!worker.ok()) return worker.status();
  std::map<std::string, std::string> env;
  if (!gpus.empty()) env["CUDA_VISIBLE_DEVICES"] = gpus.front();
  ProcessLimits limits;
  limits.wall_timeout = std::chrono::seconds(120);
  auto outcome = worker->Run("inspect", Json{{"device", "cuda"}}, limits, env);
  if (!outcome.ok()) return outcome.status();
  if (!outcome->result) {
    return Status::Internal("the worker's inspect step died: " + outcome->process.Describe());
  }
  const std::string status = JsonGet<std::string>(*outcome->result, "status", "ok");
  if (status == "device_error") {
    return Status::Unavailable(std::string("no CUDA GPU found") +
                               (gpus.empty() ? "" : " (--gpus " + gpus.front() + ")") +
                               ": use --device cpu, or run on a machine with a GPU");
  }
  if (status != "ok") {
    return Status::Internal("the worker's inspect step failed: " +
                            JsonGet<std::string>(*outcome->result, "message", status));
  }
  return Status::Ok();
}

}  // namespace kernelpro::app
