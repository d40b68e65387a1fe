#include "agents/prompt_builder.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "agents/prompt_texts.h"
#include "core/enum_names.h"
#include "core/text.h"

namespace kernelpro::agents {
namespace {

constexpr int kMaxCandidates = 16;
// A feedback cut below this says too little to act on; the prompt is refused instead.
constexpr size_t kMinFeedbackChars = 400;
// base_strategies.md: what follows this line goes first when the prompt is over its budget.
constexpr const char* kShortenMarker = "<!-- kernelpro:";
// Lines longer than this are build commands or template spew; kept lines are cut to it.
constexpr size_t kMaxLineChars = 400;
constexpr size_t kTracebackFrames = 3;
// How the prompt names the language of the reference code.
constexpr std::array<std::pair<InputKind, const char*>, 3> kKindTitles = {
    {{InputKind::kPyTorch, "PyTorch"}, {InputKind::kTriton, "Triton"}, {InputKind::kCuda, "CUDA"}}};

// ---------------------------------------------------------------------------------------------
// Text helpers

// Ends with exactly one newline, so that parts join with one blank line between them.
std::string EndWithNewline(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s + "\n";
}

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

// The longest prefix of `text` that ends at a line break and holds at most `limit` characters;
// a hard cut when not even the first line fits.
std::string PrefixAtLine(const std::string& text, size_t limit) {
  if (text.size() <= limit) return text;
  size_t cut = text.rfind('\n', limit == 0 ? 0 : limit - 1);
  if (cut == std::string::npos || cut == 0) return text.substr(0, Utf8Prefix(text, limit));
  return text.substr(0, cut + 1);
}

// Replaces {name} for the names in `values`, in one pass: substituted text is never rescanned,
// and braces of code (CUDA, JSON) that name no placeholder stay as they are.
std::string Fill(const std::string& text, const std::map<std::string, std::string>& values) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '{') {
      size_t close = text.find('}', i + 1);
      if (close != std::string::npos && close - i <= 32) {
        auto it = values.find(text.substr(i + 1, close - i - 1));
        if (it != values.end()) {
          out += it->second;
          i = close + 1;
          continue;
        }
      }
    }
    out += text[i++];
  }
  return out;
}

