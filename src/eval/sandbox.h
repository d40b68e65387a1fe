// The sandbox every process that imports, builds or runs candidate code is started in.
//
// LLM-written code is untrusted: it may try to forge its verdict (rewrite the expected outputs),
// read secrets (API keys in the environment, ~/.ssh), plant files that change later evaluations (a
// .pth in the user site, a poisoned cache), phone home, or leave a process running. A sandboxed
// step runs under bubblewrap (bwrap) with:
//
//   - a file system that shows only what the step needs: the system directories (/usr, /etc
//     without its secrets, /opt, /sys), the interpreter's own directories, the worker package, and
//     the step's own read-only and writable paths (SandboxMounts); everything else — the home
//     directory, kernelpro's working directory, the caches, other runs — is absent;
//   - one writable place per step besides a private /tmp: what the step's mounts name;
//   - the GPU's device files (/dev/nvidia*) and nothing else of the host's /dev;
//   - no network (its own network namespace, loopback only), its own PID, IPC, UTS namespaces;
//   - its own PID namespace, so no process of the step outlives it (a setsid child included), and
//     --die-with-parent, so it dies when its supervisor dies.
//
// The environment is an allow-list (WorkerEnvironment): no API keys or cloud credentials ever
// reach a worker, sandboxed or not.
//
// Where bwrap is missing or cannot create namespaces, Create fails with the reason; kernelpro then
// refuses to evaluate unless the user passed --unsafe-no-sandbox, in which case Sandbox is
// inactive, steps run as plain processes (still with the environment allow-list, resource limits
// and the parent-death signal), and every result says so.
//
// Thread-safe: Wrap is const and may be called from several threads.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace kernelpro::eval {

struct SandboxOptions {
  bool enabled = true;  // false: --unsafe-no-sandbox
  std::string bwrap;    // empty: $KERNELPRO_BWRAP, then bwrap on PATH
  // Paths every sandboxed step may read (the interpreter's prefixes, the worker package, a
  // CUTLASS checkout). System directories are always readable.
  std::vector<std::string> read_only;
};

// What one step may see besides the system: read-only paths (files or directories, each at its
// own path) and writable directories (created if missing). The first writable directory is the
// step's working directory and HOME.
struct SandboxMounts {
  std::vector<std::string> read_only;
  std::vector<std::string> writable;
};

class Sandbox {
 public:
  // An inactive sandbox: steps run unconfined (--unsafe-no-sandbox).
  static Sandbox Unconfined();
  // Finds bwrap and checks that it can create the sandbox on this machine (a trial run). Fails
  // with the reason and what to do when it cannot.
  static Result<Sandbox> Create(const SandboxOptions& options);

  bool active() const { return !bwrap_.empty(); }
  // One line for results and logs: "bubblewrap (/usr/bin/bwrap): no network, private file system"
  // or "none (--unsafe-no-sandbox): candidate code ran with kernelpro's own permissions".
  std::string Describe() const;

  // The command line that runs `argv` inside the sandbox with `mounts`; `argv` itself when
  // inactive. Paths that do not exist are skipped (read-only) or created (writable).
  std::vector<std::string> Wrap(const std::vector<std::string>& argv,
                                const SandboxMounts& mounts) const;

  // A sandboxed process killed by a signal shows as bwrap exiting with 128 + the signal; this
  // tells the two apart for callers that classify crashes.
  bool ExitCodeIsSignal(int exit_code) const {
    return active() && exit_code > 128 && exit_code < 160;
  }

 private:
  std::string bwrap_;
  std::vector<std::string> read_only_;
  std::vector<std::string> devices_;  // /dev/nvidia* found at creation
};

// The environment a worker gets: an allow-list of names from kernelpro's own environment (PATH,
// locale, CUDA and compiler settings, thread counts, NCCL/NVSHMEM switches) plus `extra_names`
// (--pass-env), never a name that looks like a credential (…KEY…, …TOKEN…, …SECRET…, …PASSWORD…,
// …CREDENTIAL…, AWS_…), then `set` on top.
std::map<std::string, std::string> WorkerEnvironment(const std::vector<std::string>& extra_names,
                                                     const std::map<std::string, std::string>& set);

// True for environment names that must never reach candidate code.
bool LooksLikeCredential(const std::string& name);

}  // namespace kernelpro::eval
