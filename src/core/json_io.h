// Reading and writing JSON (nlohmann::json) and other small files, with errors as Status values.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/status.h"

namespace kernelpro {

using Json = nlohmann::json;

Result<Json> ReadJsonFile(const std::string& path);
// A whole file's bytes; NotFound when it cannot be opened.
Result<std::string> ReadFileText(const std::string& path);
// Writes atomically: a temporary file beside `path`, then rename.
Status WriteJsonFile(const std::string& path, const Json& value);
// The same for any text; creates the missing parent folders first. A reader of `path` sees the
// old file or the whole new one, never half of it.
Status WriteFileAtomically(const std::string& path, const std::string& text);

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

// A number field, or none when it is absent, null or not a number.
inline std::optional<double> JsonNumber(const Json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// An optional number as JSON: the number, or null.
inline Json NumberOrNull(const std::optional<double>& value) {
  return value ? Json(*value) : Json(nullptr);
}

}  // namespace kernelpro