// A Markdown code block whose fence is longer than any run of backticks in the code, so that no
// code can close it early.
std::string Fenced(const std::string& code, const std::string& language) {
  size_t longest = 0, run = 0;
  for (char c : code) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(std::max<size_t>(3, longest + 1), '`');
  std::string body = code;
  if (body.empty() || body.back() != '\n') body += '\n';
  return fence + language + "\n" + body + fence + "\n";
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

std::string CutToFit(const std::string& text, size_t max_chars) {
  if (text.size() <= max_chars) return text;
  for (size_t note_room = 64;; note_room *= 2) {
    if (note_room >= max_chars) return text.substr(0, Utf8Prefix(text, max_chars));
    std::string kept = PrefixAtLine(text, max_chars - note_room);
    if (!kept.empty() && kept.back() != '\n') kept += '\n';
    std::string note =
        "[... " + std::to_string(text.size() - kept.size()) + " more characters cut]\n";
    if (kept.size() + note.size() <= max_chars) return kept + note;
  }
}

// ---------------------------------------------------------------------------------------------
// Search memory

struct MemoryPart {
  std::string heading;               // "" for entries before the first heading
  std::vector<std::string> entries;  // oldest first
};

std::vector<MemoryPart> ParseMemory(const std::string& block) {
  std::vector<MemoryPart> parts(1);
  bool entry_open = false;
  for (const std::string& line : SplitLines(block)) {
    const std::string_view t = Trim(line);
    if (t.empty()) {
      entry_open = false;
      continue;
    }
    if (line[0] == '#') {
      parts.push_back({line, {}});
      entry_open = false;
      continue;
    }
    bool item = line.starts_with("- ") || line.starts_with("* ") || line.starts_with("+ ");
    if (!item) {
      size_t d = 0;
      while (d < line.size() && std::isdigit(static_cast<unsigned char>(line[d]))) ++d;
      item =
          d > 0 && d + 1 < line.size() && (line[d] == '.' || line[d] == ')') && line[d + 1] == ' ';
    }
    std::vector<std::string>& entries = parts.back().entries;
    if (item || !entry_open || entries.empty()) {
      entries.push_back(line + "\n");
    } else {
      entries.back() += line + "\n";
    }
    entry_open = true;
  }
  if (parts.front().entries.empty()) parts.erase(parts.begin());
  return parts;
}

std::string RenderMemory(const std::vector<MemoryPart>& parts) {
  std::string out;
  for (const MemoryPart& part : parts) {
    if (part.entries.empty()) continue;
    if (!out.empty()) out += "\n";
    if (!part.heading.empty()) out += part.heading + "\n";
    for (const std::string& entry : part.entries) out += entry;
  }
  return out;
}

// Drops the oldest entry of the fullest section, again and again, until the block fits: every
// section keeps its newest entries for as long as possible.
std::string KeepNewestMemory(const std::string& block, size_t max_chars, int* kept, int* total) {
  std::vector<MemoryPart> parts = ParseMemory(block);
  *total = 0;
  for (const MemoryPart& part : parts) *total += static_cast<int>(part.entries.size());
  *kept = *total;
  std::string rendered = RenderMemory(parts);
  while (rendered.size() > max_chars && *kept > 0) {
    MemoryPart* fullest = nullptr;
    for (MemoryPart& part : parts) {
      if (!part.entries.empty() &&
          (fullest == nullptr || part.entries.size() > fullest->entries.size())) {
        fullest = &part;
      }
    }
    fullest->entries.erase(fullest->entries.begin());
    --*kept;
    rendered = RenderMemory(parts);
  }
  return *kept > 0 ? rendered : "";
}

// ---------------------------------------------------------------------------------------------
// Prompt parts

struct Part {
  std::string name;
  bool system = true;
  std::string text;  // ends with one newline
};

Prompt Assemble(const std::vector<Part>& parts) {
  Prompt prompt;
  for (const Part& part : parts) {
    std::string& into = part.system ? prompt.system : prompt.user;
    if (!into.empty()) into += "\n";
    into += part.text;
    prompt.sections.push_back(part.name);
  }
  return prompt;
}

size_t Size(const std::vector<Part>& parts) {
  Prompt p = Assemble(parts);
  return p.system.size() + p.user.size();
}

Part* Find(std::vector<Part>& parts, const std::string& name) {
  for (Part& part : parts) {
    if (part.name == name) return &part;
  }
  return nullptr;
}

Result<std::string> Component(const std::string& name) {
  const auto& texts = PromptTexts();
  auto it = texts.find(name);
  if (it == texts.end()) {
    return Status::Internal("prompt component " + name + ".md is not embedded in this binary");
  }
  return it->second;
}

// "gpu_sm80", "gpu_sm90", "gpu_sm100" or "gpu_generic" for the target's architecture family.
std::string GpuSection(const GpuTarget& gpu) {
  switch (gpu.major()) {
    case 8:
      return "gpu_sm80";
    case 9:
      return "gpu_sm90";
    case 10:
      return "gpu_sm100";
    default:
      return "gpu_generic";
  }
}

// The nvcc flag that builds for the target; Hopper and data-centre Blackwell need their
// architecture-specific "a" targets for wgmma, setmaxnreg and tcgen05.
std::string ArchFlag(const GpuTarget& gpu) {
  // Unknown architecture: nvcc builds for the GPU of the machine that builds, which is the one the
  // candidate runs on.
  if (gpu.arch.empty()) return "-arch=native";
  std::string digits;
  for (char c : gpu.arch) {
    if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
  }
  const std::string suffix = (gpu.major() == 9 || gpu.major() == 10) ? "a" : "";
  return "-gencode=arch=compute_" + digits + suffix + ",code=sm_" + digits + suffix;
}

std::string KindTitle(InputKind kind) { return NameOf(kKindTitles, kind); }

// The prompt's part holding the problem. A PyTorch/Triton/CUDA reference as it is; a program
// (docs/programs.md) with what the harness makes of it, and its REFERENCE when it has one.
std::string ProblemPart(const ProblemSource& problem) {
  if (!problem.program) {
    return "## The reference (" + KindTitle(problem.kind) + ")\n\n" +
           Fenced(problem.code, "python");
  }
  const bool cu = problem.path.size() > 3 && problem.path.ends_with(".cu");
  std::string part = "## The program to beat (" + KindTitle(problem.kind) + " program, ENTRY = `" +
                     problem.entry + "`)\n\n" +
                     "The harness wraps this program as `Model(*get_init_inputs())` whose "
                     "`forward(*get_inputs())` returns `" +
                     problem.entry +
                     "(*inputs, *init_inputs)`. Your `ModelNew` takes the init inputs in its "
                     "constructor and the inputs in `forward`, and returns what `" +
                     problem.entry +
                     "` returns. The program's own time is the baseline your candidate is timed "
                     "against.";
  if (!problem.reference_code.empty()) {
    part +=
        " The PyTorch reference below defines the outputs your candidate must match (the "
        "program matches it too).";
  }
  part += "\n\n" + Fenced(problem.code, cu ? "cuda" : "python");
  if (!problem.reference_code.empty()) {
    part += "\n### The PyTorch reference (expected outputs)\n\n" +
            Fenced(problem.reference_code, "python");
  }
  return part;
}

std::string FormatSpeedup(double speedup) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.2fx", speedup);
  std::string text = buffer;
  if (speedup < 1.0) text += " (slower than the reference)";
  return text;
}

