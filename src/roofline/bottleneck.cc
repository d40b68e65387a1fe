#include "roofline/bottleneck.h"

#include <array>
#include <optional>
#include <string>
#include <utility>

#include "core/enum_names.h"

namespace kernelpro::roofline {
namespace {

constexpr std::array<std::pair<Bottleneck, const char*>, 4> kBottleneckNames = {
    {{Bottleneck::kCompute, "compute"},
     {Bottleneck::kMemory, "memory"},
     {Bottleneck::kLatency, "latency"},
     {Bottleneck::kMixed, "mixed"}}};

}  // namespace

std::string_view BottleneckName(Bottleneck bottleneck) {
  return NameOf(kBottleneckNames, bottleneck);
}

Result<Bottleneck> ParseBottleneck(std::string_view name) {
  if (std::optional<Bottleneck> bottleneck = ValueOf(kBottleneckNames, name)) return *bottleneck;
  return Status::InvalidArgument("unknown bottleneck class '" + std::string(name) +
                                 "' (expected one of: " + NameList(kBottleneckNames) + ")");
}

Bottleneck ParseBottleneckOr(std::string_view name, Bottleneck fallback) {
  auto parsed = ParseBottleneck(name);
  return parsed.ok() ? *parsed : fallback;
}

}  // namespace kernelpro::roofline
