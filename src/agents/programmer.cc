#include "agents/programmer.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <regex>
#include <sstream>
#include <utility>

#include "core/subprocess.h"
#include "core/text.h"
#include "llm/types.h"

namespace kernelpro::agents {
namespace {

// Parses stdin with ast and prints one tab-separated line: "syntax <line> <message>" for a
// SyntaxError (or source Python cannot even read, such as a NUL byte), else "classes <names...>".
constexpr char kSyntaxCheckScript[] = R"PY(
import ast, sys
source = sys.stdin.read()
try:
    tree = ast.parse(source)
except SyntaxError as e:
    print("syntax", e.lineno or 0, e.msg, sep="\t")
except ValueError as e:
    print("syntax", 0, str(e), sep="\t")
else:
    print("classes", *[n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)], sep="\t")
)PY";

// Why the code carries no kernel for `device`, or "" when it does.
std::string MissingKernelSource(const std::string& code, const std::string& device) {
  const bool builds = Contains(code, "load_inline") || Contains(code, "cpp_extension");
  if (device == "cpu") {
    if (Contains(code, "load_inline") && Contains(code, "cpp_sources")) return "";
    return "no C++ kernel source: a cpu candidate builds its kernel with "
           "torch.utils.cpp_extension.load_inline(cpp_sources=...)";
  }
  if (Contains(code, "__global__")) return "";
  if (builds && Contains(code, "cuda_sources")) return "";
  if (builds) {
    return "no CUDA kernel source: it builds an extension without CUDA code (no cuda_sources, no "
           "__global__ kernel)";
  }
  return "no CUDA kernel source: ModelNew must build its kernel with "
         "torch.utils.cpp_extension.load_inline(cuda_sources=...) (no load_inline, no __global__ "
         "kernel found)";
}

// A candidate as the reply gave it, before any check.
struct Proposed {
  std::string strategy;
  std::string code;
};

// Models sometimes wrap the code string itself in a markdown fence; the file starts after it.
std::string StripFence(const std::string& code) {
  std::string text(Trim(code));
  if (!text.starts_with("```")) return code;
  size_t first_newline = text.find('\n');
  if (first_newline == std::string::npos) return code;
  text = text.substr(first_newline + 1);
  size_t close = text.rfind("```");
  if (close != std::string::npos && Trim(text.substr(close + 3)).empty()) {
    text = text.substr(0, close);
  }
  return text;
}

std::string StrategyOrUnnamed(std::string strategy) {
  strategy = std::string(Trim(strategy));
  return strategy.empty() ? "unnamed" : strategy;
}

// The candidates of a JSON answer: {"candidates": [...]}, a bare list of {"code": ...} objects, or
// one such object. Bare strings count only under "candidates": a reply without JSON may still
// yield a stray list such as ["-O3"] from the code it quotes, and that is no candidate.
std::vector<Proposed> FromJson(const Json& json) {
  Json items = Json::array();
  bool strings_allowed = false;
  if (json.is_object() && json.contains("candidates") && json["candidates"].is_array()) {
    items = json["candidates"];
    strings_allowed = true;
  } else if (json.is_array()) {
    items = json;
  } else if (json.is_object() && json.contains("code")) {
    items.push_back(json);
  }
  std::vector<Proposed> out;
  for (const Json& item : items) {
    Proposed p;
    if (item.is_string() && strings_allowed) {
      p.code = item.get<std::string>();
    } else if (item.is_object() && (strings_allowed || item.contains("code"))) {
      p.strategy = JsonGet<std::string>(item, "strategy", "");
      p.code = JsonGet<std::string>(item, "code", "");
    } else {
      continue;
    }
    p.strategy = StrategyOrUnnamed(p.strategy);
    p.code = StripFence(p.code);
    out.push_back(std::move(p));
  }
  return out;
}

// The strategy a free-text reply gives a fenced block: the last non-empty line before it, without
// markdown decoration or a "Candidate 2:" / "Strategy:" label.
std::string StrategyBefore(const std::string& text) {
  std::string s;
  for (const std::string& line : SplitLines(text)) {
    if (!Trim(line).empty()) s = Trim(line);
  }
  if (s.empty()) return "unnamed";
  s = std::regex_replace(s, std::regex(R"(^[#>*\-\s]+)"), "");
  s = std::regex_replace(s, std::regex(R"(^\d+[.)]\s*)"), "");
  s = std::regex_replace(s, std::regex(R"(\*\*|__)"), "");
  s = std::regex_replace(
      s, std::regex(R"(^(candidate|option|approach)\s*\d*\s*[:.\-]\s*)", std::regex::icase), "");
  s = std::regex_replace(s, std::regex(R"(^strategy\s*:\s*)", std::regex::icase), "");
  s = std::string(Trim(s));
  while (!s.empty() && (s.back() == ':' || s.back() == '.')) s.pop_back();
  if (s.size() > 300) s = s.substr(0, 300);
  return StrategyOrUnnamed(s);
}