Status Validate(const PromptContext& c) {
  if (Trim(c.problem.code).empty()) {
    return Status::InvalidArgument("the problem has no code: give the reference (class Model)");
  }
  if (c.num_candidates < 1 || c.num_candidates > kMaxCandidates) {
    return Status::InvalidArgument("num_candidates is " + std::to_string(c.num_candidates) +
                                   "; ask for 1 to " + std::to_string(kMaxCandidates));
  }
  if (!c.gpu.arch.empty() && c.gpu.major() == 0) {
    return Status::InvalidArgument("GPU architecture '" + c.gpu.arch +
                                   "' is not of the form sm_80, sm_90, sm_100");
  }
  if (c.device != "cuda" && c.device != "cpu") {
    return Status::InvalidArgument("device '" + c.device + "' is neither cuda nor cpu");
  }
  if (c.max_chars == 0) return Status::InvalidArgument("max_chars must be positive");
  if (c.mode == PromptMode::kDebug) {
    if (Trim(c.parent_code).empty()) {
      return Status::InvalidArgument(
          "debug mode needs the failing candidate's code (parent_code, --parent)");
    }
    if (Trim(c.feedback).empty()) {
      return Status::InvalidArgument(
          "debug mode needs the compiler, runtime or correctness errors to fix (feedback, "
          "--feedback-file)");
    }
  }
  if (c.mode == PromptMode::kOptimize && Trim(c.parent_code).empty()) {
    return Status::InvalidArgument(
        "optimize mode needs the working candidate to improve (parent_code, --parent)");
  }
  return Status::Ok();
}

}  // namespace

