#include "core/status.h"

namespace kernelpro {

std::string Status::ToString() const {
  const char* name = "OK";
  switch (code_) {
    case Code::kOk: return "OK";
    case Code::kInvalidArgument: name = "InvalidArgument"; break;
    case Code::kNotFound: name = "NotFound"; break;
    case Code::kIoError: name = "IoError"; break;
    case Code::kTimeout: name = "Timeout"; break;
    case Code::kInternal: name = "Internal"; break;
    case Code::kUnavailable: name = "Unavailable"; break;
  }
  return std::string(name) + ": " + message_;
}

}  // namespace kernelpro