// ```python (or ```py) blocks, each with the strategy the text before it names. A block left open
// (a reply cut off at the token limit) is not a candidate.
std::vector<Proposed> FromFencedBlocks(const std::string& text) {
  std::vector<Proposed> out;
  size_t pos = 0, previous_end = 0;
  while ((pos = text.find("```", pos)) != std::string::npos) {
    size_t info_end = text.find('\n', pos + 3);
    if (info_end == std::string::npos) break;
    std::string info = Lower(Trim(text.substr(pos + 3, info_end - pos - 3)));
    size_t close = text.find("\n```", info_end);
    if (close == std::string::npos) break;
    if (info == "python" || info == "py" || info == "python3") {
      Proposed p;
      p.strategy = StrategyBefore(text.substr(previous_end, pos - previous_end));
      p.code = text.substr(info_end + 1, close + 1 - (info_end + 1));
      out.push_back(std::move(p));
    }
    size_t line_end = text.find('\n', close + 4);
    previous_end = line_end == std::string::npos ? text.size() : line_end;
    pos = previous_end;
  }
  return out;
}

bool HasCode(const std::vector<Proposed>& proposed) {
  return std::any_of(proposed.begin(), proposed.end(),
                     [](const Proposed& p) { return !Trim(p.code).empty(); });
}

// Whether a failed first turn means the backend does not take tool calls: a 4xx other than
// credentials and rate limits, or a server error that names tools (llama.cpp: "tools param
// requires --jinja flag").
bool RefusesTools(const llm::Error& error) {
  if (error.kind == llm::ErrorKind::kBadRequest) return true;
  return error.kind == llm::ErrorKind::kServer && Contains(Lower(error.message), "tool");
}

// The calls of a finished conversation, each with the result the model read.
std::vector<ProgrammerToolCall> CallsOf(const std::vector<llm::Message>& transcript) {
  std::vector<ProgrammerToolCall> calls;
  std::map<std::string, size_t> by_id;
  for (const llm::Message& m : transcript) {
    for (const llm::ToolCall& call : m.tool_calls) {
      by_id[call.id] = calls.size();
      calls.push_back({call.name, call.arguments, "", false});
    }
    if (m.tool_result) {
      auto it = by_id.find(m.tool_result->tool_call_id);
      if (it == by_id.end()) continue;
      calls[it->second].result = m.tool_result->content;
      calls[it->second].is_error = m.tool_result->is_error;
    }
  }
  return calls;
}

// The model's final answer: one call, or with tools a conversation (falling back to one call when
// the backend refuses tools). Fills the result's tool facts, usage of a conversation and notes.
llm::Outcome Ask(llm::Backend& backend, llm::Request request, const ProgrammerOptions& options,
                 ProgrammerResult& result) {
  if (options.tools == nullptr || options.tools->definitions.empty()) {
    return backend.Complete(request);
  }
  const ProgrammerTools& tools = *options.tools;
  llm::Request with_tools = request;
  with_tools.tools = tools.definitions;
  with_tools.tool_choice = llm::ToolChoice::kAuto;
  if (!tools.instruction.empty()) {
    with_tools.messages.back().text += "\n\n" + tools.instruction;
  }
  llm::ToolConversation conversation =
      llm::RunToolConversation(backend, std::move(with_tools), tools.handlers, tools.loop);
  result.tools_offered = true;
  result.tool_calls = CallsOf(conversation.transcript);
  result.usage = conversation.usage;
  if (conversation.ok()) return std::move(*conversation.response);
  const llm::Error& error = *conversation.error;
  if (conversation.turns == 1 && result.tool_calls.empty() && RefusesTools(error)) {
    result.tools_offered = false;
    result.tools_refused = "the backend refused the request with tools (" + error.ToString() +
                           "); the programmer answered in one call without them";
    result.notes.push_back(result.tools_refused);
    llm::Outcome single = backend.Complete(request);
    if (single.ok()) result.usage = single.response().usage;
    return single;
  }
  return error;
}
}  // namespace

