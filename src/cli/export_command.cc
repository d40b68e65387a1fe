// `kernelpro export`: one verified kernel as a pip-installable Python package (docs/export.md).
//
//   kernelpro export RUN_DIR --out DIR                        the run's best kernel (best.py's)
//   kernelpro export --problem P --candidate C --out DIR      a candidate, evaluated first
//
// Exit codes: 0 written; 1 nothing to export (the run has no best kernel, the candidate is not
// correct) or the export step failed; 2 bad input (both forms or neither, a folder without a
// run, a non-empty --out, a problem changed since the run).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <regex>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/option_groups.h"
#include "core/hash.h"
#include "export/package_export.h"
#include "store/run_layout.h"

namespace kernelpro::cli {
namespace {

namespace fs = std::filesystem;

struct ExportArgs {
  std::string run_dir;
  std::string problem;
  std::string candidate;
  std::string out_dir;
  std::string python;
  std::string name;
  bool quiet = false;
  eval::EvalOptions options;
};

int ExportFail(int code, const std::string& message) {
  std::cerr << "kernelpro export: " << message << "\n";
  return code;
}

// What goes into the package, however it was chosen.
struct Chosen {
  packaging::ExportRequest request;
  std::string label;  // the kernel, for the summary
};

std::string SpeedupText(const Json& facts) {
  const Json s = JsonGet<Json>(facts, "speedup", nullptr);
  if (!s.is_object()) return "not timed";
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.3fx [%.3f, %.3f]", JsonGet<double>(s, "estimate", 0),
                JsonGet<double>(s, "low", 0), JsonGet<double>(s, "high", 0));
  return buf;
}

// The candidate form: the normal evaluation first, so the package carries a verdict.
int ChooseCandidate(ExportArgs& args, eval::Executor& executor, Chosen& chosen) {
  std::unique_ptr<ProgressReporter> progress = MakeProgress("export", args.quiet);
  executor.set_progress(progress.get());
  auto report = executor.Evaluate(args.problem, {args.candidate});
  if (progress) progress->Finish();
  if (!report.ok()) return ExportFail(2, report.status().message());
  const eval::EvalResult& r = report->results.front();
  if (r.status != eval::EvalStatus::kCorrect) {
    return ExportFail(1, DisplayPath(args.candidate) + " is " + eval::EvalStatusName(r.status) +
                             ", not correct" + (r.message.empty() ? "" : ": " + r.message) +
                             "; only a correct candidate is exported");
  }
  auto info = InspectDevice(executor, args.options.device);
  chosen.request.problem = args.problem;
  chosen.request.candidate = args.candidate;
  chosen.request.device = args.options.device;
  chosen.request.evaluation = packaging::EvaluationFacts(
      eval::ToJson(r), "kernelpro eval of " + fs::path(args.candidate).filename().string(),
      info.ok() ? *info : Json::object());
  chosen.label = DisplayPath(args.candidate);
  return 0;
}

// The run-directory form: the run's best kernel and its stored verdict.
int ChooseRunBest(ExportArgs& args, Chosen& chosen) {
  // A folder that holds no run is bad input (2), not a run that found nothing (1).
  std::error_code unreadable;
  if (!fs::is_regular_file(fs::path(args.run_dir) / store::kRunStoreFileName, unreadable)) {
    return ExportFail(2, args.run_dir + " is not a run directory (no " +
                             std::string(store::kRunStoreFileName) +
                             "); give a run's directory, or --problem and --candidate");
  }
  auto best = packaging::ReadRunBest(args.run_dir);
  if (!best.ok()) {
    const bool none = best.status().code() == Status::Code::kNotFound;
    return ExportFail(none ? 1 : 2, args.run_dir + ": " + best.status().message());
  }
  const std::string problem = args.problem.empty() ? best->problem : args.problem;
  auto text = ReadFileText(problem);
  if (!text.ok()) {
    return ExportFail(2, "the run's problem " + problem + " cannot be read (" +
                             text.status().message() + "); give it with --problem");
  }
  if (!best->problem_sha256.empty() && Sha256Hex(*text) != best->problem_sha256) {
    return ExportFail(2, "the problem " + problem + " changed since the run began");
  }
  // The kernel's source as the store keeps it, in a scratch folder the export step may read.
  const fs::path scratch = fs::path(args.options.work_dir) / "export";
  std::error_code ec;
  fs::create_directories(scratch, ec);
  const std::string name =
      best->candidate_file.empty() ? "best.py" : fs::path(best->candidate_file).filename().string();
  const std::string candidate = (scratch / name).string();
  if (Status s = WriteFileAtomically(candidate, best->candidate_source); !s.ok()) {
    return ExportFail(2, s.message());
  }
  chosen.request.problem = problem;
  chosen.request.candidate = candidate;
  chosen.request.device = best->device;
  chosen.request.evaluation = packaging::EvaluationFacts(
      best->result,
      "the best kernel of run " + args.run_dir + " (node " + best->node + ", " +
          (best->candidate_file.empty() ? "best.py" : best->candidate_file) + ")",
      Json{{"gpu_name", best->device_name}});
  chosen.label = best->node + " of " + DisplayPath(args.run_dir);
  return 0;
}

void PrintSummary(const Chosen& chosen, const packaging::ExportedPackage& p, const std::string& out,
                  const std::string& python) {
  std::cout << "exported    " << p.package << " (pip: " << p.distribution << ") in "
            << DisplayPath(out) << "\n";
  std::cout << "operator    torch.ops.kernelpro." << p.op_name << "\n";
  std::cout << "kernel      " << chosen.label << ": "
            << JsonGet<std::string>(chosen.request.evaluation, "status", "unknown") << ", "
            << SpeedupText(chosen.request.evaluation) << "\n";
  if (!packaging::ShownFaster(chosen.request.evaluation)) {
    std::cout << "warning     not shown faster than the reference ("
              << SpeedupText(chosen.request.evaluation)
              << "): exported as asked; the package's README says so too\n";
  }
  std::cout << "extensions  "
            << (p.extensions.empty() ? std::string("none (shipped as Python)") : "");
  for (std::size_t i = 0; i < p.extensions.size(); ++i) {
    std::cout << (i ? ", " : "") << p.extensions[i];
  }
  std::cout << "\n";
  for (std::size_t i = 0; i < p.guards.size(); ++i) {
    std::cout << (i ? "            " : "guards      ") << p.guards[i] << "\n";
  }
  for (const std::string& note : p.notes) std::cout << "note        " << note << "\n";
  // The interpreter kernelpro runs (it has torch): a bare pip or python may not be that one.
  std::cout << "install     " << python << " -m pip install --no-build-isolation "
            << DisplayPath(out) << "\n";
  std::cout << "check       " << python << " -m " << p.package << ".selftest\n";
}

// --out must be new or empty: an export never mixes with older files.
bool OutIsUsable(const std::string& out) {
  std::error_code ec;
  if (!fs::exists(out, ec)) return true;
  return fs::is_directory(out, ec) && fs::is_empty(out, ec);
}

int RunExport(ExportArgs& args) {
  const bool from_run = !args.run_dir.empty();
  if (from_run == !args.candidate.empty() || (!from_run && args.problem.empty())) {
    return ExportFail(2, "give a run directory, or --problem and --candidate (not both)");
  }
  if (!OutIsUsable(args.out_dir)) {
    return ExportFail(2, "--out " + args.out_dir + " exists and is not an empty folder");
  }
  auto executor = MakeExecutor(args.options, args.python, "export");
  if (!executor) return 2;
  Chosen chosen;
  if (int code = from_run ? ChooseRunBest(args, chosen) : ChooseCandidate(args, *executor, chosen);
      code != 0) {
    return code;
  }
  auto out = CreatedDirectory::Create(args.out_dir, "--out");
  if (!out.ok()) return ExportFail(2, out.status().message());
  chosen.request.out_dir = fs::absolute(args.out_dir).lexically_normal().string();
  chosen.request.name = args.name;
  chosen.request.problem = fs::absolute(chosen.request.problem).string();
  chosen.request.candidate = fs::absolute(chosen.request.candidate).string();
  auto package = packaging::WritePackage(*executor, chosen.request);
  if (!package.ok()) {
    out->Undo();
    return ExportFail(1, package.status().message());
  }
  PrintSummary(chosen, *package, args.out_dir, executor->worker().python());
  return 0;
}

}  // namespace

