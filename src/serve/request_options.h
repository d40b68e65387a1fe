// RequestOptions: how a request's "options" become the eval::EvalOptions of its evaluation. The
// production one (cli/serve_options.h) parses them with `kernelpro eval`'s own option
// declarations, so a request is checked exactly as the command line is; the HTTP layer only
// knows this interface.
#pragma once

#include "core/json_io.h"
#include "core/status.h"
#include "eval/eval_options.h"

namespace kernelpro::serve {

class RequestOptions {
 public:
  virtual ~RequestOptions() = default;
  // The server's defaults with `options` applied: a JSON object of `kernelpro eval` long option
  // names (underscores or dashes: "timing_trials" or "timing-trials") to numbers, strings,
  // booleans (flags) or lists of them (repeatable options). InvalidArgument, one line naming
  // the option, when one is unknown, is the server's to set (paths, GPUs, the sandbox), or has a
  // value the command line would refuse.
  virtual Result<eval::EvalOptions> Resolve(const Json& options) const = 0;
};

}  // namespace kernelpro::serve
