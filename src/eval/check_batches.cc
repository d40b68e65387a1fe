#include "eval/check_batches.h"

#include <map>

namespace kernelpro::eval {

namespace {

std::int64_t DtypeBytes(std::string dtype) {
  if (dtype.rfind("torch.", 0) == 0) dtype = dtype.substr(6);
  static const std::map<std::string, std::int64_t> kBytes = {
      {"float32", 4},        {"float", 4},           {"float16", 2},     {"half", 2},
      {"bfloat16", 2},       {"float64", 8},         {"double", 8},      {"int64", 8},
      {"long", 8},           {"int32", 4},           {"int", 4},         {"int16", 2},
      {"int8", 1},           {"uint8", 1},           {"bool", 1},        {"complex64", 8},
      {"complex128", 16},    {"uint16", 2},          {"uint32", 4},      {"uint64", 8},
      {"complex32", 4},      {"chalf", 4},           {"cfloat", 8},      {"cdouble", 16},
      {"float8_e4m3fn", 1},  {"float8_e4m3fnuz", 1}, {"float8_e5m2", 1}, {"float8_e5m2fnuz", 1},
      {"float8_e8m0fnu", 1}, {"float4_e2m1fn_x2", 1}};
  auto it = kBytes.find(dtype);
  return it == kBytes.end() ? 8 : it->second;
}

}  // namespace

std::int64_t OutputBytes(const Json& outputs) {
  std::int64_t total = 0;
  for (const Json& meta : outputs) {
    std::int64_t n = DtypeBytes(JsonGet<std::string>(meta, "dtype", ""));
    for (const Json& d : JsonGet<Json>(meta, "shape", Json::array())) {
      n *= d.is_number_integer() ? d.get<std::int64_t>() : 1;
    }
    total += n;
  }
  return total;
}

std::vector<std::vector<std::string>> CheckBatches(const Json& reference,
                                                   const std::vector<std::string>& names,
                                                   std::int64_t max_bytes) {
  const std::int64_t each = OutputBytes(JsonGet<Json>(reference, "outputs", Json::array()));
  // The refill's outputs come with the last batch: counted as one more trial.
  if (each * static_cast<std::int64_t>(names.size() + 1) <= max_bytes || names.empty()) {
    return {names};
  }
  std::vector<std::vector<std::string>> batches;
  std::int64_t held = 0;
  for (const std::string& name : names) {
    if (batches.empty() || held + each > max_bytes) {
      batches.emplace_back();
      held = 0;
    }
    batches.back().push_back(name);
    held += each;
  }
  return batches;
}

}  // namespace kernelpro::eval
