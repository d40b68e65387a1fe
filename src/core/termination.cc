#include "core/termination.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <mutex>
#include <thread>
#include <utility>

#include "core/subprocess.h"

namespace kernelpro {
namespace {

std::mutex& NoteMutex() {
  static std::mutex mutex;
  return mutex;
}
std::string& Note() {
  static std::string note;
  return note;
}
std::function<void(int)>& GracefulStop() {
  static std::function<void(int)> stop;
  return stop;
}

sigset_t TerminationSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  return signals;
}

[[noreturn]] void WaitAndStop(sigset_t signals) {
  int signal_number = 0;
  for (;;) {
    if (sigwait(&signals, &signal_number) != 0) continue;
    std::function<void(int)> stop;
    {
      std::lock_guard<std::mutex> lock(NoteMutex());
      stop = std::exchange(GracefulStop(), nullptr);  // only the first signal is graceful
    }
    if (!stop) break;
    stop(signal_number);
  }
  BeginStopping();  // before the kills: no thread records a child this stop ends
  const int killed = KillAllChildren();
  std::string message = "\nkernelpro: stopped by " + SignalDescription(signal_number);
  if (killed > 0) {
    message += "; killed " + std::to_string(killed) + " running worker" + (killed == 1 ? "" : "s");
  }
  message += "\n";
  {
    std::lock_guard<std::mutex> lock(NoteMutex());
    if (!Note().empty()) message += "kernelpro: " + Note() + "\n";
  }
  std::fputs(message.c_str(), stderr);
  std::fflush(stderr);
  std::fflush(stdout);
  _exit(128 + signal_number);
}

}  // namespace

void InstallTerminationHandler() {
  static std::once_flag once;
  std::call_once(once, [] {
    sigset_t signals = TerminationSignals();
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    std::thread(WaitAndStop, signals).detach();
  });
}

void SetGracefulStop(std::function<void(int signal_number)> stop) {
  std::lock_guard<std::mutex> lock(NoteMutex());
  GracefulStop() = std::move(stop);
}

void SetTerminationNote(const std::string& note) {
  std::lock_guard<std::mutex> lock(NoteMutex());
  Note() = note;
}

}  // namespace kernelpro
