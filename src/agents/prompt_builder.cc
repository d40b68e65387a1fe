#include "agents/prompt_builder.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <map>
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

// ---------------------------------------------------------------------------------------------
// Assembling the prompt

// The names of the components a context's prompt is made of, besides those every prompt has.
struct ComponentNames {
  std::string input;     // input_<kind>
  std::string gpu;       // gpu_<family>, or target_cpu
  std::string mode;      // mode_<mode>
  std::string examples;  // examples, or examples_cpu
};

ComponentNames ComponentNamesOf(const PromptContext& context) {
  const bool cpu = context.device == "cpu";
  return {"input_" + ToString(context.problem.kind), cpu ? "target_cpu" : GpuSection(context.gpu),
          "mode_" + ToString(context.mode), cpu ? "examples_cpu" : "examples"};
}

// What the components' {placeholders} stand for in this context.
std::map<std::string, std::string> PlaceholderValues(const PromptContext& context) {
  const bool cpu = context.device == "cpu";
  const std::string arch_flag = ArchFlag(context.gpu);
  return {
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
}

// The text of every component the prompt may show, by name, its placeholders filled.
Result<std::map<std::string, std::string>> FilledComponents(
    const ComponentNames& names, const std::map<std::string, std::string>& values) {
  std::map<std::string, std::string> text;
  for (const std::string& name : {std::string("base_strategies"), names.input, names.gpu,
                                  std::string("cutlass"), std::string("memory_header"),
                                  std::string("stage1_header"), std::string("energy_preferences"),
                                  std::string("output_contract"), names.mode, names.examples}) {
    auto component = Component(name);
    if (!component.ok()) return component.status();
    text[name] = Fill(*component, values);
  }
  return text;
}

// The base strategies whole (without the marker line) and shortened (cut at the marker).
struct BaseStrategies {
  std::string full;
  std::string shortened;
};

BaseStrategies SplitAtShortenMarker(const std::string& base) {
  BaseStrategies split{base, base};
  if (size_t marker = base.find(kShortenMarker); marker != std::string::npos) {
    size_t line_end = base.find('\n', marker);
    split.full =
        base.substr(0, marker) + (line_end == std::string::npos ? "" : base.substr(line_end + 1));
    split.shortened = base.substr(0, marker);
  }
  return split;
}

void AddPart(std::vector<Part>& parts, const std::string& name, bool system, std::string content) {
  parts.push_back({name, system, EndWithNewline(std::move(content))});
}

// The system part: how to optimise for this input, target and build, then the memory and the
// output contract.
std::vector<Part> SystemParts(const PromptContext& context, const ComponentNames& names,
                              std::map<std::string, std::string>& text,
                              const std::string& base_strategies, const std::string& memory_head) {
  std::vector<Part> parts;
  AddPart(parts, "base_strategies", true, base_strategies);
  AddPart(parts, names.input, true, text[names.input]);
  AddPart(parts, names.gpu, true, text[names.gpu]);
  if (!context.cutlass_dir.empty()) {
    AddPart(parts, "cutlass", true, text["cutlass"]);
    if (!Trim(context.cutlass_constraints).empty()) {
      AddPart(parts, "cutlass_constraints", true, context.cutlass_constraints);
    }
  }
  if (context.energy_preferences) {
    AddPart(parts, "energy_preferences", true, text["energy_preferences"]);
  }
  if (!Trim(context.memory_block).empty()) {
    AddPart(parts, "memory", true, memory_head + context.memory_block);
  }
  AddPart(parts, "output_contract", true, text["output_contract"]);
  return parts;
}

// The feedback's heading and how its content is wrapped, so that it can be cut and rebuilt.
struct Feedback {
  std::string content;  // as given (optimize) or trimmed by TrimBuildErrors (debug)
  std::string head;
  bool fenced = false;

  std::string Render(const std::string& shown) const {
    return head + (fenced ? Fenced(shown, "text") : EndWithNewline(shown));
  }
};

// The user part, added to `parts`: the mode's task, the examples, the problem, then what the mode
// works from (the parent code and its feedback). Returns the feedback, for the size budget.
Feedback AddUserParts(const PromptContext& context, const ComponentNames& names,
                      std::map<std::string, std::string>& text, std::vector<Part>& parts) {
  AddPart(parts, names.mode, false, text[names.mode]);
  AddPart(parts, names.examples, false, text[names.examples]);
  AddPart(parts, "problem", false, ProblemPart(context.problem));
  // No GPU roofline describes a CPU target.
  if (context.device != "cpu" && !Trim(context.stage1).empty()) {
    AddPart(parts, "stage1", false, EndWithNewline(text["stage1_header"]) + "\n" + context.stage1);
  }
  Feedback feedback;
  if (context.mode == PromptMode::kDebug) {
    AddPart(parts, "parent_code", false,
            "## The failing candidate\n\n" + Fenced(context.parent_code, "python"));
    feedback.content = TrimBuildErrors(context.feedback, context.max_error_chars);
    feedback.head = "## What went wrong\n\n";
    feedback.fenced = true;
  } else if (context.mode == PromptMode::kOptimize) {
    const std::string speed =
        context.parent_speedup
            ? "Its measured speedup over the reference: " + FormatSpeedup(*context.parent_speedup) +
                  ".\n\n"
            : "Its speedup over the reference has not been measured.\n\n";
    AddPart(parts, "parent_code", false,
            "## The candidate to improve\n\n" + speed + Fenced(context.parent_code, "python"));
    feedback.content = context.feedback;
    feedback.head = "## Profiling analysis\n\n";
  }
  if (!Trim(feedback.content).empty()) {
    AddPart(parts, "feedback", false, feedback.Render(feedback.content));
  }
  return feedback;
}

// ---------------------------------------------------------------------------------------------
// The size budget: each step below gives way only while the parts exceed `budget`, and says in
// `trimmed` what it took.

void RemovePart(std::vector<Part>& parts, Part* part) {
  parts.erase(parts.begin() + (part - parts.data()));
}

void DropExamples(std::vector<Part>& parts, const std::string& examples, size_t budget,
                  std::vector<std::string>& trimmed) {
  if (Size(parts) <= budget) return;
  Part* part = Find(parts, examples);
  const size_t size = part->text.size();
  RemovePart(parts, part);
  trimmed.push_back("examples: dropped (" + std::to_string(size) + " characters)");
}

void KeepNewestMemoryEntries(std::vector<Part>& parts, const std::string& memory_head,
                             const std::string& memory_block, size_t budget,
                             std::vector<std::string>& trimmed) {
  if (Size(parts) <= budget || Find(parts, "memory") == nullptr) return;
  Part* part = Find(parts, "memory");
  const size_t over = Size(parts) - budget;
  const size_t block_size = part->text.size() - memory_head.size();
  int kept = 0, total = 0;
  std::string block =
      KeepNewestMemory(memory_block, block_size > over ? block_size - over : 0, &kept, &total);
  if (kept == 0) {
    RemovePart(parts, part);
    trimmed.push_back("memory: dropped (all " + std::to_string(total) + " entries)");
  } else {
    part->text = EndWithNewline(memory_head + block);
    trimmed.push_back("memory: kept the newest " + std::to_string(kept) + " of " +
                      std::to_string(total) + " entries");
  }
}

void ShortenBaseStrategies(std::vector<Part>& parts, const BaseStrategies& base, size_t budget,
                           std::vector<std::string>& trimmed) {
  if (Size(parts) <= budget || base.shortened.size() >= base.full.size()) return;
  Part* part = Find(parts, "base_strategies");
  part->text = EndWithNewline(base.shortened);
  trimmed.push_back("base_strategies: shortened from " + std::to_string(base.full.size()) + " to " +
                    std::to_string(part->text.size()) + " characters");
}

// Cuts the feedback from its end, never below kMinFeedbackChars, with a note that says so.
void CutFeedbackEnd(std::vector<Part>& parts, const Feedback& feedback, size_t budget,
                    std::vector<std::string>& trimmed) {
  if (Size(parts) <= budget || Find(parts, "feedback") == nullptr) return;
  Part* part = Find(parts, "feedback");
  const size_t over = Size(parts) - budget;
  const size_t original = feedback.content.size();
  // Room for the note that says what was cut; its digits never exceed the original's.
  const std::string note_model = "[... " + std::to_string(original) +
                                 " characters cut from the end to fit the prompt's size "
                                 "budget]\n";
  size_t target = original > over + note_model.size() ? original - over - note_model.size() : 0;
  target = std::max(target, std::min(original, kMinFeedbackChars));
  std::string kept = PrefixAtLineBreak(feedback.content, target);
  if (kept.size() < original) {
    if (!kept.empty() && kept.back() != '\n') kept += '\n';
    const size_t cut = original - std::min(original, kept.size());
    kept += "[... " + std::to_string(cut) +
            " characters cut from the end to fit the prompt's size budget]\n";
    part->text = EndWithNewline(feedback.Render(kept));
    trimmed.push_back("feedback: cut from " + std::to_string(original) + " to " +
                      std::to_string(original - cut) + " characters at its end");
  }
}

// InvalidArgument, with the size of every part, when what is left still exceeds the budget.
Status CheckFitsBudget(const std::vector<Part>& parts, size_t budget) {
  const size_t total = Size(parts);
  if (total <= budget) return Status::Ok();
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

}  // namespace

Result<Prompt> BuildPrompt(const PromptContext& context) {
  Status valid = Validate(context);
  if (!valid.ok()) return valid;
  const ComponentNames names = ComponentNamesOf(context);
  Result<std::map<std::string, std::string>> filled =
      FilledComponents(names, PlaceholderValues(context));
  if (!filled.ok()) return filled.status();
  std::map<std::string, std::string>& text = *filled;
  const BaseStrategies base = SplitAtShortenMarker(text["base_strategies"]);
  const std::string memory_head = EndWithNewline(text["memory_header"]) + "\n";

  std::vector<Part> parts = SystemParts(context, names, text, base.full, memory_head);
  const Feedback feedback = AddUserParts(context, names, text, parts);

  // The size budget, least important part first.
  std::vector<std::string> trimmed;
  const size_t budget = context.max_chars;
  DropExamples(parts, names.examples, budget, trimmed);
  KeepNewestMemoryEntries(parts, memory_head, context.memory_block, budget, trimmed);
  ShortenBaseStrategies(parts, base, budget, trimmed);
  CutFeedbackEnd(parts, feedback, budget, trimmed);
  if (Status fits = CheckFitsBudget(parts, budget); !fits.ok()) return fits;
  Prompt prompt = Assemble(parts);
  prompt.trimmed = std::move(trimmed);
  return prompt;
}

}  // namespace kernelpro::agents
