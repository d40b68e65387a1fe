// libFuzzer target over every text parser the collectors use on outputs kernelpro does not
// control: ncu CSV, cuobjdump SASS/res-usage/symbols, nm, PyTorch profiler traces. The first
// byte picks the parser. Build and run (clang, not part of the default build):
//   fuzz/run 120      # seconds per run; new interesting inputs land in fuzz/corpus/
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "profile/ncu_csv.h"
#include "profile/sass.h"
#include "profile/timeline.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  kernelpro::SassView view;
  switch (data[0] % 6) {
    case 0: (void)kernelpro::ParseNcuCsv(text); break;
    case 1: (void)kernelpro::ParseSassDump(text); break;
    case 2: kernelpro::ApplyResourceUsage(text, view); break;
    case 3: (void)kernelpro::ParseEntryPoints(text); break;
    case 4: (void)kernelpro::ParseLibraryCalls(text); break;
    case 5: (void)kernelpro::ParseTorchProfilerTrace(text); break;
  }
  return 0;
}
