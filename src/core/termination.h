// What kernelpro does when it is told to stop (SIGINT, SIGTERM, SIGHUP): it kills every worker it
// is running, whole process groups, says so on stderr and exits at once with 128 + the signal.
//
// Stopping at once, rather than unwinding, is deliberate: the run store is built to survive a
// kill -9 at any instant (SQLite transactions, a journal of steps for resume), so a clean signal
// takes the same path, and no step half-finished by a killed worker is ever recorded as the
// candidate's failure. Workers that outlive a SIGKILL of kernelpro itself are handled elsewhere:
// each child gets a parent-death signal (core/subprocess.h), and sandboxed steps run in their own
// PID namespace (eval/sandbox.h).
//
// Install once, first thing in main(), before any other thread starts: the signals are blocked in
// the calling thread (and so in every thread created after it) and taken by one dedicated thread.
#pragma once

#include <functional>
#include <string>

namespace kernelpro {

void InstallTerminationHandler();

// A command that stops in its own way takes the first signal: `stop` runs on the signal thread
// instead of the kill and exit, and must return at once (it wakes whoever drains); a second signal
// stops at once, as without it. `kernelpro serve` drains its jobs so. Empty restores the default.
void SetGracefulStop(std::function<void(int signal_number)> stop);

// A line printed after the "stopped" message, e.g. how to continue ("continue with: kernelpro
// resume runs/x"). Thread-safe; empty clears it.
void SetTerminationNote(const std::string& note);

}  // namespace kernelpro
