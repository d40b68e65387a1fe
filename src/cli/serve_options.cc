#include "cli/serve_options.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>

#include "cli/option_groups.h"

namespace kernelpro::cli {
namespace {

std::string Dashed(std::string name) {
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

std::string Underscored(std::string name) {
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

// The request's options as command-line words, in order; InvalidArgument for a value no command
// line could carry (null, an object, a flag given a number).
Result<std::vector<std::string>> Words(const Json& options, const CLI::App& app) {
  std::vector<std::string> words;
  for (const auto& [key, value] : options.items()) {
    const std::string name = Underscored(key);
    const std::string flag = "--" + Dashed(name);
    const CLI::Option* option = app.get_option_no_throw(flag);
    const auto& allowed = RequestOptionNames();
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      if (option != nullptr) {
        return Status::InvalidArgument("option '" + name +
                                       "' is the server's to set, not a request's");
      }
      std::string names;
      for (const std::string& n : allowed) names += (names.empty() ? "" : ", ") + n;
      return Status::InvalidArgument("unknown option '" + name + "' (a request may set: " + names +
                                     ")");
    }
    const bool is_flag = option != nullptr && option->get_expected_max() == 0;
    const std::vector<Json> values =
        value.is_array() ? value.get<std::vector<Json>>() : std::vector<Json>{value};
    for (const Json& v : values) {
      if (is_flag) {
        if (!v.is_boolean()) return Status::InvalidArgument(name + " is a flag: true or false");
        if (v.get<bool>()) words.push_back(flag);
        continue;
      }
      words.push_back(flag);
      if (v.is_string()) {
        words.push_back(v.get<std::string>());
      } else if (v.is_number_integer()) {
        words.push_back(std::to_string(v.get<long long>()));
      } else if (v.is_number()) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", v.get<double>());
        words.push_back(buf);
      } else {
        return Status::InvalidArgument(name + " takes a number or a string");
      }
    }
  }
  return words;
}

}  // namespace

const std::vector<std::string>& RequestOptionNames() {
  static const std::vector<std::string> names = {"trials",
                                                 "extra_trials",
                                                 "timing_trials",
                                                 "timing_rounds",
                                                 "time_budget",
                                                 "atol",
                                                 "rtol",
                                                 "precision_check",
                                                 "correctness",
                                                 "torch_ops",
                                                 "allow_torch_op",
                                                 "no_static_checks",
                                                 "compile_baseline",
                                                 "shapes",
                                                 "require_shape_generality",
                                                 "timeout",
                                                 "build_timeout",
                                                 "seed",
                                                 "build_only"};
  return names;
}

Result<eval::EvalOptions> EvalRequestOptions::Resolve(const Json& options) const {
  eval::EvalOptions o = defaults_;
  std::string python;
  CLI::App app("the request's options");
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  AddExecutorOptions(app, o, python);
  AddOption(app, kSeedOption, o.seed);
  AddOption(app, kBuildOnlyOption, o.build_only);
  auto words = Words(options, app);
  if (!words.ok()) return words.status();
  std::vector<std::string> reversed(words->rbegin(), words->rend());  // CLI11 parses from the back
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return Status::InvalidArgument(std::string("options: ") + e.what());
  }
  eval::KeepProcessWorld(defaults_, o);  // whatever CLI11 filled in from the environment
  if (o.step_timeout_s > defaults_.step_timeout_s) {
    return Status::InvalidArgument("timeout is at most " +
                                   std::to_string(defaults_.step_timeout_s) + " s on this server");
  }
  if (o.build_timeout_s > defaults_.build_timeout_s) {
    return Status::InvalidArgument("build_timeout is at most " +
                                   std::to_string(defaults_.build_timeout_s) + " s on this server");
  }
  return o;
}

}  // namespace kernelpro::cli
