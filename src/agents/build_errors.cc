#include "agents/build_errors.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "core/text.h"

namespace kernelpro::agents {
namespace {

// Lines longer than this are build commands or template spew; kept lines are cut to it.
constexpr size_t kMaxLineChars = 400;
constexpr size_t kTracebackFrames = 3;

// ---------------------------------------------------------------------------------------------
// Text helpers

// Compilers colour their output when they think a terminal is listening.
std::string StripAnsi(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      size_t j = i + 2;
      while (j < s.size() && !std::isalpha(static_cast<unsigned char>(s[j]))) ++j;
      i = j;
      continue;
    }
    out += s[i];
  }
  return out;
}

// "a, b and c" (with separator ", ") or "a, then b" (with ", then ").
std::string JoinList(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += (i + 1 == items.size() && separator == ", ") ? " and " : separator;
    out += items[i];
  }
  return out;
}

std::string CutLine(const std::string& line) {
  if (line.size() <= kMaxLineChars) return line;
  return line.substr(0, Utf8Prefix(line, kMaxLineChars)) + " [...]";
}

// "1 frame", "3 frames".
std::string Count(size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string Kb(size_t chars) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f KB", static_cast<double>(chars) / 1000.0);
  return buffer;
}

// ---------------------------------------------------------------------------------------------
// Diagnostics

bool IsPythonExceptionLine(const std::string& line) {
  // "RuntimeError: ...", "torch.AcceleratorError: ...", "subprocess.CalledProcessError: ..."
  size_t colon = line.find(": ");
  if (colon == std::string::npos || colon == 0) return false;
  for (size_t i = 0; i < colon; ++i) {
    const unsigned char c = line[i];
    if (!std::isalnum(c) && c != '_' && c != '.') return false;
  }
  const std::string name = line.substr(0, colon);
  for (const std::string suffix : {"Error", "Exception", "Interrupt", "Exit"}) {
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return true;
    }
  }
  return false;
}

bool IsCompilerError(const std::string& line) {
  if (IsPythonExceptionLine(line)) return false;
  const std::string l = Lower(line);
  const std::string_view t = TrimLeft(l);
  return Contains(l, ": error") || Contains(l, "error #") || t.starts_with("error:") ||
         Contains(l, "fatal error") || t.starts_with("nvcc fatal") ||
         (t.starts_with("ptxas") && (Contains(t, "error") || Contains(t, "fatal"))) ||
         Contains(l, "undefined reference to");
}

bool IsWarning(const std::string& line) {
  return !IsCompilerError(line) && Contains(Lower(line), "warning");
}

bool IsIncludeChain(const std::string& line) {
  const std::string_view t = TrimLeft(line);
  if (t.starts_with("In file included from")) return true;
  return t.size() < line.size() && t.starts_with("from ") && (t.back() == ',' || t.back() == ':');
}

bool IsBuildCommand(const std::string& line) {
  const std::string_view t = TrimLeft(line);
  if (t.starts_with("FAILED: ") || t.starts_with("ninja: ")) return true;
  if (t.size() > 2 && t[0] == '[' && std::isdigit(static_cast<unsigned char>(t[1]))) {
    size_t close = t.find(']');
    if (close != std::string::npos && t.substr(1, close - 1).find('/') != std::string::npos) {
      return true;
    }
  }
  return line.size() > 300 &&
         (Contains(line, " -I") || Contains(line, " -D") || Contains(line, " -o "));
}

bool IsTracebackStart(const std::string& line) {
  return TrimLeft(line).starts_with("Traceback (most recent call last):");
}

// The sentences Python prints between the tracebacks of chained exceptions.
bool IsTracebackGlue(const std::string& line) {
  return line.starts_with("The above exception was the direct cause") ||
         line.starts_with("During handling of the above exception");
}

// Python 3.11+ underlines the failing expression of a frame: "    ^^^^^^^^" or "    ~~~^~~".
bool IsMarkerLine(const std::string& line) {
  const std::string_view t = Trim(line);
  return !t.empty() && t.find_first_not_of("^~") == std::string::npos;
}

bool ReportsFailure(const std::string& line) {
  const std::string l = Lower(line);
  for (const char* word : {"error", "exception", "mismatch", "assert", "illegal", "fault", "abort",
                           "failed", "out of bounds", "out of memory"}) {
    if (Contains(l, word)) return true;
  }
  return false;
}

bool Indented(const std::string& line) {
  return !line.empty() && std::isspace(static_cast<unsigned char>(line[0]));
}

