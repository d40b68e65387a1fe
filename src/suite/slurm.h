// Running a suite's shards as a Slurm job array, and asking Slurm how the array's tasks are doing.
//
// A suite's tasks are split statically into N shards (suite.json order, task i in shard i % N);
// under Slurm each shard is one task of a job array whose script runs
// `kernelpro suite run SUITE --shard $SLURM_ARRAY_TASK_ID --shards N`. All tasks write into the
// shared suite directory; the suite's own files (claims, results) keep them apart, so this file
// only submits and observes:
//
//   SubmitSlurmArray     writes SUITE/slurm/job-<n>.sh, runs `sbatch --parsable [user options]
//                        job-<n>.sh`, and appends one line to SUITE/slurm/submissions.jsonl
//   QuerySlurmArrayStates  per shard of one submission: PENDING, RUNNING, COMPLETED, FAILED,
//                        PREEMPTED, CANCELLED, TIMEOUT, ... as Slurm names them, or "gone" when
//                        Slurm no longer knows the task (finished long ago on a cluster without
//                        accounting: the suite's task files then say whether it did its work)
//
// Resubmission (`suite resume --slurm`) submits an array of only the shards that still have
// unfinished tasks ("0,3,5"); the shard count N stays that of the suite, so every task keeps its
// shard. Slurm is reached through its commands (sbatch, squeue, sacct) found on PATH, never
// through a shell. Functions are safe to call from any thread; two concurrent submissions to one
// suite get distinct script numbers.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_io.h"
#include "core/status.h"

namespace kernelpro::suite {

// What to submit.
struct SlurmArrayRequest {
  std::string suite_dir;         // the suite directory; made absolute in the script
  std::string kernelpro_binary;  // the kernelpro the array tasks run; made absolute
  int shards = 1;                // N, the suite's shard count (task i belongs to shard i % N)
  // The shards to run, each in [0, N); empty: all of 0..N-1. Duplicates are ignored.
  std::vector<int> only_shards;
  // The user's sbatch options as typed after --slurm ("--partition=gpu --gres=gpu:1"), split the
  // way a shell would (SplitShellWords). They come before the script on sbatch's command line, so
  // they override the script's own #SBATCH lines (--output, --job-name), except --array, which
  // kernelpro owns and refuses.
  std::string sbatch_options;
  // Appended to `suite run SUITE --shard K --shards N` in the script (e.g. {"--gpus", "0,1"}).
  std::vector<std::string> run_args;
};

// One sbatch call, as recorded in SUITE/slurm/submissions.jsonl.
struct SlurmSubmission {
  std::string job_id;                    // the array's job id ("4711"), from sbatch --parsable
  int shards = 0;                        // N at submission
  std::string array_spec;                // "0-3", "0,3,5": the array tasks = the shards they run
  std::vector<std::string> sbatch_args;  // the user's options, split
  std::string submitted_at;              // UTC, "2026-05-01T12:00:00Z"
  std::string script;                    // absolute path of the job script

  Json ToJson() const;
  // Forgiving: missing fields keep their defaults.
  static SlurmSubmission FromJson(const Json& json);
};

// The words of `text` as a POSIX shell would split them (without expansions): whitespace
// separates, '...' keeps everything literally, "..." keeps everything but lets \" \\ \$ \`
// escape, and a backslash outside quotes escapes the next character. Unbalanced quotes or a
// trailing backslash are an InvalidArgument naming the problem.
//   SplitShellWords("--partition=gpu --comment='two words'") -> {"--partition=gpu",
//                                                                "--comment=two words"}
Result<std::vector<std::string>> SplitShellWords(std::string_view text);

// `word` quoted for a POSIX shell when it needs it: "abc" stays, "a b" -> 'a b', "it's" ->
// 'it'\''s'.
std::string ShellQuote(std::string_view word);

// A Slurm --array spec for a set of shards: consecutive runs become ranges. {0,1,2,3} -> "0-3",
// {0,3,5} -> "0,3,5", {0,1,2,5} -> "0-2,5", {4} -> "4". The shards are sorted and deduplicated
// first.
std::string ArraySpec(std::vector<int> shards);
// The shards an array spec names ("0-2,5" -> {0,1,2,5}); a "%K" throttle suffix and "[...]"
// brackets (as squeue prints pending tasks: "4711_[3-5]") are accepted. InvalidArgument when it
// is not one.
Result<std::vector<int>> ParseArraySpec(std::string_view spec);

// The job script's text for `request`, with `array_spec` as its --array value.
std::string RenderSlurmScript(const SlurmArrayRequest& request, const std::string& array_spec);

// Writes the script, runs sbatch, records the submission. Errors: no sbatch on PATH; sbatch
// failing (its stderr in the message); output that is not a job id; a bad shard list or
// unbalanced quotes in the options (InvalidArgument).
Result<SlurmSubmission> SubmitSlurmArray(const SlurmArrayRequest& request);

// Every submission recorded for the suite, oldest first; none when the suite was never submitted.
// Lines that do not parse (a line cut short by a crash) are skipped.
Result<std::vector<SlurmSubmission>> ReadSlurmSubmissions(const std::string& suite_dir);

// The state of each array task (shard -> state) of `submission`, for every shard it names.
// squeue (with finished tasks Slurm still holds) answers first; sacct then, when the cluster keeps
// accounting; a task neither knows is "gone". A state is Slurm's word, upper case, without
// qualifiers ("CANCELLED by 0" -> "CANCELLED"). Fails only when squeue is missing or fails for a
// reason other than not knowing the job.
Result<std::map<int, std::string>> QuerySlurmArrayStates(const SlurmSubmission& submission);

// The shards that a recorded submission of the suite still runs or will run (an active state,
// below): what `resume` must not submit again. Errors as QuerySlurmArrayStates.
Result<std::set<int>> ActiveSlurmShards(const std::string& suite_dir);

// Whether a task in `state` may still run or is running (PENDING, RUNNING, CONFIGURING,
// COMPLETING, REQUEUED, RESIZING, SUSPENDED): its shard must not be resubmitted.
bool SlurmStateIsActive(std::string_view state);

}  // namespace kernelpro::suite
