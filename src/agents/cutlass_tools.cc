#include "agents/cutlass_tools.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>
#include <utility>

#include "core/text.h"

namespace kernelpro::agents {
namespace {

constexpr char kSearchTool[] = "search_cutlass";
constexpr char kReadTool[] = "read_cutlass_file";
constexpr char kListTool[] = "list_cutlass_directory";

// The counter the search handlers of one iteration share.
struct SearchBudget {
  std::mutex mu;
  int used = 0;
};

std::string Instruction(const CutlassKit& kit) {
  const CutlassKitOptions& o = kit.options();
  std::ostringstream out;
  out << "## Tools for this answer\n\n"
      << "Before you answer you may look things up in the CUTLASS/CuTe headers this build uses"
      << (kit.tree().version.empty() ? "" : " (CUTLASS " + kit.tree().version + ")") << ":\n"
      << "- `" << kSearchTool << "`: a regular expression over every header, answered like "
      << "grep -n. At most " << o.search_budget << " searches in this iteration; make them "
      << "specific (an atom's or collective's exact name).\n"
      << "- `" << kReadTool << "` and `" << kListTool << "`: read what your searches found, "
      << "list a folder. Not counted against the search budget.\n"
      << "- `" << kSmemProbeTool << "`: compiles a CuTe shared-memory layout "
      << "(tile_to_shape of a layout atom over a tile shape) with nvcc in a few seconds and says "
      << "whether it is valid and how many bytes it takes. Check a layout with it before you "
      << "write it into a kernel.\n"
      << "Use the exact names and template parameters the headers show rather than recalling "
      << "them. When you are done, answer with the JSON object described above; a tool call is "
      << "never the answer.\n";
  return out.str();
}

Result<std::string> RunProbe(const Json& arguments, const cutlass::SmemProbeOptions& probe) {
  if (!arguments.is_object()) return Status::InvalidArgument("the arguments must be an object");
  cutlass::SmemLayoutQuery query;
  auto text = [&](const char* key, std::string& field, bool required) -> Status {
    if (!arguments.contains(key)) {
      return required ? Status::InvalidArgument(std::string("missing \"") + key + "\"")
                      : Status::Ok();
    }
    if (!arguments[key].is_string()) {
      return Status::InvalidArgument(std::string("\"") + key + "\" must be a string");
    }
    field = arguments[key].get<std::string>();
    return Status::Ok();
  };
  for (Status s : {text("element_type", query.element_type, false), text("atom", query.atom, true),
                   text("tile_shape", query.tile_shape, true)}) {
    if (!s.ok()) return Status::InvalidArgument(std::string(kSmemProbeTool) + ": " + s.message());
  }
  Result<cutlass::SmemLayoutDiagnosis> diagnosis = cutlass::CheckSmemLayout(query, probe);
  if (!diagnosis.ok()) {
    return Status::InvalidArgument(std::string(kSmemProbeTool) + ": " +
                                   diagnosis.status().message());
  }
  std::string answer = diagnosis->summary;
  if (diagnosis->compiles && !diagnosis->layout.empty()) {
    answer += "\nlayout: " + ShortenText(diagnosis->layout, 1500);
  }
  if (!diagnosis->compiles && !diagnosis->first_error.empty()) {
    answer += "\nfirst error: " + ShortenText(diagnosis->first_error, 600);
  }
  return answer;
}

std::string ArgumentText(const Json& arguments, const char* key) {
  if (!arguments.is_object() || !arguments.contains(key)) return "";
  const Json& value = arguments[key];
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// "a-b" of a read's result header "FILE lines A-B of N:".
std::string ReadRange(const std::string& result) {
  static const std::regex kHeader(R"(^\S+ lines (\d+-\d+) of \d+:)");
  std::smatch m;
  if (std::regex_search(result, m, kHeader)) return m[1].str();
  return "";
}

}  // namespace

bool ConstraintsApplyTo(const GpuTarget& gpu) { return gpu.major() == 9 && gpu.minor() == 0; }

bool IncludesCutlass(const std::string& code) {
  static const std::regex kInclude(R"re(#\s*include\s*[<"](cute|cutlass)/)re");
  return std::regex_search(code, kInclude);
}

llm::ToolDefinition SmemProbeToolDefinition() {
  const Json schema = {
      {"type", "object"},
      {"properties",
       {{"element_type",
         {{"type", "string"},
          {"description",
           "Element type of the shared-memory tile (default cute::half_t); the atom may refer to "
           "it as Element, e.g. cute::bfloat16_t"}}},
        {"atom",
         {{"type", "string"},
          {"description",
           "The layout atom, as written in a kernel: "
           "\"GMMA::Layout_K_SW128_Atom<Element>{}\" or "
           "\"composition(Swizzle<3,3,3>{}, Layout<Shape<_8,_64>,Stride<_64,_1>>{})\""}}},
        {"tile_shape",
         {{"type", "string"},
          {"description",
           "The tile to cover, with an optional stage count: \"Shape<_128,_64,_4>\""}}}}},
      {"required", {"atom", "tile_shape"}},
      {"additionalProperties", false}};
  return {kSmemProbeTool,
          "Compile a CuTe shared-memory layout probe: tile_to_shape(atom, tile_shape) with nvcc "
          "against the CUTLASS headers. Answers whether it compiles, the layout and its bytes, or "
          "the first static_assert or error in plain words.",
          schema};
}

Result<std::unique_ptr<CutlassKit>> CutlassKit::Load(const cutlass::CutlassTree& tree,
                                                     CutlassKitOptions options) {
  std::unique_ptr<CutlassKit> kit(new CutlassKit());
  kit->tree_ = tree;
  kit->options_ = std::move(options);
  if (kit->options_.tools) {
    Result<cutlass::CutlassIndex> index = cutlass::CutlassIndex::Load(tree.include_dir);
    if (!index.ok()) return index.status();
    kit->index_ = std::make_shared<const cutlass::CutlassIndex>(std::move(*index));
  }
  Result<std::vector<cutlass::Constraint>> constraints = cutlass::AllConstraints(tree.include_dir);
  if (!constraints.ok()) return constraints.status();
  kit->constraints_ = std::move(*constraints);
  kit->constraints_markdown_ =
      cutlass::RenderConstraintsMarkdown(kit->constraints_, kit->options_.constraints_bytes);
  return kit;
}

ProgrammerTools CutlassKit::ForIteration() const {
  ProgrammerTools tools;
  if (!options_.tools || index_ == nullptr) return tools;
  tools.definitions = cutlass::CutlassToolDefinitions();
  tools.definitions.push_back(SmemProbeToolDefinition());
  auto budget = std::make_shared<SearchBudget>();
  const int search_budget = options_.search_budget;
  std::shared_ptr<const cutlass::CutlassIndex> index = index_;
  tools.handlers[kSearchTool] = [index, budget, search_budget](const Json& args) {
    std::lock_guard<std::mutex> lock(budget->mu);
    if (budget->used >= search_budget) {
      return Result<std::string>(Status::Unavailable(
          "the search budget of this iteration is spent (" + std::to_string(search_budget) +
          " searches): read the files your searches found, or answer with what you have"));
    }
    cutlass::CutlassToolOutcome outcome = cutlass::RunCutlassTool(*index, kSearchTool, args);
    if (outcome.counts_as_search) ++budget->used;
    return outcome.text;
  };
  for (const char* name : {kReadTool, kListTool}) {
    tools.handlers[name] = [index, tool = std::string(name)](const Json& args) {
      return cutlass::RunCutlassTool(*index, tool, args).text;
    };
  }
  cutlass::SmemProbeOptions probe;
  probe.include_dir = tree_.include_dir;
  probe.cache_dir = options_.probe_cache_dir;
  probe.nvcc = options_.nvcc;
  tools.handlers[kSmemProbeTool] = [probe](const Json& args) { return RunProbe(args, probe); };

  // The search budget is the handler's (it spans the iteration's requests); the loop's bounds
  // only stop a runaway conversation.
  tools.loop.default_budget = options_.read_budget;
  tools.loop.budgets[kSearchTool] = 2 * search_budget + 2;
  tools.loop.budgets[kSmemProbeTool] = options_.probe_budget;
  tools.loop.max_turns = options_.max_turns;
  tools.loop.answer_on_last_turn = true;
  tools.instruction = Instruction(*this);
  return tools;
}

std::string CutlassKit::Validate(const std::string& code) const {
  if (!IncludesCutlass(code)) return "";
  cutlass::ValidatorOptions validator;
  validator.build_adds_cutlass_flags = options_.build_adds_flags;
  const std::vector<cutlass::ConstraintViolation> violations =
      cutlass::ValidateCandidate(code, constraints_, validator);
  if (violations.empty()) return "";
  return "CUTLASS constraints broken (found before the build; no build was spent):\n" +
         cutlass::RenderViolations(violations);
}

std::vector<MemoryEntry> ToolCallMemory(const std::vector<ProgrammerToolCall>& calls,
                                        int iteration) {
  std::vector<MemoryEntry> entries;
  // Files read, in the order first read, with every range read.
  std::vector<std::string> files;
  std::map<std::string, std::vector<std::string>> ranges;
  for (const ProgrammerToolCall& call : calls) {
    if (call.is_error) continue;
    if (call.name == kReadTool) {
      const std::string file = ArgumentText(call.arguments, "file");
      if (file.empty()) continue;
      if (!ranges.count(file)) files.push_back(file);
      std::vector<std::string>& seen = ranges[file];
      const std::string range = ReadRange(call.result);
      if (!range.empty() && std::find(seen.begin(), seen.end(), range) == seen.end()) {
        seen.push_back(range);
      }
    } else if (call.name == kSearchTool) {
      // The summary line, and the first matching line (file:line:text).
      std::vector<std::string> lines = SplitLines(call.result);
      if (lines.empty() || lines[0].starts_with("0 matching")) continue;
      std::string finding = lines[0];
      static const std::regex kHit(R"(^[^:\s]+:\d+:)");
      for (size_t i = 1; i < lines.size(); ++i) {
        if (std::regex_search(lines[i], kHit)) {
          finding += " First: " + ShortenText(std::string(Trim(lines[i])), 200);
          break;
        }
      }
      entries.push_back({MemorySection::kSearchFindings, finding, iteration});
    } else if (call.name == kSmemProbeTool) {
      const std::vector<std::string> lines = SplitLines(call.result);
      const std::string first_line = lines.empty() ? call.result : lines.front();
      entries.push_back({MemorySection::kSearchFindings,
                         "check_smem_layout of " + ArgumentText(call.arguments, "atom") + " over " +
                             ArgumentText(call.arguments, "tile_shape") + ": " + first_line,
                         iteration});
    }
  }
  for (const std::string& file : files) {
    const std::vector<std::string>& read = ranges[file];
    entries.push_back({MemorySection::kKeyFiles,
                       file + (read.empty() ? "" : " (lines " + Join(read, ", ") + " were read)"),
                       iteration});
  }
  return entries;
}

}  // namespace kernelpro::agents
