// Reading and writing JSON files (nlohmann::json) with errors as Status values.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace kernelpro {

using Json = nlohmann::json;

Result<Json> ReadJsonFile(const std::string& path);
// Writes atomically: a temporary file beside `path`, then rename.
Status WriteJsonFile(const std::string& path, const Json& value);

// Serialises for output: invalid UTF-8 (a kernel name, a compiler message) is replaced rather than
// throwing, so printing a record can never fail. indent -1: one line.
std::string DumpJson(const Json& value, int indent = -1);

// Typed field access with a default, for reading results forgivingly.
template <typename T>
T JsonGet(const Json& object, const char* key, T fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const Json::exception&) {
    return fallback;
  }
}

}  // namespace kernelpro