CandidateCheck CheckCandidateSource(const std::string& code, const CheckOptions& options) {
  CandidateCheck check;
  if (Trim(code).empty()) {
    check.reason = "empty code";
    return check;
  }
  std::optional<std::vector<std::string>> classes;
  ProcessOptions process;
  process.argv = {options.python, "-I", "-c", kSyntaxCheckScript};
  process.stdin_data = code;
  process.limits.wall_timeout = std::chrono::milliseconds(options.timeout_ms);
  process.capture_bytes = 16 * 1024;
  Result<ProcessResult> run = RunProcess(process);
  std::string trouble;
  if (!run.ok()) {
    trouble = run.status().message();
  } else if (!run->started) {
    trouble = "could not start " + options.python + ": " + run->start_error;
  } else if (!run->exited || run->exit_code != 0) {
    trouble = options.python + " " + run->Describe();
  } else {
    std::vector<std::string> parts = Split(Trim(run->stdout_text), '\t');
    if (!parts.empty() && parts[0] == "syntax" && parts.size() >= 3) {
      int line = std::atoi(parts[1].c_str());
      if (line > 0) check.syntax_error_line = line;
      check.reason = "Python syntax error" +
                     (line > 0 ? " at line " + std::to_string(line) : std::string()) + ": " +
                     parts[2];
      return check;
    }
    if (!parts.empty() && parts[0] == "classes") {
      classes.emplace(parts.begin() + 1, parts.end());
    } else {
      trouble = options.python + " printed no verdict: " + run->stdout_text + run->stderr_text;
    }
  }
  if (!trouble.empty()) {
    check.notes.push_back("syntax check skipped: " + std::string(Trim(trouble)));
  }

  const bool defines_model_new =
      classes ? std::find(classes->begin(), classes->end(), "ModelNew") != classes->end()
              : std::regex_search(code, std::regex(R"((^|\n)\s*class\s+ModelNew\b)"));
  if (!defines_model_new) {
    check.reason = "no class ModelNew: the candidate must define class ModelNew(nn.Module)";
    return check;
  }
  check.reason = MissingKernelSource(code, options.device);
  check.ok = check.reason.empty();
  return check;
}

Json CandidatesSchema() {
  return Json::parse(R"({
    "type": "object",
    "properties": {
      "candidates": {
        "type": "array",
        "items": {
          "type": "object",
          "properties": {
            "strategy": {"type": "string", "description": "the optimisation idea in one sentence"},
            "code": {"type": "string", "description": "a complete Python file defining ModelNew"}
          },
          "required": ["strategy", "code"],
          "additionalProperties": false
        }
      }
    },
    "required": ["candidates"],
    "additionalProperties": false
  })");
}

std::string CandidatesInstruction(int num_candidates, const std::string& device) {
  std::ostringstream out;
  out << "## Answer format\n\n";
  if (num_candidates == 1) {
    out << "Propose one candidate.";
  } else {
    out << "Propose " << num_candidates
        << " candidates that differ in their optimisation strategy, not only in details.";
  }
  out << " Answer with one JSON object {\"candidates\": [{\"strategy\": ..., \"code\": ...}]}. "
         "`strategy` names the idea in one sentence. `code` is a complete Python file that "
         "defines class ModelNew(nn.Module) with the same constructor and forward arguments as "
         "Model, and ";
  if (device == "cpu") {
    out << "builds its C++ kernel with torch.utils.cpp_extension.load_inline(cpp_sources=...).";
  } else {
    out << "builds its CUDA kernel with torch.utils.cpp_extension.load_inline "
           "(cuda_sources=...).";
  }
  out << " Put the code in the JSON string as plain text, without markdown fences.\n";
  return out.str();
}

