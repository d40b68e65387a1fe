// `kernelpro export`: one verified kernel as a pip-installable Python package (docs/export.md).
//
// The package is written by the worker's `export` step (python/kernelpro_worker/export_step.py),
// run in the sandbox since it imports the candidate: the candidate's load_inline calls are
// captured (not built) and written as csrc/<name>/ with a setup.py that compiles them with torch's
// BuildExtension at install time; the candidate and the problem ship verbatim; the package
// registers torch.ops.kernelpro.<op>, which runs the kernel for the devices, dtypes and shapes it
// was verified on (guards.json) and the reference otherwise. This module decides what goes in:
// which kernel (a run's best, by the run's own rule, or a candidate just evaluated), and the
// verdict's facts the package's README and guards are made from.
//
// Functions only; each call reads or writes its own files. Thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/status.h"
#include "eval/executor.h"

namespace kernelpro::packaging {

// What the export step is given besides the executor's base request.
struct ExportRequest {
  std::string problem;    // the problem file (class Model, get_inputs, get_init_inputs)
  std::string candidate;  // the candidate file (class ModelNew)
  std::string device;     // "cuda" or "cpu": where the kernel was verified, and will be served
  std::string out_dir;    // the package's folder; exists and is empty
  Json evaluation = Json::object();  // EvaluationFacts
  // The operator's name (`--name`): torch.ops.kernelpro.<name>, package kernelpro_<name>; empty:
  // derived from the problem file's name.
  std::string name;
};

// Whether a verdict's facts (EvaluationFacts) show the kernel faster than the reference: its
// speedup interval lies wholly above 1x. A kernel that was not timed, or whose interval reaches
// 1x or below, is exported with a warning (the command's output and the package's README).
bool ShownFaster(const Json& evaluation);

// What the export step wrote.
struct ExportedPackage {
  std::string package;                  // the import name: kernelpro_<op>
  std::string distribution;             // the pip name: kernelpro-<op>
  std::string op_name;                  // torch.ops.kernelpro.<op_name>
  std::vector<std::string> extensions;  // the captured load_inline extensions, by name
  std::vector<std::string> guards;      // how the guards were derived, one line each
  std::vector<std::string> notes;
  std::vector<std::string> files;  // relative to out_dir
};

// The facts of a verdict the package keeps (export.json "evaluation", the README): status,
// criterion, speedup {estimate, low, high}, reference_ms, candidate_ms, timing_method, shapes
// (the eval result's shape checks, when it has them), plus `source` (where the verdict comes
// from, for people) and the device's name and torch version from `device_info` (the inspect
// step's info; may be empty). `eval_result` is eval::ToJson(EvalResult) or a stored one.
Json EvaluationFacts(const Json& eval_result, const std::string& source, const Json& device_info);

// Runs the export step (sandboxed) and returns what it wrote. An error names why (the step's
// message: e.g. a candidate that builds with cpp_extension.load).
Result<ExportedPackage> WritePackage(const eval::Executor& executor, const ExportRequest& request);

// A run's best kernel, the one its best.py holds (search/tree.h BestNode), with its stored
// verdict.
struct RunBest {
  std::string problem;           // the run's problem file, as stored
  std::string problem_sha256;    // of its text when the run began
  std::string device;            // the run's device
  std::string device_name;       // from the run's Stage 1 ("" when unknown)
  std::string candidate_source;  // the kernel's source
  std::string candidate_file;    // RUN_DIR-relative ("candidates/0008.py")
  std::string node;              // "n8", for messages
  Json result = Json::object();  // the stored eval result (eval::ToJson form)
};

// NotFound ("the run has no best kernel: ...") when no kernel of the run was shown faster than
// the reference; other errors when the run store cannot be read.
Result<RunBest> ReadRunBest(const std::string& run_dir);

}  // namespace kernelpro::packaging
