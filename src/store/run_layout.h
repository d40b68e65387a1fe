// Where everything of one optimisation run lives in its run directory. Every module asks here
// for a path instead of knowing a file name:
//
//   RUN_DIR/run.db              the run store (every step, exchange and verdict)
//           run.lock            held by the one process driving the run
//           stage1.json         the reference's Stage-1 analysis (`kernelpro analyze --json` form)
//           memory.jsonl        the search memory, one entry per line
//           candidates/NNNN.py  every candidate source, by its run store id
//           work/               build and worker scratch
//           best.py             the fastest validated kernel, with how it was measured
//           report.md           the run's report; report.html the same as one offline page
//
// A RunLayout is a value: it computes paths and touches no file.
#pragma once

#include <cstdint>
#include <string>

namespace kernelpro::store {

inline constexpr const char* kRunStoreFileName = "run.db";
inline constexpr const char* kRunLockFileName = "run.lock";

class RunLayout {
 public:
  explicit RunLayout(std::string run_dir) : dir_(std::move(run_dir)) {}

  const std::string& dir() const { return dir_; }
  std::string store() const { return Path(kRunStoreFileName); }
  std::string lock() const { return Path(kRunLockFileName); }
  std::string stage1() const { return Path("stage1.json"); }
  std::string memory() const { return Path("memory.jsonl"); }
  std::string work() const { return Path("work"); }
  std::string best_kernel() const { return Path("best.py"); }
  std::string markdown_report() const { return Path("report.md"); }
  std::string html_report() const { return Path("report.html"); }

  // A candidate's file, relative to the run directory ("candidates/0042.py"): the form the run
  // store and the reports keep, so a moved run directory still finds its candidates.
  static std::string CandidateFile(std::int64_t candidate_id);
  // A run-directory-relative path made absolute under this run directory.
  std::string Path(const std::string& relative) const;

 private:
  std::string dir_;
};

}  // namespace kernelpro::store
