// Time and peak memory of `kernelpro collect` on large ncu profiles: the 3 recorded launches of
// tests/fixtures/h200/p_many_launches.ncu.csv (437 columns, ~2 KB a row) repeated to 1,000 ...
// 40,000 kernels. Each case runs in a child process of its own, so its peak RSS is its own
// (getrusage of the child); the CSVs are written to a temporary directory first.
//
//   cmake -S . -B build -DKERNELPRO_BUILD_BENCH=ON && cmake --build build
//   build/large_profile_bench [OTHER_KERNELPRO_BINARY]   # e.g. an older build, up to 10,000
//
// Rows: "library" is CollectFromArtifacts plus the JSON form in this process's code; "collect
// --json" runs the kernelpro binary as a user would, its output to /dev/null.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "profile/collect.h"
#include "profile/ncu_csv_testing.h"

namespace {

namespace fs = std::filesystem;

struct Measured {
  double seconds = 0;
  double peak_rss_mb = 0;
  int status = -1;
};

// Runs `work` in a child process and measures it from outside.
template <typename Work>
Measured InChild(Work work) {
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) _exit(work());
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  Measured m;
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.peak_rss_mb = usage.ru_maxrss / 1024.0;  // KiB on Linux
  m.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return m;
}

int RunBinary(const std::string& binary, const std::string& csv) {
  int null = open("/dev/null", O_WRONLY);
  dup2(null, STDOUT_FILENO);
  execl(binary.c_str(), binary.c_str(), "collect", "--ncu-csv", csv.c_str(), "--json",
        static_cast<char*>(nullptr));
  return 127;
}

}  // namespace

int main(int argc, char** argv) {
  std::ifstream in(
      std::string(KERNELPRO_SOURCE_DIR) + "/tests/fixtures/h200/p_many_launches.ncu.csv",
      std::ios::binary);
  const std::string recorded((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  const fs::path dir = fs::temp_directory_path() / ("kp_large_profile_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::vector<std::pair<std::string, std::string>> binaries = {
      {"collect --json", KERNELPRO_BINARY}};
  for (int i = 1; i < argc; ++i)
    binaries.push_back({"collect --json (" + std::string(argv[i]) + ")", argv[i]});

  std::printf("%9s %8s  %-40s %9s %13s\n", "kernels", "CSV MB", "what", "seconds", "peak RSS MB");
  for (std::size_t kernels : {1000, 4000, 10000, 40000}) {
    const std::string csv = (dir / ("k" + std::to_string(kernels) + ".ncu.csv")).string();
    {
      std::ofstream out(csv, std::ios::binary);
      kernelpro::testing::WriteRepeatedNcuCsv(recorded, kernels, out);
    }
    const double csv_mb = static_cast<double>(fs::file_size(csv)) / (1 << 20);
    auto row = [&](const std::string& what, const Measured& m) {
      std::printf("%9zu %8.1f  %-40s %9.2f %13.1f%s\n", kernels, csv_mb, what.c_str(), m.seconds,
                  m.peak_rss_mb, m.status == 0 ? "" : "  (failed)");
      std::fflush(stdout);
    };
    row("library: CollectFromArtifacts + JSON", InChild([&] {
          kernelpro::ArtifactPaths paths;
          paths.ncu_csv = csv;
          kernelpro::Metrics m = kernelpro::CollectFromArtifacts(paths);
          const std::string json = kernelpro::DumpJson(kernelpro::ToJson(m));
          return m.ncu && m.ncu->kernels.size() == kernels && !json.empty() ? 0 : 1;
        }));
    for (std::size_t i = 0; i < binaries.size(); ++i) {
      // Another build may hold every counter of every kernel: ~0.5 MB a kernel, 20 GB at 40,000.
      if (i > 0 && kernels > 10000) continue;
      row(binaries[i].first, InChild([&] { return RunBinary(binaries[i].second, csv); }));
    }
    fs::remove(csv);
  }
  fs::remove_all(dir);
  return 0;
}