std::string TrimBuildErrors(const std::string& diagnostics, size_t max_chars) {
  const std::string text = StripAnsi(diagnostics);
  const std::vector<std::string> lines = SplitLines(text);
  const std::vector<Traceback> tracebacks = FindTracebacks(lines);
  std::vector<bool> in_traceback(lines.size(), false);
  for (const Traceback& tb : tracebacks) {
    for (size_t i = tb.start; i < tb.end; ++i) in_traceback[i] = true;
  }
  bool has_compiler_error = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    has_compiler_error = has_compiler_error || (!in_traceback[i] && IsCompilerError(lines[i]));
  }
  if (!has_compiler_error && tracebacks.empty()) return CutToFit(text, max_chars);

  std::vector<bool> used(lines.size(), false);
  std::map<std::string, size_t> repeats;  // duplicate key -> how often it came again
  size_t duplicates = 0;

  // Compiler errors, each with its context. Each group remembers its key, so that the number
  // of repeats can be added to its first line afterwards.
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
    std::vector<std::string> group;
    for (size_t back = 1; back <= 3 && back <= i; ++back) {
      const size_t j = i - back;
      if (used[j] || in_traceback[j] || !IsLeadingContext(lines[j])) break;
      group.insert(group.begin(), CutLine(lines[j]));
      used[j] = true;
    }
    group.push_back(CutLine(lines[i]));
    // What follows it, up to a blank line or the next diagnostic: the indented lines right after
    // it (operand types, source line, caret), then only the lines naming an instantiation.
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
    groups.push_back({key, std::move(group)});
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

  // Python tracebacks: the exception of each; for the last one, also its last frames and the
  // deepest frame in the user's own code when those are all library frames.
  std::string traces;
  std::set<std::string> seen;
  for (size_t t = 0; t < tracebacks.size(); ++t) {
    const Traceback& tb = tracebacks[t];
    if (t + 1 == tracebacks.size()) {
      traces += std::string(Trim(lines[tb.start])) + "\n";
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
    }
    if (tb.exception) {
      for (size_t i = *tb.exception; i < tb.end; ++i) {
        if (seen.emplace(Trim(lines[i])).second) traces += CutLine(lines[i]) + "\n";
      }
    }
  }

  // Anything else that reports a failure.
  std::string others;
  size_t warnings = 0, includes = 0, commands = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (used[i] || in_traceback[i]) continue;
    const std::string& line = lines[i];
    if (IsWarning(line)) {
      ++warnings;
    } else if (IsIncludeChain(line)) {
      ++includes;
    } else if (IsBuildCommand(line)) {
      ++commands;
    } else if (!IsTracebackGlue(line) && ReportsFailure(line)) {
      if (seen.emplace(Trim(line)).second) {
        others += CutLine(line) + "\n";
      } else {
        ++duplicates;
      }
    }
  }

  std::string body;
  size_t kept_lines = 0;
  for (const std::string* piece : {&errors, &traces, &others}) {
    if (piece->empty()) continue;
    if (!body.empty()) body += "\n";
    body += *piece;
    kept_lines += static_cast<size_t>(std::count(piece->begin(), piece->end(), '\n'));
  }
  std::string summary;
  if (body.size() < text.size()) {
    std::vector<std::string> kept, dropped;
    if (!errors.empty()) kept.push_back("compiler errors with their context");
    if (!traces.empty()) kept.push_back("the end of the Python traceback");
    if (!others.empty()) kept.push_back("other lines that report a failure");
    if (warnings > 0) dropped.push_back(Count(warnings, "warning line"));
    if (duplicates > 0) dropped.push_back(Count(duplicates, "repeated error"));
    if (includes > 0) dropped.push_back(Count(includes, "include-chain line"));
    if (commands > 0) dropped.push_back(Count(commands, "build-command line"));
    summary = "[kernelpro kept " + std::to_string(kept_lines) + " of " +
              std::to_string(lines.size()) + " lines (" + Kb(body.size()) + " of " +
              Kb(text.size()) + "): " + JoinList(kept, ", then ");
    if (!dropped.empty()) summary += "; dropped " + JoinList(dropped, ", ") + ", among others";
    summary += "]\n";
  }
  if (body.size() + summary.size() + (summary.empty() ? 0 : 1) <= max_chars) {
    return summary.empty() ? body : body + "\n" + summary;
  }
  // Tight: the errors matter more than the account of what was cut.
  summary = "[kernelpro kept " + std::to_string(kept_lines) + " of " +
            std::to_string(lines.size()) + " lines]\n";
  if (max_chars < 4 * summary.size()) return CutToFit(body, max_chars);
  return CutToFit(body, max_chars - summary.size() - 1) + "\n" + summary;
}

