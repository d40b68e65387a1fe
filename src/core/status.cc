#include "core/status.h"

#include <array>
#include <utility>

#include "core/enum_names.h"

namespace kernelpro {
namespace {

constexpr std::array<std::pair<Status::Code, const char*>, 7> kCodeNames = {
    {{Status::Code::kOk, "OK"},
     {Status::Code::kInvalidArgument, "InvalidArgument"},
     {Status::Code::kNotFound, "NotFound"},
     {Status::Code::kIoError, "IoError"},
     {Status::Code::kTimeout, "Timeout"},
     {Status::Code::kInternal, "Internal"},
     {Status::Code::kUnavailable, "Unavailable"}}};

}  // namespace

std::string Status::ToString() const {
  if (code_ == Code::kOk) return "OK";
  return std::string(NameOf(kCodeNames, code_)) + ": " + message_;
}

}  // namespace kernelpro
