#include "suite/environment.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>
#include <vector>

#include "core/subprocess.h"
#include "core/text.h"

namespace kernelpro::suite {
namespace {

// The nvidia-smi fields asked for, in order, and the JSON keys they become.
const std::vector<std::pair<const char*, const char*>> kFields = {
    {"name", "gpu_name"},
    {"driver_version", "driver"},
    {"clocks.sm", "sm_clock_mhz"},
    {"clocks.mem", "memory_clock_mhz"},
    {"clocks.applications.graphics", "application_sm_clock_mhz"},
    {"clocks.applications.memory", "application_memory_clock_mhz"},
    {"clocks.max.sm", "max_sm_clock_mhz"},
    {"persistence_mode", "persistence_mode"},
};

std::string SmiIndex(const std::string& gpu) {
  if (!gpu.empty()) return gpu;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible && *visible) {
    std::string first(visible);
    return first.substr(0, first.find(','));
  }
  return "0";
}

Json CpuEnvironment() {
  Json env = {{"device", "cpu"}, {"cores", std::thread::hardware_concurrency()}};
  if (auto cpuinfo = ReadFileText("/proc/cpuinfo"); cpuinfo.ok()) {
    std::istringstream lines(*cpuinfo);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
        env["cpu_model"] = std::string(Trim(line.substr(line.find(':') + 1)));
        break;
      }
    }
  }
  return env;
}

}  // namespace

Json MeasurementEnvironment(const std::string& device, const std::string& gpu) {
  if (device == "cpu") return CpuEnvironment();
  Json env = {{"device", "cuda"}, {"gpu", gpu}};
  std::string query;
  for (const auto& [field, key] : kFields) query += (query.empty() ? "" : ",") + std::string(field);
  ProcessOptions process;
  process.argv = {"nvidia-smi", "-i", SmiIndex(gpu), "--query-gpu=" + query,
                  "--format=csv,noheader,nounits"};
  process.limits.wall_timeout = std::chrono::seconds(30);
  auto ran = RunProcess(process);
  if (!ran.ok() || !ran->started || !ran->exited || ran->exit_code != 0) {
    env["error"] = !ran.ok()       ? ran.status().message()
                   : !ran->started ? "nvidia-smi is not on PATH"
                                   : "nvidia-smi " + ran->Describe() + ": " +
                                         std::string(Trim(ran->stderr_text + ran->stdout_text));
    return env;
  }
  std::string line = ran->stdout_text.substr(0, ran->stdout_text.find('\n'));
  std::vector<std::string> values;
  std::stringstream cells(line);
  for (std::string cell; std::getline(cells, cell, ',');) values.emplace_back(Trim(cell));
  for (std::size_t i = 0; i < kFields.size() && i < values.size(); ++i) {
    const std::string& v = values[i];
    if (v.empty() || v == "[N/A]" || v == "N/A" || v.find("Not Supported") != std::string::npos) {
      continue;
    }
    char* end = nullptr;
    double number = std::strtod(v.c_str(), &end);
    const bool numeric =
        end && *end == '\0' && std::string(kFields[i].second).find("mhz") != std::string::npos;
    env[kFields[i].second] = numeric ? Json(number) : Json(v);
  }
  return env;
}

std::string EnvironmentLine(const Json& env) {
  std::ostringstream out;
  auto mhz = [&](const char* key) -> std::string {
    auto v = JsonNumber(env, key);
    return v ? std::to_string(static_cast<long>(*v)) : "?";
  };
  if (JsonGet<std::string>(env, "device", "") == "cpu") {
    out << "CPU: " << JsonGet<std::string>(env, "cpu_model", "unknown model") << ", "
        << JsonGet<int>(env, "cores", 0) << " cores";
    return out.str();
  }
  out << "GPU: " << JsonGet<std::string>(env, "gpu_name", "unknown GPU");
  if (auto driver = JsonGet<std::string>(env, "driver", ""); !driver.empty()) {
    out << ", driver " << driver;
  }
  if (auto error = JsonGet<std::string>(env, "error", ""); !error.empty()) {
    out << " (clocks unknown: " << error << ")";
    return out.str();
  }
  out << "; clocks as found (not locked by kernelpro): SM " << mhz("sm_clock_mhz") << " MHz of max "
      << mhz("max_sm_clock_mhz") << ", memory " << mhz("memory_clock_mhz") << " MHz";
  if (env.contains("application_sm_clock_mhz")) {
    out << ", applications SM " << mhz("application_sm_clock_mhz") << " / memory "
        << mhz("application_memory_clock_mhz") << " MHz";
  }
  return out.str();
}

}  // namespace kernelpro::suite
