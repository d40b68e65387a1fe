// The production serve::RequestOptions: a request's "options" parsed by `kernelpro eval`'s own
// option declarations (option_groups.h), so a request is checked exactly as the command line is
// ("--trials: Value 0 not in range [1 - 1000]"), on top of the server's defaults.
//
// A request may set only what changes how one evaluation is judged and timed: the names of
// RequestOptionNames(). Everything that names the server's world (paths, the interpreter, GPUs,
// the sandbox, parallel builds) is the server's, and asking for it is refused, as is an unknown
// name. Timeouts may be lowered, not raised past the server's.
#pragma once

#include <string>
#include <vector>

#include "serve/request_options.h"

namespace kernelpro::cli {

class EvalRequestOptions : public serve::RequestOptions {
 public:
  explicit EvalRequestOptions(eval::EvalOptions defaults) : defaults_(std::move(defaults)) {}
  Result<eval::EvalOptions> Resolve(const Json& options) const override;

 private:
  eval::EvalOptions defaults_;
};

// The options a request may set, in the underscore form: "trials", "timing_trials", ...
const std::vector<std::string>& RequestOptionNames();

}  // namespace kernelpro::cli
