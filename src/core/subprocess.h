// Running a child process the way kernelpro runs untrusted work: in its own process group, under
// a wall-clock timeout and resource limits, with its output captured but bounded.
//
// Candidate kernels run inside worker processes; a worker may segfault, hang in an endless
// kernel, or print gigabytes. RunProcess never lets any of that reach the caller: on timeout the
// whole process group is killed (SIGKILL), output beyond the capture limit is drained and dropped
// (head and tail are kept), and a child that prints more than `kill_after_output_bytes` is killed.
// The call blocks the calling thread until the child and its group are gone. It is safe to call
// from several threads at once (each call owns its pipes and child).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace kernelpro {

struct ProcessLimits {
  // Wall-clock limit; the process group is SIGKILLed when it passes. Zero means no limit.
  std::chrono::milliseconds wall_timeout{0};
  // RLIMIT_CPU in seconds (per process); zero leaves it unchanged.
  int cpu_seconds = 0;
  // RLIMIT_FSIZE in bytes: the largest file the child may write; zero leaves it unchanged.
  std::uint64_t max_file_bytes = 0;
  // RLIMIT_NOFILE; zero leaves it unchanged.
  int max_open_files = 0;
  // Core dumps are always disabled (RLIMIT_CORE = 0): a crashing candidate must not fill the disk.
  // Address-space limits are deliberately absent: CUDA reserves huge virtual ranges.
};

struct ProcessOptions {
  std::vector<std::string> argv;           // argv[0] is looked up on PATH
  std::map<std::string, std::string> env;  // added to (and overriding) the parent's environment
  std::vector<std::string> unset_env;      // removed from the child's environment
  // false: the child's environment is `env` alone (an allow-list), nothing inherited.
  bool inherit_env = true;
  std::string working_dir;  // empty: inherit
  std::string stdin_data;   // written to the child's stdin, then closed
  ProcessLimits limits;
  // Captured output per stream: the first and last half of this many bytes are kept, the middle
  // is replaced by a "[... N bytes dropped ...]" marker.
  std::size_t capture_bytes = 64 * 1024;
  // Kill the group once stdout+stderr together exceed this many bytes (a flooding child). 0: never.
  std::uint64_t kill_after_output_bytes = 0;
  // A descriptor (e.g. an eventfd) that ends the child when it becomes readable: its group is
  // killed and ProcessResult::cancelled is set. -1: none. The caller keeps it open until
  // RunProcess returns.
  int cancel_fd = -1;
};

struct ProcessResult {
  bool started = false;  // false: fork/exec failed (see start_error)
  std::string start_error;
  bool exited = false;  // exited normally (exit_code valid)
  int exit_code = -1;
  int term_signal = 0;             // signal that ended it, if any (SIGKILL after a timeout)
  bool timed_out = false;          // killed by kernelpro for passing wall_timeout
  bool output_limit_hit = false;   // killed by kernelpro for printing too much
  bool cancelled = false;          // killed because ProcessOptions::cancel_fd became readable
  std::uint64_t stdout_bytes = 0;  // total bytes the child wrote, kept or not
  std::uint64_t stderr_bytes = 0;
  std::string stdout_text;  // bounded capture (see capture_bytes)
  std::string stderr_text;
  std::chrono::milliseconds wall_time{0};

  // One line for humans, such as "exit 0", "killed by SIGSEGV (segmentation fault)" or
  // "timed out after 60 s".
  std::string Describe() const;
};

// Every child gets SIGKILL when kernelpro dies (PR_SET_PDEATHSIG, tied to the calling thread, which
// RunProcess blocks until the child is gone), and KillAllChildren reaches the process groups of all
// children still running — what a SIGINT/SIGTERM handler calls (core/termination.h).

// Runs the child to completion (or until killed) and returns what happened. Only a failure of
// kernelpro itself (no pipes) is a non-OK status; anything the child does is in ProcessResult.
Result<ProcessResult> RunProcess(const ProcessOptions& options);

// Sends SIGKILL to the process group of every child RunProcess is supervising now, from any
// thread. Returns how many groups were signalled. Children are not reaped here: their RunProcess
// calls do that.
int KillAllChildren();

// Marks kernelpro as stopping; the termination handler (core/termination.h) calls it before
// KillAllChildren. A child that ends by a signal while kernelpro is stopping, or by SIGTERM, SIGINT
// or SIGHUP (also as a wrapper's exit code 128 + n) shortly before it starts to, was most likely
// stopped together with kernelpro: Slurm's scancel and a terminal's Ctrl-C signal every process of
// the job at once. What such a child was doing says nothing about the child's work, so RunProcess
// never returns it: it waits (kStopGrace at most for the signal to reach kernelpro) and, once
// kernelpro is stopping, leaves the thread blocked until the handler ends the process. No caller
// can then record a stopped worker as a candidate's crash or a task's failure.
void BeginStopping();
inline constexpr std::chrono::milliseconds kStopGrace{2000};

// Name of a signal for messages: "SIGSEGV (segmentation fault)".
std::string SignalDescription(int signal_number);

}  // namespace kernelpro