CommandRunner RegisterExportCommand(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd =
      app.add_subcommand("export",
                         "Write a verified kernel as a pip-installable Python package with a torch "
                         "custom operator (a run's best kernel, or a candidate evaluated first)");
  cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_option("run_dir", args->run_dir,
                  "A run directory (holds run.db): export its best kernel, best.py's")
      ->check(CLI::ExistingDirectory);
  AddOption(*cmd, kProblemOption, args->problem)->check(InputFile());
  AddOption(*cmd, kCandidateOption, args->candidate)->check(InputFile());
  cmd->add_option("--out", args->out_dir, "The package's folder (new or empty)")->required();
  cmd->add_option("--name", args->name,
                  "The operator's name: torch.ops.kernelpro.NAME, package kernelpro_NAME "
                  "(default: from the problem file's name)")
      ->check(CLI::Validator(
          [](std::string& v) {
            static const std::regex kName("[a-z_][a-z0-9_]*");
            return std::regex_match(v, kName)
                       ? std::string()
                       : "a lowercase Python identifier (letters, digits, _), not " + v;
          },
          "NAME"));
  AddDeviceOption(*cmd, args->options.device);
  AddExecutorOptions(*cmd, args->options, args->python);
  AddProgressOptions(*cmd, args->quiet);
  cmd->footer(
      "With RUN_DIR the run's device and problem are used (--problem: the problem file when the "
      "run's stored path is gone; it must be unchanged). Install the result with pip install "
      "--no-build-isolation DIR with the Python that has torch, as the output says "
      "(docs/export.md).");
  return [args] { return RunExport(*args); };
}

}  // namespace kernelpro::cli