ProgrammerResult RunProgrammer(llm::Backend& backend, const Prompt& prompt,
                               const ProgrammerOptions& options) {
  ProgrammerResult result;
  result.asked = std::max(1, options.num_candidates);

  llm::Request request;
  request.system = prompt.system;
  // A prompt from the PromptBuilder carries the answer format already (its output_contract
  // part); any other prompt gets it here, so the reply can always be read.
  const bool has_contract = std::find(prompt.sections.begin(), prompt.sections.end(),
                                      "output_contract") != prompt.sections.end();
  request.messages.push_back(llm::Message::User(
      has_contract ? prompt.user
                   : prompt.user + "\n\n" + CandidatesInstruction(result.asked, options.device)));
  request.max_tokens = options.max_tokens;
  request.temperature = options.temperature;
  request.seed = options.seed;
  request.response_schema = llm::ResponseSchema{"candidates", CandidatesSchema()};

  llm::Outcome outcome = Ask(backend, std::move(request), options, result);
  // A reply without the JSON that was asked for comes back as kMalformed with its text; the
  // candidates may still be in fenced blocks.
  const bool prose_only = !outcome.ok() && outcome.error().kind == llm::ErrorKind::kMalformed &&
                          !outcome.error().reply_text.empty();
  if (!outcome.ok() && !prose_only) {
    result.error = outcome.error();
    return result;
  }
  llm::Response response;
  if (prose_only) {
    response.text = outcome.error().reply_text;
    result.notes.push_back("the reply held no JSON; candidates were read from fenced blocks");
  } else {
    response = outcome.response();
  }
  if (!result.tools_offered) result.usage = response.usage;  // a conversation summed its turns
  result.raw_text = response.text;
  const bool cut_off = response.stop_reason == llm::FinishReason::kLength;
  if (cut_off) {
    result.notes.push_back("the reply was cut off at the token limit (max_tokens " +
                           std::to_string(request.max_tokens) +
                           "); only complete candidates were kept");
  }

  std::vector<Proposed> proposed;
  std::optional<Json> json =
      response.structured ? response.structured : llm::ExtractJson(response.text);
  if (json) proposed = FromJson(*json);
  if (!HasCode(proposed)) {
    proposed = FromFencedBlocks(response.text);
    result.from_fenced_blocks = !proposed.empty();
  }
  if (proposed.empty()) {
    result.error = llm::MakeError(
        cut_off ? llm::ErrorKind::kTruncated : llm::ErrorKind::kMalformed,
        std::string(cut_off ? "the reply was cut off before its first complete candidate"
                            : "the reply holds no candidate") +
            ": no JSON object with \"candidates\" and no ```python block");
    return result;
  }

  CheckOptions check_options;
  check_options.python = options.python;
  check_options.device = options.device;
  for (const Proposed& p : proposed) {
    auto reject = [&](std::string reason) {
      result.rejected.push_back({p.strategy, std::move(reason), p.code});
    };
    if (Trim(p.code).empty()) {
      reject("no code");
      continue;
    }
    auto same = std::find_if(result.candidates.begin(), result.candidates.end(),
                             [&](const Candidate& c) { return Trim(c.code) == Trim(p.code); });
    if (same != result.candidates.end()) {
      reject("duplicate of candidate " + std::to_string(same - result.candidates.begin() + 1) +
             " (same code)");
      continue;
    }
    if (static_cast<int>(result.candidates.size()) >= result.asked) {
      reject("beyond the " + std::to_string(result.asked) + " candidate(s) asked for");
      continue;
    }
    CandidateCheck check = CheckCandidateSource(p.code, check_options);
    for (const std::string& note : check.notes) {
      if (std::find(result.notes.begin(), result.notes.end(), note) == result.notes.end()) {
        result.notes.push_back(note);
      }
    }
    if (!check.ok) {
      reject(check.reason);
      continue;
    }
    if (options.pre_build_check) {
      if (std::string found = options.pre_build_check(p.code); !found.empty()) {
        reject(std::move(found));
        continue;
      }
    }
    result.candidates.push_back({p.strategy, p.code});
  }
  return result;
}

ProgrammerResult RunProgrammerAtTemperatures(llm::Backend& backend, const Prompt& prompt,
                                             const ProgrammerOptions& options,
                                             const std::vector<double>& temperatures) {
  if (temperatures.size() < 2) {
    ProgrammerOptions one = options;
    if (!temperatures.empty()) one.temperature = temperatures.front();
    return RunProgrammer(backend, prompt, one);
  }
  ProgrammerResult merged;
  merged.asked = std::max(1, options.num_candidates);
  std::optional<llm::Error> last_error;
  for (int i = 0; i < merged.asked; ++i) {
    ProgrammerOptions one = options;
    one.num_candidates = 1;
    one.temperature = temperatures[i % temperatures.size()];
    if (options.seed) one.seed = *options.seed + static_cast<std::uint64_t>(i);
    ProgrammerResult part = RunProgrammer(backend, prompt, one);
    merged.usage.input_tokens += part.usage.input_tokens;
    merged.usage.output_tokens += part.usage.output_tokens;
    merged.raw_text += (merged.raw_text.empty() ? "" : "\n\n") + part.raw_text;
    merged.from_fenced_blocks = merged.from_fenced_blocks || part.from_fenced_blocks;
    merged.tools_offered = merged.tools_offered || part.tools_offered;
    if (merged.tools_refused.empty()) merged.tools_refused = part.tools_refused;
    for (ProgrammerToolCall& call : part.tool_calls) merged.tool_calls.push_back(std::move(call));
    for (std::string& note : part.notes) {
      if (std::find(merged.notes.begin(), merged.notes.end(), note) == merged.notes.end()) {
        merged.notes.push_back(std::move(note));
      }
    }
    for (RejectedCandidate& r : part.rejected) merged.rejected.push_back(std::move(r));
    if (part.error) last_error = part.error;
    for (Candidate& c : part.candidates) {
      auto same = std::find_if(merged.candidates.begin(), merged.candidates.end(),
                               [&](const Candidate& m) { return Trim(m.code) == Trim(c.code); });
      if (same != merged.candidates.end()) {
        merged.rejected.push_back({c.strategy,
                                   "duplicate of candidate " +
                                       std::to_string(same - merged.candidates.begin() + 1) +
                                       " (same code)",
                                   c.code});
      } else {
        merged.candidates.push_back(std::move(c));
      }
    }
  }
  if (merged.candidates.empty()) merged.error = last_error;
  return merged;
}

}  // namespace kernelpro::agents
