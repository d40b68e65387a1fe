// `kernelpro cutlass search|read|ls|version`: the programmer's CUTLASS code-search tools
// (cutlass/code_search.h) as commands for people and scripts, over the tree --cutlass-dir,
// KERNELPRO_CUTLASS_DIR or scripts/setup's copy names (cutlass/locate.h).
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/option_groups.h"
#include "core/json_io.h"
#include "cutlass/code_search.h"
#include "cutlass/locate.h"

namespace kernelpro::cli {
namespace {

struct CutlassArgs {
  // --cutlass-dir on `cutlass` itself and on each subcommand; the subcommand's wins.
  std::string dir, search_dir, read_dir, ls_dir, version_dir;
  std::string regex, path;
  int max_results = 100;
  int context = 2;
  bool json = false, version_json = false;
  std::string file, lines;
  std::string ls_target;
};

int CutlassFail(const std::string& command, const std::string& message) {
  std::cerr << "kernelpro cutlass " << command << ": " << message << "\n";
  return kUsageExit;
}

std::optional<cutlass::CutlassTree> Locate(const std::string& command, const std::string& own_dir,
                                           const std::string& parent_dir) {
  Result<cutlass::CutlassTree> tree =
      cutlass::LocateCutlass(own_dir.empty() ? parent_dir : own_dir);
  if (!tree.ok()) {
    CutlassFail(command, tree.status().message());
    return std::nullopt;
  }
  return *tree;
}

std::optional<cutlass::CutlassIndex> LoadIndex(const std::string& command,
                                               const cutlass::CutlassTree& tree) {
  Result<cutlass::CutlassIndex> index = cutlass::CutlassIndex::Load(tree.include_dir);
  if (!index.ok()) {
    CutlassFail(command, index.status().message());
    return std::nullopt;
  }
  return std::move(*index);
}

int Search(const CutlassArgs& args) {
  auto tree = Locate("search", args.search_dir, args.dir);
  if (!tree) return kUsageExit;
  auto index = LoadIndex("search", *tree);
  if (!index) return kUsageExit;
  cutlass::SearchOptions options;
  options.path = args.path;
  options.max_results = args.max_results;
  options.context_lines = args.context;
  options.max_bytes = std::size_t{1} << 30;  // a person asked: --max-results is the bound
  Result<cutlass::SearchResult> result = cutlass::SearchCutlass(*index, args.regex, options);
  if (!result.ok()) return CutlassFail("search", result.status().message());
  if (args.json) {
    Json matches = Json::array();
    for (const cutlass::SearchMatch& m : result->matches) {
      matches.push_back({{"file", m.file}, {"line", m.line}, {"text", m.text}});
    }
    std::cout << DumpJson(matches, 2) << "\n";
    if (static_cast<int>(result->matches.size()) < result->total_matches) {
      std::cerr << "kernelpro cutlass search: " << result->matches.size() << " of "
                << result->total_matches << " matching lines printed (raise --max-results)\n";
    }
  } else {
    std::cout << cutlass::RenderSearch(*index, *result, options);
  }
  // As grep: 1 when nothing matched.
  return result->total_matches > 0 ? 0 : 1;
}

// "A:B", "A:" (to the end), "A" (one line); 0 for an open end.
std::optional<std::pair<int, int>> ParseLines(const std::string& text) {
  if (text.empty()) return std::make_pair(1, 0);
  const std::size_t colon = text.find(':');
  auto number = [](const std::string& s) -> std::optional<int> {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) {
      return std::nullopt;
    }
    return std::stoi(s);
  };
  if (colon == std::string::npos) {
    auto line = number(text);
    if (!line) return std::nullopt;
    return std::make_pair(*line, *line);
  }
  auto first = colon == 0 ? std::optional<int>(1) : number(text.substr(0, colon));
  auto last = colon + 1 == text.size() ? std::optional<int>(0) : number(text.substr(colon + 1));
  if (!first || !last) return std::nullopt;
  return std::make_pair(*first, *last);
}

int Read(const CutlassArgs& args) {
  const auto lines = ParseLines(args.lines);
  if (!lines) {
    return CutlassFail("read",
                       "--lines '" + args.lines + "': give A:B (1-based, inclusive), e.g. 100:180");
  }
  auto tree = Locate("read", args.read_dir, args.dir);
  if (!tree) return kUsageExit;
  auto index = LoadIndex("read", *tree);
  if (!index) return kUsageExit;
  Result<cutlass::FileExcerpt> excerpt = cutlass::ReadCutlassFile(
      *index, args.file, lines->first, lines->second,
      "`kernelpro cutlass ls " + std::filesystem::path(args.file).parent_path().string() + "`");
  if (!excerpt.ok()) return CutlassFail("read", excerpt.status().message());
  std::cout << cutlass::RenderExcerpt(*excerpt);
  return 0;
}

int List(const CutlassArgs& args) {
  auto tree = Locate("ls", args.ls_dir, args.dir);
  if (!tree) return kUsageExit;
  auto index = LoadIndex("ls", *tree);
  if (!index) return kUsageExit;
  Result<cutlass::DirectoryListing> listing = cutlass::ListCutlassDirectory(*index, args.ls_target);
  if (!listing.ok()) return CutlassFail("ls", listing.status().message());
  std::cout << cutlass::RenderListing(*listing);
  return 0;
}

int Version(const CutlassArgs& args) {
  auto tree = Locate("version", args.version_dir, args.dir);
  if (!tree) return kUsageExit;
  if (args.version_json) {
    std::cout << DumpJson({{"version", tree->version},
                           {"root", tree->root},
                           {"include_dir", tree->include_dir},
                           {"origin", tree->origin}},
                          2)
              << "\n";
    return 0;
  }
  std::cout << "CUTLASS " << (tree->version.empty() ? "(version unknown)" : tree->version) << " at "
            << tree->root << " (from " << tree->origin << ")\n"
            << "include folder: " << tree->include_dir << "\n";
  return 0;
}

}  // namespace

