#include "core/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace kernelpro {
namespace {

constexpr int kBarWidth = 10;

std::string Seconds(double s, const char* format) {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, std::max(0.0, s));
  return buf;
}

}  // namespace

ProgressScope::ProgressScope(ProgressSink* sink, ProgressStep step)
    : sink_(sink), step_(std::move(step)) {
  if (sink_) sink_->StepStarted(step_);
}

ProgressScope::~ProgressScope() {
  if (sink_) sink_->StepFinished(step_, outcome_);
}

ProgressReporter::ProgressReporter(std::ostream& out, std::string label, ProgressOptions options)
    : out_(out), label_(std::move(label)), options_(std::move(options)) {
  last_line_ = Now();
  const bool heartbeat = !options_.terminal && options_.heartbeat_seconds > 0;
  if ((options_.terminal || heartbeat) && options_.tick_seconds > 0) {
    ticker_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(mutex_);
      const auto period = std::chrono::duration<double>(options_.tick_seconds);
      while (!finished_) {
        if (stop_.wait_for(lock, period, [this] { return finished_; })) break;
        TickLocked();
      }
    });
  }
}

void ProgressReporter::TickLocked() {
  if (options_.terminal) {
    if (drawn_) DrawLocked();
    return;
  }
  const double now = Now();
  if (options_.heartbeat_seconds <= 0 || order_.empty() ||
      now - last_line_ < options_.heartbeat_seconds) {
    return;
  }
  // With a known batch, how many items are done: what is left is the rest.
  std::string line =
      label_ + ": still at work" +
      (items_ > 0 ? " (" + std::to_string(items_done_) + "/" + std::to_string(items_) + " done)"
                  : std::string()) +
      ":";
  for (std::size_t i = 0; i < order_.size(); ++i) {
    const Running& r = running_.at(order_[i]);
    line += std::string(i == 0 ? " " : "; ") + Describe(r.step) + " " + r.step.step + " " +
            Seconds(now - r.started, "%.0f s");
  }
  if (!open_line_.empty()) out_ << "\n";
  out_ << line << "\n" << std::flush;
  open_line_.clear();
  last_line_ = now;
}

ProgressReporter::~ProgressReporter() { Finish(); }

bool ProgressReporter::StderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

int ProgressReporter::StderrWidth() {
  winsize size{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

double ProgressReporter::Now() const {
  if (options_.clock) return options_.clock();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string ProgressReporter::Key(const ProgressStep& step) const {
  return std::to_string(step.item) + "\t" + step.name + "\t" + step.step;
}

std::string ProgressReporter::Describe(const ProgressStep& step) const {
  if (step.item <= 0) return step.name;
  std::string text = "cand " + std::to_string(step.item);
  if (step.items > 0) text += "/" + std::to_string(step.items);
  return step.name.empty() ? text : text + " " + step.name;
}

void ProgressReporter::SetLabel(const std::string& label) {
  std::lock_guard<std::mutex> lock(mutex_);
  label_ = label;
  if (drawn_) DrawLocked();
}

void ProgressReporter::BatchStarted(int items) {
  std::lock_guard<std::mutex> lock(mutex_);
  items_ = items;
  items_done_ = 0;
  if (options_.terminal) DrawLocked();
}

void ProgressReporter::StepStarted(const ProgressStep& step) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  const std::string key = Key(step);
  if (!running_.count(key)) order_.push_back(key);
  running_[key] = Running{step, Now()};
  if (options_.terminal) {
    DrawLocked();
    return;
  }
  if (!open_line_.empty()) out_ << "\n";
  out_ << label_ << ": " << Describe(step) << ": " << step.step << "..." << std::flush;
  open_line_ = key;
  last_line_ = Now();
}

void ProgressReporter::StepFinished(const ProgressStep& step, const std::string& outcome) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  const std::string key = Key(step);
  auto found = running_.find(key);
  const double elapsed = found == running_.end() ? 0 : Now() - found->second.started;
  if (found != running_.end()) running_.erase(found);
  order_.erase(std::remove(order_.begin(), order_.end(), key), order_.end());
  if (options_.terminal) {
    DrawLocked();
    return;
  }
  const std::string tail =
      " " + (outcome.empty() ? std::string("done") : outcome) + " in " + Seconds(elapsed, "%.1f s");
  if (open_line_ == key) {
    out_ << tail << "\n" << std::flush;
  } else {
    if (!open_line_.empty()) out_ << "\n";
    out_ << label_ << ": " << Describe(step) << ": " << step.step << "..." << tail << "\n"
         << std::flush;
  }
  open_line_.clear();
  last_line_ = Now();
}

void ProgressReporter::ItemFinished(const ProgressStep&) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++items_done_;
  if (options_.terminal && !finished_) DrawLocked();
}

void ProgressReporter::WriteAbove(std::ostream& other, const std::string& line) {
  std::lock_guard<std::mutex> lock(mutex_);
  const bool redraw = drawn_;
  if (options_.terminal) {
    ClearLocked();
  } else if (!open_line_.empty()) {
    out_ << "\n" << std::flush;
    open_line_.clear();
  }
  other << line << "\n" << std::flush;
  last_line_ = Now();
  if (redraw && !finished_) DrawLocked();
}

void ProgressReporter::Tick() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!finished_) TickLocked();
}

void ProgressReporter::Finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (finished_) return;
    finished_ = true;
    if (options_.terminal) {
      ClearLocked();
    } else if (!open_line_.empty()) {
      out_ << "\n" << std::flush;
      open_line_.clear();
    }
  }
  stop_.notify_all();
  if (ticker_.joinable()) ticker_.join();
}

std::string ProgressReporter::StatusLine() const {
  std::string line = label_;
  if (items_ > 0) {
    const int filled = std::clamp(items_done_ * kBarWidth / items_, 0, kBarWidth);
    line += " [" + std::string(filled, '#') + std::string(kBarWidth - filled, '.') + "] " +
            std::to_string(items_done_) + "/" + std::to_string(items_) + " candidates";
  }
  const double now = Now();
  for (const std::string& key : order_) {
    const Running& r = running_.at(key);
    line +=
        " | " + Describe(r.step) + ": " + r.step.step + " " + Seconds(now - r.started, "%.0f s");
  }
  const std::size_t width = static_cast<std::size_t>(std::max(10, options_.width) - 1);
  if (line.size() > width) line = line.substr(0, width - 3) + "...";
  return line;
}

void ProgressReporter::DrawLocked() {
  out_ << "\r\033[K" << StatusLine() << std::flush;
  drawn_ = true;
}

void ProgressReporter::ClearLocked() {
  if (!drawn_) return;
  out_ << "\r\033[K" << std::flush;
  drawn_ = false;
}

}  // namespace kernelpro
