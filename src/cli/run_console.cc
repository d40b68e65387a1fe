#include "cli/run_console.h"

#include <iostream>
#include <sstream>
#include <utility>

#include "core/stats.h"
#include "llm/price.h"

namespace kernelpro::cli {

RunConsole::RunConsole(std::string command, std::shared_ptr<ProgressReporter> progress)
    : command_(std::move(command)), progress_(std::move(progress)) {}

void RunConsole::Say(std::ostream& out, const std::string& line) const {
  if (progress_) {
    progress_->WriteAbove(out, line);
  } else {
    out << line << std::endl;
  }
}

void RunConsole::Note(const std::string& line) {
  Say(std::cerr, "kernelpro " + command_ + ": " + line);
}

void RunConsole::Failed(const std::string& message) {
  std::cerr << "kernelpro " << command_ << ": " << message << "\n";
}

void RunConsole::Started(const std::string& run_dir) {
  std::cout << "kernelpro " << command_ << ": run directory " << run_dir << std::endl;
}

void RunConsole::IterationStarted(int iteration, int iterations) {
  if (progress_) {
    progress_->SetLabel(command_ + ": iteration " + std::to_string(iteration) + "/" +
                        std::to_string(iterations));
  }
}

void RunConsole::IterationEnded(const search::IterationProgress& progress, bool cost_known) {
  Say(std::cout, IterationLine(progress, cost_known));
}

void RunConsole::Interrupted(const std::string& run_dir, const std::string& message,
                             bool recorded) {
  std::cerr << "kernelpro " << command_ << ": the run stopped: " << message << "\n";
  if (recorded) {
    std::cerr << "(continue it with: kernelpro resume " << run_dir << ")\n";
  } else {
    std::cerr << "(nothing was recorded: " << run_dir
              << " is left as it was; run optimize again once the cause is fixed)\n";
  }
}

void RunConsole::Finished(const app::RunClosing& c) {
  std::cout << "stopped: " << c.stop_message << "\n";
  if (c.stop == search::StopReason::kLlmError) {
    std::cout << "(fix the cause, then continue with: kernelpro resume " << c.run_dir
              << " [--llm PROVIDER:MODEL])\n";
  }
  if (c.best) {
    std::cout << "best: n" << c.best->node << " " << RatioText(c.best->speedup)
              << (c.best->noisy ? " noisy timing" : "") << " over the reference; " << c.best->text
              << "\n";
    if (c.energy_choice) std::cout << "energy choice: " << *c.energy_choice << "\n";
    std::cout << "kernel: " << c.best_kernel << "\n";
  } else if (c.reference_stays) {
    std::cout << "best: the reference; " << *c.reference_stays << " (no best.py is written)\n";
  } else {
    std::cout << "best: no correct kernel was found\n";
  }
  for (const std::string& line : c.energy_lines) std::cout << line << "\n";
  std::cout << "report: " << c.markdown_report << " (HTML: " << c.html_report << ")\n";
  std::cout << "LLM: " << c.exchanges << " exchanges, cost "
            << llm::CostText(c.cost_usd, c.cost_known) << "\n";
}

std::string IterationLine(const search::IterationProgress& p, bool cost_known) {
  std::ostringstream line;
  line << "iteration " << p.iteration << "/" << p.iterations << "  " << agents::ToString(p.mode)
       << " from "
       << (p.parent == search::Tree::kRootId ? std::string("ROOT") : "n" + std::to_string(p.parent))
       << ": " << p.outcome << "  | best "
       << (p.best_node && p.best ? "n" + std::to_string(*p.best_node) + " " + RatioText(*p.best)
                                 : std::string("the reference"))
       << " | cost " << llm::CostText(p.cost_usd, cost_known) << (p.resumed ? " (resumed)" : "");
  return line.str();
}

}  // namespace kernelpro::cli
