// Time of the CUTLASS code search (cutlass/code_search.h) over a whole include/ tree: loading the
// index once, then queries of several kinds over every file. The target (issue 18) is a
// whole-tree query under 50 ms on a 2-core machine once the index is loaded. Prints a table;
// nothing is asserted.
//
//   cmake -B build -DKERNELPRO_BUILD_BENCH=ON && ninja -C build cutlass_search_bench
//   build/cutlass_search_bench [--cutlass-dir DIR] [--repeat N]
// The tree: --cutlass-dir, else KERNELPRO_CUTLASS_DIR, else scripts/setup's copy.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cutlass/code_search.h"
#include "cutlass/locate.h"

namespace {

using Clock = std::chrono::steady_clock;

double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace kernelpro::cutlass;
  std::string dir;
  int repeat = 20;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--cutlass-dir") == 0 && i + 1 < argc) {
      dir = argv[++i];
    } else if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: cutlass_search_bench [--cutlass-dir DIR] [--repeat N]\n");
      return 2;
    }
  }
  auto tree = LocateCutlass(dir);
  if (!tree.ok()) {
    std::fprintf(stderr, "cutlass_search_bench: %s\n", tree.status().message().c_str());
    return 2;
  }
  const auto load_start = Clock::now();
  auto index = CutlassIndex::Load(tree->include_dir);
  const double load_ms = MillisecondsSince(load_start);
  if (!index.ok()) {
    std::fprintf(stderr, "cutlass_search_bench: %s\n", index.status().message().c_str());
    return 2;
  }
  std::printf("CUTLASS %s at %s\n", tree->version.c_str(), tree->include_dir.c_str());
  std::printf("index: %zu files, %.1f MB, loaded in %.1f ms\n\n", index->files().size(),
              index->total_bytes() / 1048576.0, load_ms);

  struct Query {
    const char* regex;
    const char* path;
    const char* what;
  };
  const std::vector<Query> queries = {
      {"SM90_64x128x16_F32BF16BF16_SS", "", "a literal name"},
      {"struct MMA_64x\\d+x16_F32BF16BF16_SS\\b", "", "a name family"},
      {"static_assert\\(.*(GMMA|gmma)", "", "static_asserts about GMMA"},
      {"(?i)tile_to_shape", "", "case-insensitive"},
      {"^\\s*template\\s*<", "", "every template line"},
      {"make_tma_copy", "cute/", "a prefix (cute/)"},
      {"CollectiveMma", "cutlass/gemm/collective/*sm90*", "a glob"},
      {"no_such_symbol_anywhere", "", "no match (worst case)"},
  };
  std::printf("%-42s %-26s %8s %8s %9s %9s\n", "regex", "kind", "files", "matches", "median ms",
              "max ms");
  for (const Query& q : queries) {
    SearchOptions options;
    options.path = q.path;
    std::vector<double> times;
    int files = 0, matches = 0;
    for (int r = 0; r < repeat; ++r) {
      const auto start = Clock::now();
      auto result = SearchCutlass(*index, q.regex, options);
      std::string text = result.ok() ? RenderSearch(*index, *result, options) : "";
      times.push_back(MillisecondsSince(start));
      if (result.ok()) {
        files = result->files_searched;
        matches = result->total_matches;
      }
    }
    std::sort(times.begin(), times.end());
    std::printf("%-42s %-26s %8d %8d %9.2f %9.2f\n", q.regex, q.what, files, matches,
                times[times.size() / 2], times.back());
  }
  return 0;
}
