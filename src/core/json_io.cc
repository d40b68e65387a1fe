#include "core/json_io.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace kernelpro {

Result<Json> ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot open " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  Json value = Json::parse(buffer.str(), nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return Status::InvalidArgument("malformed JSON in " + path);
  return value;
}

std::string DumpJson(const Json& value, int indent) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

Status WriteJsonFile(const std::string& path, const Json& value) {
  std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp);
    if (!out) return Status::IoError("cannot write " + tmp);
    out << DumpJson(value, 1) << "\n";
    if (!out) return Status::IoError("write failed: " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return Status::IoError("cannot rename to " + path);
  return Status::Ok();
}

}  // namespace kernelpro