// gcc names where an error happened on lines before it: "x.cc: In function 'void f()':",
// "x.h: In instantiation of 'struct T<24>':", "y.h:4:58:   required from here".
bool IsLeadingContext(const std::string& line) {
  if (IsWarning(line) || IsIncludeChain(line) || IsBuildCommand(line)) return false;
  return Contains(line, "In function") || Contains(line, "In member function") ||
         Contains(line, "In instantiation of") || Contains(line, "In lambda") ||
         Contains(line, "At global scope") || Contains(line, "required from");
}

// nvcc's "detected during instantiation of ..." under a template error (gcc names the
// instantiation before the error instead).
bool NamesInstantiation(const std::string& line) {
  return Contains(line, "detected during") || Contains(line, "instantiation of");
}

// Digits masked, so that one error reported at many lines counts once.
std::string DuplicateKey(const std::string& line) {
  std::string key;
  for (char c : Trim(line)) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (key.empty() || key.back() != '#') key += '#';
    } else {
      key += c;
    }
  }
  return key;
}

// Site-packages and the standard library: frames a candidate's author cannot change.
bool IsLibraryFrame(const std::string& line) {
  return Contains(line, "site-packages") || Contains(line, "dist-packages") ||
         Contains(line, "/lib/python");
}

struct Traceback {
  size_t start = 0;                               // the "Traceback" line
  std::vector<std::pair<size_t, size_t>> frames;  // [first, last] line of each frame
  std::optional<size_t> exception;                // the exception line
  size_t end = 0;                                 // one past its last line (message included)
};

std::vector<Traceback> FindTracebacks(const std::vector<std::string>& lines) {
  std::vector<Traceback> found;
  size_t i = 0;
  while (i < lines.size()) {
    if (!IsTracebackStart(lines[i])) {
      ++i;
      continue;
    }
    Traceback tb;
    tb.start = i;
    size_t j = i + 1;
    for (; j < lines.size(); ++j) {
      const std::string& line = lines[j];
      if (Trim(line).empty()) break;
      if (Indented(line) && TrimLeft(line).starts_with("File \"")) {
        tb.frames.push_back({j, j});
      } else if (Indented(line)) {
        if (!tb.frames.empty()) tb.frames.back().second = j;
      } else {
        tb.exception = j++;
        break;
      }
    }
    // The exception's message may go on for a few lines ("CUDA kernel errors might be ...");
    // a build's compiler output after it is scanned as compiler output.
    for (int extra = 0; tb.exception && extra < 4 && j < lines.size(); ++extra, ++j) {
      const std::string& line = lines[j];
      if (Trim(line).empty() || IsTracebackStart(line) || IsTracebackGlue(line) ||
          IsCompilerError(line) || IsWarning(line) || IsBuildCommand(line) ||
          IsIncludeChain(line)) {
        break;
      }
    }
    tb.end = j;
    found.push_back(tb);
    i = std::max(j, i + 1);
  }
  return found;
}

// `text` whole when it fits, else cut at a line break with a note that says how much was cut.
std::string CutToFit(const std::string& text, size_t max_chars) {
  if (text.size() <= max_chars) return text;
  for (size_t note_room = 64;; note_room *= 2) {
    if (note_room >= max_chars) return text.substr(0, Utf8Prefix(text, max_chars));
    std::string kept = PrefixAtLineBreak(text, max_chars - note_room);
    if (!kept.empty() && kept.back() != '\n') kept += '\n';
    std::string note =
        "[... " + std::to_string(text.size() - kept.size()) + " more characters cut]\n";
    if (kept.size() + note.size() <= max_chars) return kept + note;
  }
}

// ---------------------------------------------------------------------------------------------
// What is kept, piece by piece

// Which lines belong to one of the tracebacks.
std::vector<bool> TracebackLines(size_t line_count, const std::vector<Traceback>& tracebacks) {
  std::vector<bool> in_traceback(line_count, false);
  for (const Traceback& tb : tracebacks) {
    for (size_t i = tb.start; i < tb.end; ++i) in_traceback[i] = true;
  }
  return in_traceback;
}

bool HasCompilerError(const std::vector<std::string>& lines,
                      const std::vector<bool>& in_traceback) {
  bool has_compiler_error = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    has_compiler_error = has_compiler_error || (!in_traceback[i] && IsCompilerError(lines[i]));
  }
  return has_compiler_error;
}

// What TrimBuildErrors keeps of a dump, in the order it shows them, and what it counts as dropped.
struct KeptDiagnostics {
  std::string errors;  // compiler errors with their context
  std::string traces;  // the ends of the Python tracebacks
  std::string others;  // other lines that report a failure
  size_t duplicates = 0, warnings = 0, includes = 0, commands = 0;
};