CommandRunner RegisterCutlassCommand(CLI::App& app) {
  auto args = std::make_shared<CutlassArgs>();
  CLI::App* cutlass = app.add_subcommand(
      "cutlass", "Search and read the CUTLASS/CuTe headers (the programmer's code-search tools)");
  cutlass->require_subcommand(1);
  cutlass->footer(
      "The tree: --cutlass-dir, else KERNELPRO_CUTLASS_DIR, else the copy scripts/setup installs "
      "(.tools/cutlass). A CUTLASS checkout's root or the nvidia-cutlass wheel's install folder.");
  AddCutlassOptions(*cutlass, args->dir);

  CLI::App* search = cutlass->add_subcommand(
      "search", "Lines matching a regular expression (RE2), as grep -n prints them");
  search->add_option("regex", args->regex, "RE2 regular expression; ^ and $ match at line ends")
      ->required();
  search->add_option("--path", args->path,
                     "Only files under this prefix (cute/atom/) or matching this glob, in which "
                     "* also crosses / (cutlass/gemm/*sm90*)");
  search->add_option("--max-results", args->max_results, "Matching lines printed (default 100)")
      ->check(WholeRange(1, 1000000));
  search->add_option("--context,-C", args->context, "Lines before and after each match (default 2)")
      ->check(WholeRange(0, 100));
  AddOption(*search, kJsonOption, args->json);
  search->footer(
      "--json prints a list of {file, line, text}, file relative to the include folder. Exit "
      "status 1 when nothing matched, as grep.");
  AddCutlassOptions(*search, args->search_dir);

  CLI::App* read = cutlass->add_subcommand("read", "Lines of one header, numbered");
  read->add_option("file", args->file, "Path relative to the include folder (cute/tensor.hpp)")
      ->required();
  read->add_option("--lines", args->lines,
                   "A:B, 1-based and inclusive; A: reads to the end (at most " +
                       std::to_string(cutlass::kMaxReadLines) + " lines)");
  AddCutlassOptions(*read, args->read_dir);

  CLI::App* ls = cutlass->add_subcommand("ls", "A directory's subdirectories and files");
  ls->add_option("dir", args->ls_target, "Directory relative to the include folder (default: top)");
  AddCutlassOptions(*ls, args->ls_dir);

  CLI::App* version =
      cutlass->add_subcommand("version", "The tree's CUTLASS version and where it is");
  AddOption(*version, kJsonOption, args->version_json);
  version->footer("--json prints {version, root, include_dir, origin}");
  AddCutlassOptions(*version, args->version_dir);

  return [args, search, read, ls] {
    if (search->parsed()) return Search(*args);
    if (read->parsed()) return Read(*args);
    if (ls->parsed()) return List(*args);
    return Version(*args);
  };
}

}  // namespace kernelpro::cli
