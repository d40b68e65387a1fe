// `kernelpro report RUN_DIR [--out DIR]`: renders a run's report.md, report.html and best.py again
// from its run store, with this binary's report code, without running anything: for a run whose
// process was killed before it wrote them, a run directory copied from another machine, or a
// report format that changed since. With --out the files go to DIR, together with the candidate
// files the reports link (candidates/NNNN.py, from the store), so DIR is a complete report.
//
// Exit codes: 0 written, 2 bad input (no run store, nothing readable, an unwritable DIR).
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "core/json_io.h"
#include "report/stored_run.h"
#include "store/run_layout.h"
#include "store/run_store.h"

namespace kernelpro::cli {
namespace {

namespace fs = std::filesystem;

struct ReportArgs {
  std::string run_dir;
  std::string out_dir;  // "" = the run directory
};

int RunReport(const ReportArgs& args) {
  auto fail = [](const std::string& message) {
    std::cerr << "kernelpro report: " << message << "\n";
    return 2;
  };
  store::RunStoreOptions options;
  options.create = false;
  auto store = store::RunStore::Open(args.run_dir, options);
  if (!store.ok()) return fail(args.run_dir + ": " + store.status().message());
  auto run = report::ReadStoredRun(**store, args.run_dir);
  if (!run.ok()) return fail(args.run_dir + ": " + run.status().message());
  const report::RunReportInput& input = (*run)->input;

  const std::string out = args.out_dir.empty() ? args.run_dir : args.out_dir;
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) return fail("cannot create " + out + ": " + ec.message());
  // The candidate files the reports link, where the output directory lacks them.
  const store::RunLayout layout(out);
  for (const auto& [id, info] : (*run)->nodes) {
    if (info.candidate_id == 0 || info.file.empty()) continue;
    const std::string path = layout.Path(info.file);
    if (fs::exists(path, ec)) continue;
    auto candidate = (*store)->GetCandidate(info.candidate_id);
    if (!candidate.ok()) continue;  // the report still names the file
    fs::create_directories(fs::path(path).parent_path(), ec);
    if (Status s = WriteFileAtomically(path, candidate->source); !s.ok()) return fail(s.message());
  }
  std::optional<std::string> best_source;
  if (!input.best_source.empty()) best_source = input.best_source;
  if (Status s = report::WriteRunFiles(input, best_source, out); !s.ok()) {
    return fail(s.message());
  }
  std::cout << "report: " << layout.markdown_report() << " (HTML: " << layout.html_report()
            << ")\n";
  if (best_source) std::cout << "kernel: " << layout.best_kernel() << "\n";
  return 0;
}

}  // namespace

CommandRunner RegisterReportCommand(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Write a run's report.md, report.html and best.py again from its run store (nothing runs)");
  cmd->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_option("run_dir", args->run_dir, "The run directory (holds run.db)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--out", args->out_dir,
                  "Write the reports (and the candidate files they link) to this directory "
                  "instead of the run directory");
  return [args] { return RunReport(*args); };
}

}  // namespace kernelpro::cli