Result<Prompt> BuildPrompt(const PromptContext& context) {
  Status valid = Validate(context);
  if (!valid.ok()) return valid;

  const bool cpu = context.device == "cpu";
  const std::string gpu_section = cpu ? "target_cpu" : GpuSection(context.gpu);
  const std::string examples = cpu ? "examples_cpu" : "examples";
  const std::string arch_flag = ArchFlag(context.gpu);
  const std::map<std::string, std::string> values = {
      {"language", cpu ? "C++ for the CPU" : "CUDA"},
      {"build_what", cpu ? "C++" : "C++ and CUDA"},
      {"sources_rule", cpu ? "all of it in `cpp_sources`, with no `cuda_sources`"
                           : "declarations in `cpp_sources`, kernels and their host wrappers in "
                             "`cuda_sources`"},
      {"num_candidates", std::to_string(context.num_candidates)},
      {"gpu", !context.gpu.name.empty()   ? context.gpu.name
              : !context.gpu.arch.empty() ? context.gpu.arch
                                          : "the GPU the candidates run on (not detected)"},
      {"arch", context.gpu.arch.empty() ? "its architecture" : context.gpu.arch},
      {"arch_flag", arch_flag},
      {"cutlass_dir", context.cutlass_dir},
      // The build step adds sm_90a only on Hopper (python/kernelpro_worker/buildcache.py).
      {"cutlass_build_arch", context.gpu.major() == 9 && context.gpu.minor() == 0
                                 ? ", and with no architecture flag of yours `" + arch_flag +
                                       "` (warpgroup MMA and TMA need its `a`)"
                                 : ""},
  };
  const std::string input_name = "input_" + ToString(context.problem.kind);
  const std::string mode_name = "mode_" + ToString(context.mode);
  std::map<std::string, std::string> text;
  for (const std::string& name :
       {std::string("base_strategies"), input_name, gpu_section, std::string("cutlass"),
        std::string("memory_header"), std::string("energy_preferences"),
        std::string("output_contract"), mode_name, examples}) {
    auto component = Component(name);
    if (!component.ok()) return component.status();
    text[name] = Fill(*component, values);
  }
  // The base strategies whole (without the marker line) and shortened (cut at the marker).
  const std::string& base = text["base_strategies"];
  std::string base_full = base, base_short = base;
  if (size_t marker = base.find(kShortenMarker); marker != std::string::npos) {
    size_t line_end = base.find('\n', marker);
    base_full =
        base.substr(0, marker) + (line_end == std::string::npos ? "" : base.substr(line_end + 1));
    base_short = base.substr(0, marker);
  }
  const std::string memory_head = EndWithNewline(text["memory_header"]) + "\n";

  std::vector<Part> parts;
  auto add = [&](const std::string& name, bool system, std::string content) {
    parts.push_back({name, system, EndWithNewline(std::move(content))});
  };
  add("base_strategies", true, base_full);
  add(input_name, true, text[input_name]);
  add(gpu_section, true, text[gpu_section]);
  if (!context.cutlass_dir.empty()) {
    add("cutlass", true, text["cutlass"]);
    if (!Trim(context.cutlass_constraints).empty()) {
      add("cutlass_constraints", true, context.cutlass_constraints);
    }
  }
  if (context.energy_preferences) add("energy_preferences", true, text["energy_preferences"]);
  if (!Trim(context.memory_block).empty()) {
    add("memory", true, memory_head + context.memory_block);
  }
  add("output_contract", true, text["output_contract"]);
  add(mode_name, false, text[mode_name]);
  add(examples, false, text[examples]);
  add("problem", false, ProblemPart(context.problem));

  // The feedback's heading and how its content is wrapped, so that it can be cut and rebuilt.
  std::string feedback_content, feedback_head;
  bool feedback_fenced = false;
  if (context.mode == PromptMode::kDebug) {
    add("parent_code", false,
        "## The failing candidate\n\n" + Fenced(context.parent_code, "python"));
    feedback_content = TrimBuildErrors(context.feedback, context.max_error_chars);
    feedback_head = "## What went wrong\n\n";
    feedback_fenced = true;
  } else if (context.mode == PromptMode::kOptimize) {
    const std::string speed =
        context.parent_speedup
            ? "Its measured speedup over the reference: " + FormatSpeedup(*context.parent_speedup) +
                  ".\n\n"
            : "Its speedup over the reference has not been measured.\n\n";
    add("parent_code", false,
        "## The candidate to improve\n\n" + speed + Fenced(context.parent_code, "python"));
    feedback_content = context.feedback;
    feedback_head = "## Profiling analysis\n\n";
  }
  auto feedback_text = [&](const std::string& content) {
    return feedback_head + (feedback_fenced ? Fenced(content, "text") : EndWithNewline(content));
  };
  if (!Trim(feedback_content).empty()) add("feedback", false, feedback_text(feedback_content));

  // The size budget, least important part first.
  std::vector<std::string> trimmed;
  const size_t budget = context.max_chars;
  if (Size(parts) > budget) {
    Part* part = Find(parts, examples);
    const size_t size = part->text.size();
    parts.erase(parts.begin() + (part - parts.data()));
    trimmed.push_back("examples: dropped (" + std::to_string(size) + " characters)");
  }
  if (Size(parts) > budget && Find(parts, "memory") != nullptr) {
    Part* part = Find(parts, "memory");
    const size_t over = Size(parts) - budget;
    const size_t block_size = part->text.size() - memory_head.size();
    int kept = 0, total = 0;
    std::string block = KeepNewestMemory(context.memory_block,
                                         block_size > over ? block_size - over : 0, &kept, &total);
    if (kept == 0) {
      parts.erase(parts.begin() + (part - parts.data()));
      trimmed.push_back("memory: dropped (all " + std::to_string(total) + " entries)");
    } else {
      part->text = EndWithNewline(memory_head + block);
      trimmed.push_back("memory: kept the newest " + std::to_string(kept) + " of " +
                        std::to_string(total) + " entries");
    }
  }
  if (Size(parts) > budget && base_short.size() < base_full.size()) {
    Part* part = Find(parts, "base_strategies");
    part->text = EndWithNewline(base_short);
    trimmed.push_back("base_strategies: shortened from " + std::to_string(base_full.size()) +
                      " to " + std::to_string(part->text.size()) + " characters");
  }
  if (Size(parts) > budget && Find(parts, "feedback") != nullptr) {
    Part* part = Find(parts, "feedback");
    const size_t over = Size(parts) - budget;
    const size_t original = feedback_content.size();
    // Room for the note that says what was cut; its digits never exceed the original's.
    const std::string note_model = "[... " + std::to_string(original) +
                                   " characters cut from the end to fit the prompt's size "
                                   "budget]\n";
    size_t target = original > over + note_model.size() ? original - over - note_model.size() : 0;
    target = std::max(target, std::min(original, kMinFeedbackChars));
    std::string kept = PrefixAtLine(feedback_content, target);
    if (kept.size() < original) {
      if (!kept.empty() && kept.back() != '\n') kept += '\n';
      const size_t cut = original - std::min(original, kept.size());
      kept += "[... " + std::to_string(cut) +
              " characters cut from the end to fit the prompt's size budget]\n";
      part->text = EndWithNewline(feedback_text(kept));
      trimmed.push_back("feedback: cut from " + std::to_string(original) + " to " +
                        std::to_string(original - cut) + " characters at its end");
    }
  }
  const size_t total = Size(parts);
  if (total > budget) {
    std::string sizes;
    for (const Part& part : parts) {
      sizes += (sizes.empty() ? "" : ", ") + part.name + " " + std::to_string(part.text.size());
    }
    return Status::InvalidArgument(
        "the prompt needs " + std::to_string(total) + " characters after trimming, but the " +
        "budget (max_chars) is " + std::to_string(budget) + ": " + sizes + ". The reference, the " +
        "parent code, the output contract and the mode instructions are never trimmed: raise " +
        "the budget");
  }
  Prompt prompt = Assemble(parts);
  prompt.trimmed = std::move(trimmed);
  return prompt;
}

}  // namespace kernelpro::agents