// The compiler error at lines[i] with its context, the lines it takes marked as used: up to three
// lines before it that name where it happened, then what follows it, up to a blank line or the
// next diagnostic: the indented lines right after it (operand types, source line, caret), then
// only the lines naming an instantiation.
std::vector<std::string> ErrorWithContext(const std::vector<std::string>& lines, size_t i,
                                          const std::vector<bool>& in_traceback,
                                          std::vector<bool>& used) {
  std::vector<std::string> group;
  for (size_t back = 1; back <= 3 && back <= i; ++back) {
    const size_t j = i - back;
    if (used[j] || in_traceback[j] || !IsLeadingContext(lines[j])) break;
    group.insert(group.begin(), CutLine(lines[j]));
    used[j] = true;
  }
  group.push_back(CutLine(lines[i]));
  bool right_after = true;
  size_t indented = 0;
  for (size_t j = i + 1; j < lines.size() && j <= i + 16 && !in_traceback[j]; ++j) {
    const std::string& line = lines[j];
    if (Trim(line).empty() || IsCompilerError(line) || IsBuildCommand(line) ||
        (!Indented(line) && (IsWarning(line) || IsLeadingContext(line)))) {
      break;
    }
    if (right_after && Indented(line) && !IsIncludeChain(line) && !NamesInstantiation(line) &&
        indented < 3) {
      group.push_back(CutLine(line));
      used[j] = true;
      ++indented;
      continue;
    }
    right_after = false;
    if (Indented(line) && NamesInstantiation(line)) {
      group.push_back(CutLine(line));
      used[j] = true;
    }
  }
  return group;
}

// The compiler errors outside tracebacks, each once with its context: an error reported again
// (at other lines) adds "[and N more like it]" to its first report and counts as a duplicate.
std::string CompilerErrors(const std::vector<std::string>& lines,
                           const std::vector<bool>& in_traceback, std::vector<bool>& used,
                           size_t& duplicates) {
  std::map<std::string, size_t> repeats;  // duplicate key -> how often it came again
  // Each group remembers its key, so that the number of repeats can be added to its first line
  // afterwards.
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (in_traceback[i] || !IsCompilerError(lines[i])) continue;
    used[i] = true;
    const std::string key = DuplicateKey(lines[i]);
    if (repeats.count(key) > 0) {
      ++repeats[key];
      ++duplicates;
      continue;
    }
    repeats[key] = 0;
    groups.push_back({key, ErrorWithContext(lines, i, in_traceback, used)});
  }
  std::string errors;
  for (auto& [key, group] : groups) {
    for (std::string& line : group) {
      if (repeats[key] > 0 && IsCompilerError(line)) {
        line += " [and " + std::to_string(repeats[key]) + " more like it]";
        break;
      }
    }
    for (const std::string& line : group) errors += line + "\n";
  }
  return errors;
}

// The last traceback's "Traceback" line and its last frames; when those are all library frames,
// the deepest frame in the user's own code before them. "[... N frames]" stands for those left out
// and Python's underlining of the failing expression goes.
std::string LastFrames(const std::vector<std::string>& lines, const Traceback& tb) {
  std::string traces = std::string(Trim(lines[tb.start])) + "\n";
  const size_t first =
      tb.frames.size() > kTracebackFrames ? tb.frames.size() - kTracebackFrames : 0;
  std::vector<size_t> shown;
  bool own_frame_shown = false;
  for (size_t f = first; f < tb.frames.size(); ++f) {
    own_frame_shown = own_frame_shown || !IsLibraryFrame(lines[tb.frames[f].first]);
  }
  if (!own_frame_shown) {
    for (size_t f = first; f-- > 0;) {
      if (!IsLibraryFrame(lines[tb.frames[f].first])) {
        shown.push_back(f);
        break;
      }
    }
  }
  for (size_t f = first; f < tb.frames.size(); ++f) shown.push_back(f);
  size_t previous = 0;
  for (size_t f : shown) {
    if (f > previous) {
      traces += "  [... " + Count(f - previous, "frame") + "]\n";
    }
    for (size_t i = tb.frames[f].first; i <= tb.frames[f].second; ++i) {
      if (!IsMarkerLine(lines[i])) traces += CutLine(lines[i]) + "\n";
    }
    previous = f + 1;
  }
  return traces;
}

