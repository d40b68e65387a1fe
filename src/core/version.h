// The version kernelpro reports (--version) and stamps on every run it records.
#pragma once

namespace kernelpro {

inline constexpr const char* kKernelproVersion = "0.1.0";

}  // namespace kernelpro
