// Progress while long work runs: which candidate is at which step (building, checking, timing,
// profiling) and for how long, on stderr, so that a person watching `kernelpro eval` or
// `optimize` sees what is happening instead of minutes of silence.
//
// Two parts. ProgressSink is what the working code reports to (eval::Executor, the search
// orchestrator, the profiler): step started, step finished, item finished; it says nothing about
// how that is shown, and a null sink means nobody is watching. ProgressReporter renders the
// events, in one of two forms:
//   - a terminal (isatty(stderr)): one live status line, rewritten in place with "\r", holding a
//     bar of the items done when their number is known and every step running now with its elapsed
//     time ("eval [#####.....] 1/2 candidates | cand 2/2 b.py: timing 12 s"); a ticker thread
//     redraws it every second so the times advance; Finish() clears it;
//   - anything else (a pipe, a log file): plain lines, one per step, written when the step starts
//     ("eval: cand 2/3 cuda_swish.py: building...") and completed when it finishes (" done in
//     41.2 s"); when another line came in between, the finished step gets a whole line of its own,
//     so parallel steps never share or garble a line.
// The clock, the output stream, the terminal flag and the width are seams: tests render both forms
// with a fake clock and compare them with golden text.
//
// Thread-safety: every ProgressReporter method may be called from any thread (parallel builds,
// one device thread per GPU); output is serialised by one mutex.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

namespace kernelpro {

// One step of one item: "cand 2/3 cuda_swish.py: building". An item of 0 is a step that belongs
// to no candidate ("reference: computing", "programmer: asking the model").
struct ProgressStep {
  int item = 0;      // 1-based; 0: not a candidate
  int items = 0;     // how many items this batch holds (0: unknown)
  std::string name;  // the candidate's file name, or what the step works on ("reference")
  std::string step;  // a gerund: "building", "checking", "timing", "profiling"
};

// What working code reports to. Implementations must accept calls from several threads.
class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  // A batch of `items` items begins (one Executor::Evaluate: its candidates).
  virtual void BatchStarted(int items) = 0;
  virtual void StepStarted(const ProgressStep& step) = 0;
  // `outcome`: "" when the step did its work ("done"), else one word or a short phrase
  // ("cached", "compile_error").
  virtual void StepFinished(const ProgressStep& step, const std::string& outcome) = 0;
  // The item has no step left (its verdict is known): the bar advances.
  virtual void ItemFinished(const ProgressStep& item) = 0;
};

// One step reported to `sink` (null: to nobody) from construction to destruction, so that every
// return path of the working code finishes it. The outcome is "" (done) unless set.
class ProgressScope {
 public:
  ProgressScope(ProgressSink* sink, ProgressStep step);
  ~ProgressScope();
  ProgressScope(const ProgressScope&) = delete;
  ProgressScope& operator=(const ProgressScope&) = delete;
  void set_outcome(std::string outcome) { outcome_ = std::move(outcome); }

 private:
  ProgressSink* sink_;
  ProgressStep step_;
  std::string outcome_;
};

struct ProgressOptions {
  bool terminal = false;  // true: the live status line; false: plain lines
  int width = 80;         // terminal columns; the status line is cut to width - 1
  // Monotonic seconds; empty: std::chrono::steady_clock.
  std::function<double()> clock;
  // Seconds between redraws of the status line by the ticker thread; 0: no thread (tests call
  // Tick()). On a terminal the line redraws; in plain lines the ticker checks the heartbeat.
  double tick_seconds = 1.0;
  // Plain lines: after this many seconds without a line while steps run, one line says what is
  // running and for how long ("eval: still at work (1/3 done): cand 2/3 b.py building 45 s"), again
  // after each such silence; 0: never. (A terminal's status line shows it all the time.)
  double heartbeat_seconds = 30;
};

class ProgressReporter : public ProgressSink {
 public:
  // `label` starts every line ("eval", "optimize"); `out` must outlive the reporter.
  ProgressReporter(std::ostream& out, std::string label, ProgressOptions options);
  ~ProgressReporter() override;  // Finish()
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  // The label can change between phases ("optimize: iteration 2/4").
  void SetLabel(const std::string& label);

  void BatchStarted(int items) override;
  void StepStarted(const ProgressStep& step) override;
  void StepFinished(const ProgressStep& step, const std::string& outcome) override;
  void ItemFinished(const ProgressStep& item) override;

  // Writes `line` (plus a newline) to `other` (stdout, or stderr itself) without tearing the
  // progress output: the status line is cleared first and drawn again after, an open plain line
  // is ended first. For the lines a command prints while work runs (optimize's iteration lines).
  void WriteAbove(std::ostream& other, const std::string& line);

  // Redraws the status line, or in plain lines writes the heartbeat when one is due (the ticker
  // calls it; tests call it after moving the fake clock).
  void Tick();
  // Clears the status line or ends an open plain line; stops the ticker. Idempotent.
  void Finish();

  // Whether stderr is a terminal, and its width (80 when unknown).
  static bool StderrIsTerminal();
  static int StderrWidth();

 private:
  struct Running {
    ProgressStep step;
    double started = 0;
  };
  double Now() const;
  std::string Key(const ProgressStep& step) const;
  std::string Describe(const ProgressStep& step) const;  // "cand 2/3 b.py"
  std::string StatusLine() const;
  void DrawLocked();
  void ClearLocked();
  void TickLocked();  // Tick's work, the mutex held

  std::ostream& out_;
  std::string label_;
  ProgressOptions options_;
  std::mutex mutex_;
  std::vector<std::string> order_;  // running steps' keys, in start order
  std::map<std::string, Running> running_;
  int items_ = 0;
  int items_done_ = 0;
  std::string open_line_;  // plain mode: the key of the step whose line is still open
  bool drawn_ = false;     // terminal mode: a status line is on screen
  double last_line_ = 0;   // plain mode: when the last output was written (Now())
  bool finished_ = false;
  std::thread ticker_;
  std::condition_variable stop_;
};

}  // namespace kernelpro