// Python tracebacks: the exception of each (each line once, remembered in `seen`); for the last
// one, also its last frames (LastFrames).
std::string TracebackEnds(const std::vector<std::string>& lines,
                          const std::vector<Traceback>& tracebacks, std::set<std::string>& seen) {
  std::string traces;
  for (size_t t = 0; t < tracebacks.size(); ++t) {
    const Traceback& tb = tracebacks[t];
    if (t + 1 == tracebacks.size()) traces += LastFrames(lines, tb);
    if (tb.exception) {
      for (size_t i = *tb.exception; i < tb.end; ++i) {
        if (seen.emplace(Trim(lines[i])).second) traces += CutLine(lines[i]) + "\n";
      }
    }
  }
  return traces;
}

// Of the lines neither used nor in a traceback: those that report a failure go to kept.others
// (once each), and the warnings, include chains and build commands are counted as dropped.
void KeepOtherFailures(const std::vector<std::string>& lines, const std::vector<bool>& in_traceback,
                       const std::vector<bool>& used, std::set<std::string>& seen,
                       KeptDiagnostics& kept) {
  for (size_t i = 0; i < lines.size(); ++i) {
    if (used[i] || in_traceback[i]) continue;
    const std::string& line = lines[i];
    if (IsWarning(line)) {
      ++kept.warnings;
    } else if (IsIncludeChain(line)) {
      ++kept.includes;
    } else if (IsBuildCommand(line)) {
      ++kept.commands;
    } else if (!IsTracebackGlue(line) && ReportsFailure(line)) {
      if (seen.emplace(Trim(line)).second) {
        kept.others += CutLine(line) + "\n";
      } else {
        ++kept.duplicates;
      }
    }
  }
}

// The kept pieces one after another, closed by a line that says what was kept and dropped when
// anything was; within max_chars, where the errors matter more than that account.
std::string JoinKept(const KeptDiagnostics& kept, size_t text_chars, size_t line_count,
                     size_t max_chars) {
  std::string body;
  size_t kept_lines = 0;
  for (const std::string* piece : {&kept.errors, &kept.traces, &kept.others}) {
    if (piece->empty()) continue;
    if (!body.empty()) body += "\n";
    body += *piece;
    kept_lines += static_cast<size_t>(std::count(piece->begin(), piece->end(), '\n'));
  }
  std::string summary;
  if (body.size() < text_chars) {
    std::vector<std::string> shown, dropped;
    if (!kept.errors.empty()) shown.push_back("compiler errors with their context");
    if (!kept.traces.empty()) shown.push_back("the end of the Python traceback");
    if (!kept.others.empty()) shown.push_back("other lines that report a failure");
    if (kept.warnings > 0) dropped.push_back(Count(kept.warnings, "warning line"));
    if (kept.duplicates > 0) dropped.push_back(Count(kept.duplicates, "repeated error"));
    if (kept.includes > 0) dropped.push_back(Count(kept.includes, "include-chain line"));
    if (kept.commands > 0) dropped.push_back(Count(kept.commands, "build-command line"));
    summary = "[kernelpro kept " + std::to_string(kept_lines) + " of " +
              std::to_string(line_count) + " lines (" + Kb(body.size()) + " of " + Kb(text_chars) +
              "): " + JoinList(shown, ", then ");
    if (!dropped.empty()) summary += "; dropped " + JoinList(dropped, ", ") + ", among others";
    summary += "]\n";
  }
  if (body.size() + summary.size() + (summary.empty() ? 0 : 1) <= max_chars) {
    return summary.empty() ? body : body + "\n" + summary;
  }
  // Tight: the errors matter more than the account of what was cut.
  summary = "[kernelpro kept " + std::to_string(kept_lines) + " of " + std::to_string(line_count) +
            " lines]\n";
  if (max_chars < 4 * summary.size()) return CutToFit(body, max_chars);
  return CutToFit(body, max_chars - summary.size() - 1) + "\n" + summary;
}

}  // namespace

std::string TrimBuildErrors(const std::string& diagnostics, size_t max_chars) {
  const std::string text = StripAnsi(diagnostics);
  const std::vector<std::string> lines = SplitLines(text);
  const std::vector<Traceback> tracebacks = FindTracebacks(lines);
  const std::vector<bool> in_traceback = TracebackLines(lines.size(), tracebacks);
  if (!HasCompilerError(lines, in_traceback) && tracebacks.empty()) {
    return CutToFit(text, max_chars);
  }
  KeptDiagnostics kept;
  std::vector<bool> used(lines.size(), false);
  std::set<std::string> seen;  // lines kept outside compiler errors, each shown once
  kept.errors = CompilerErrors(lines, in_traceback, used, kept.duplicates);
  kept.traces = TracebackEnds(lines, tracebacks, seen);
  KeepOtherFailures(lines, in_traceback, used, seen, kept);
  return JoinKept(kept, text.size(), lines.size(), max_chars);
}

}  // namespace kernelpro::agents
