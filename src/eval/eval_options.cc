#include "eval/eval_options.h"

#include "core/text.h"

namespace kernelpro::eval {
namespace {

constexpr double kAllcloseAtol = 1e-2;
constexpr double kAllcloseRtol = 1e-3;

}  // namespace

std::string CorrectnessCriterion(const EvalOptions& o) {
  if (o.atol == kAllcloseAtol && o.rtol == kAllcloseRtol) {
    if (o.precision_policy == "fail") return "strict";
    if (o.precision_policy == "warn") return "kernelbench";
  }
  return "custom (atol " + FormatSignificant(o.atol) + ", rtol " + FormatSignificant(o.rtol) +
         ", precision-check " + o.precision_policy + ")";
}

std::string DescribeCorrectness(const EvalOptions& o) {
  std::string text = "allclose(atol " + FormatSignificant(o.atol) + ", rtol " +
                     FormatSignificant(o.rtol) + ") on every trial";
  if (o.precision_policy == "fail") {
    text += "; an fp32 problem also within " + FormatSignificant(o.precision_factor) +
            "x fp32's own error of an fp64 reference, or " + FormatSignificant(o.precision_bound) +
            " where that is smaller";
  } else if (o.precision_policy == "warn") {
    text += "; precision against fp64 reported, not failed";
  } else {
    text += "; precision against fp64 not checked";
  }
  if (o.require_shape_generality) text += "; every checked shape too (--require-shape-generality)";
  return text;
}

Status ApplyCorrectness(const std::string& name, EvalOptions& o) {
  if (name != "strict" && name != "kernelbench") {
    return Status::InvalidArgument("unknown correctness criterion '" + name +
                                   "': give strict or kernelbench");
  }
  o.atol = kAllcloseAtol;
  o.rtol = kAllcloseRtol;
  o.precision_policy = name == "strict" ? "fail" : "warn";
  return Status::Ok();
}

void KeepProcessWorld(const EvalOptions& world, EvalOptions& options) {
  options.device = world.device;
  options.gpus = world.gpus;
  options.cache_dir = world.cache_dir;
  options.work_dir = world.work_dir;
  options.unsafe_no_sandbox = world.unsafe_no_sandbox;
  options.pass_env = world.pass_env;
  options.sandbox_read_only = world.sandbox_read_only;
  options.cutlass_include_dir = world.cutlass_include_dir;
  options.cutlass_version = world.cutlass_version;
  options.jobs = world.jobs;
  options.precompiled_headers = world.precompiled_headers;
}

Json ToJson(const EvalOptions& o) {
  return Json{{"device", o.device},
              {"correctness_trials", o.correctness_trials},
              {"extra_trials", o.extra_trials},
              {"fp64_trials", o.fp64_trials},
              {"timing_inputs", o.timing_inputs},
              {"timing_trials", o.timing_trials},
              {"timing_rounds", o.timing_rounds},
              {"time_budget_s", o.time_budget_s},
              {"verify_bytes", o.verify_bytes},
              {"check_batch_bytes", o.check_batch_bytes},
              {"atol", o.atol},
              {"rtol", o.rtol},
              {"vacuous_rel_tol", o.vacuous_rel_tol},
              {"precision_policy", o.precision_policy},
              {"precision_bound", o.precision_bound},
              {"precision_factor", o.precision_factor},
              {"torch_ops_policy", o.torch_ops_policy},
              {"allowed_ops", o.allowed_ops},
              {"static_checks", o.static_checks},
              {"compile_baseline", o.compile_baseline},
              {"shapes", o.shapes},
              {"require_shape_generality", o.require_shape_generality},
              {"precompiled_headers", o.precompiled_headers},
              {"jobs", o.jobs},
              {"gpus", o.gpus},
              {"seed", o.seed},
              {"init_seed", o.init_seed},
              {"flush_bytes", o.flush_bytes},
              {"cache_dir", o.cache_dir},
              {"work_dir", o.work_dir},
              {"step_timeout_s", o.step_timeout_s},
              {"build_timeout_s", o.build_timeout_s},
              {"reference_timeout_s", o.reference_timeout_s},
              // Not --unsafe-no-sandbox: running unconfined is chosen anew by each process.
              {"pass_env", o.pass_env},
              {"sandbox_read_only", o.sandbox_read_only},
              {"cutlass_include_dir", o.cutlass_include_dir},
              {"cutlass_version", o.cutlass_version}};
}

EvalOptions EvalOptionsFromJson(const Json& j) {
  EvalOptions o;
#define KP_FIELD(name) o.name = JsonGet<decltype(o.name)>(j, #name, o.name)
  KP_FIELD(device);
  KP_FIELD(correctness_trials);
  KP_FIELD(extra_trials);
  KP_FIELD(fp64_trials);
  KP_FIELD(timing_inputs);
  KP_FIELD(timing_trials);
  KP_FIELD(timing_rounds);
  KP_FIELD(time_budget_s);
  KP_FIELD(verify_bytes);
  KP_FIELD(check_batch_bytes);
  KP_FIELD(atol);
  KP_FIELD(rtol);
  KP_FIELD(vacuous_rel_tol);
  KP_FIELD(precision_policy);
  KP_FIELD(precision_bound);
  KP_FIELD(precision_factor);
  KP_FIELD(torch_ops_policy);
  KP_FIELD(allowed_ops);
  KP_FIELD(static_checks);
  KP_FIELD(compile_baseline);
  KP_FIELD(shapes);
  KP_FIELD(require_shape_generality);
  KP_FIELD(precompiled_headers);
  KP_FIELD(jobs);
  KP_FIELD(gpus);
  KP_FIELD(seed);
  KP_FIELD(init_seed);
  KP_FIELD(flush_bytes);
  KP_FIELD(cache_dir);
  KP_FIELD(work_dir);
  KP_FIELD(step_timeout_s);
  KP_FIELD(build_timeout_s);
  KP_FIELD(reference_timeout_s);
  KP_FIELD(pass_env);
  KP_FIELD(sandbox_read_only);
  KP_FIELD(cutlass_include_dir);
  KP_FIELD(cutlass_version);
#undef KP_FIELD
  return o;
}

}  // namespace kernelpro::eval
