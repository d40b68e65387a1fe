// The code-search tools as the programmer and a person meet them: over the small fixture tree
// (tests/fixtures/cutlass_tree, written for these tests) and, where it is installed, the real
// CUTLASS tree from the nvidia-cutlass wheel. The tools' text is checked against a golden file:
//   KERNELPRO_UPDATE_GOLDEN=1 build/kernelpro_tests --gtest_filter='CutlassToolsGolden*'
#include "cutlass/code_search.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cutlass/locate.h"
#include "llm/scripted_backend_testing.h"
#include "llm/tool_loop.h"

namespace kernelpro::cutlass {
namespace cutlass_code_search_test {

namespace fs = std::filesystem;

const std::string kRoot = KERNELPRO_SOURCE_DIR;
const std::string kFixtureInclude = kRoot + "/tests/fixtures/cutlass_tree/include";

const CutlassIndex& Fixture() {
  static const CutlassIndex index = [] {
    Result<CutlassIndex> loaded = CutlassIndex::Load(kFixtureInclude);
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    return std::move(*loaded);
  }();
  return index;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(CutlassIndexTest, HoldsEveryHeaderSortedByItsPathBelowInclude) {
  std::vector<std::string> paths;
  for (const IndexedFile& f : Fixture().files()) paths.push_back(f.path);
  EXPECT_EQ(paths,
            (std::vector<std::string>{
                "cute/arch/mma_sm90.hpp", "cute/atom/copy_atom.hpp", "cute/atom/mma_atom.hpp",
                "cute/layout.hpp", "cute/tensor.hpp", "cutlass/cutlass.h", "cutlass/version.h"}));
  const IndexedFile* version = Fixture().Find("cutlass/version.h");
  ASSERT_NE(version, nullptr);
  EXPECT_EQ(version->line_count(), 6);
  EXPECT_EQ(version->Line(4), "#define CUTLASS_MAJOR 9");
  EXPECT_EQ(Fixture().Find("cutlass/missing.h"), nullptr);
}

TEST(CutlassIndexTest, SkipsBinaryFilesAndLinksLeavingTheTree) {
  const fs::path dir =
      fs::temp_directory_path() / ("kp_cutlass_index_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "include/cute");
  fs::create_directories(dir / "outside");
  std::ofstream(dir / "include/cute/a.hpp") << "int a;\n";
  std::ofstream(dir / "include/cute/blob.bin") << std::string("x\0y", 3);
  std::ofstream(dir / "outside/secret.h") << "password\n";
  fs::create_symlink(dir / "outside/secret.h", dir / "include/cute/leak.h");
  fs::create_symlink(dir / "include/cute/a.hpp", dir / "include/cute/alias.hpp");
  Result<CutlassIndex> index = CutlassIndex::Load((dir / "include").string());
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  std::vector<std::string> paths;
  for (const IndexedFile& f : index->files()) paths.push_back(f.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"cute/a.hpp", "cute/alias.hpp"}));
  Result<SearchResult> found = SearchCutlass(*index, "password");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->total_matches, 0);
  fs::remove_all(dir);
  EXPECT_EQ(CutlassIndex::Load((dir / "include").string()).status().code(),
            Status::Code::kNotFound);
}

TEST(CutlassSearchTest, FindsEachMatchingLineOnceWithItsLineNumber) {
  Result<SearchResult> r = SearchCutlass(Fixture(), "SM90_64x\\d+x16_F32BF16BF16_SS");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->matches.size(), 2u);
  EXPECT_EQ(r->matches[0].file, "cute/atom/mma_atom.hpp");
  EXPECT_EQ(r->matches[0].line, 6);
  EXPECT_EQ(r->matches[0].text, "struct SM90_64x128x16_F32BF16BF16_SS {");
  EXPECT_EQ(r->matches[1].line, 12);
  EXPECT_EQ(r->matching_files, 1);
  EXPECT_EQ(r->files_searched, 7);
  // Two matches on one line count once; ^ and $ are line anchors.
  Result<SearchResult> twice = SearchCutlass(Fixture(), "Engine");
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ(twice->total_matches, 4);  // lines 8, 9, 10 and 14 of cute/tensor.hpp
  Result<SearchResult> anchored = SearchCutlass(Fixture(), "^#pragma once$");
  ASSERT_TRUE(anchored.ok());
  EXPECT_EQ(anchored->total_matches, 7);
}

TEST(CutlassSearchTest, APathPrefixOrGlobNarrowsTheFiles) {
  SearchOptions options;
  options.path = "cute/atom/";
  Result<SearchResult> prefix = SearchCutlass(Fixture(), "struct", options);
  ASSERT_TRUE(prefix.ok());
  EXPECT_EQ(prefix->files_searched, 2);
  options.path = "cute/atom";  // a directory's name selects what is below it only
  EXPECT_EQ(SearchCutlass(Fixture(), "struct", options)->files_searched, 2);
  options.path = "*sm90*";
  Result<SearchResult> glob = SearchCutlass(Fixture(), "SM90", options);
  ASSERT_TRUE(glob.ok());
  EXPECT_EQ(glob->files_searched, 1);
  EXPECT_EQ(glob->matches.at(0).file, "cute/arch/mma_sm90.hpp");
  options.path = "include/cutlass/";  // an -I style prefix is understood
  EXPECT_EQ(SearchCutlass(Fixture(), "CUTLASS_MAJOR", options)->total_matches, 1);
  options.path = "../outside";
  EXPECT_EQ(SearchCutlass(Fixture(), "x", options).status().code(), Status::Code::kInvalidArgument);
}

TEST(CutlassSearchTest, BadRegexesAreExplainedNotFatal) {
  Result<SearchResult> bad = SearchCutlass(Fixture(), "make_tensor(");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Contains(bad.status().message(), "bad regex 'make_tensor('"))
      << bad.status().message();
  Result<SearchResult> lookahead = SearchCutlass(Fixture(), "foo(?=bar)");
  ASSERT_FALSE(lookahead.ok());
  EXPECT_TRUE(Contains(lookahead.status().message(), "no backreferences or lookaround"));
  EXPECT_FALSE(SearchCutlass(Fixture(), "").ok());
}

TEST(CutlassSearchTest, OutputIsBoundedAndSaysWhatWasLeftOut) {
  SearchOptions options;
  options.max_results = 3;
  options.context_lines = 0;
  Result<SearchResult> r = SearchCutlass(Fixture(), "namespace", options);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->matches.size(), 3u);
  EXPECT_GT(r->total_matches, 3);
  const std::string text = RenderSearch(Fixture(), *r, options);
  EXPECT_TRUE(Contains(text, "more matching lines not shown")) << text;
  EXPECT_TRUE(Contains(text, "cutlass/cutlass.h (2)")) << text;
  // The byte bound cuts whole groups, keeping at least one.
  options.max_results = 100;
  options.max_bytes = 10;
  Result<SearchResult> all = SearchCutlass(Fixture(), "namespace", options);
  const std::string cut = RenderSearch(Fixture(), *all, options);
  EXPECT_TRUE(Contains(cut, "(output bound reached)")) << cut;
  EXPECT_LT(cut.size(), 1200u);
}

TEST(CutlassReadTest, ReadsARangeAndRefusesPathsLeavingTheTree) {
  Result<FileExcerpt> e = ReadCutlassFile(Fixture(), "cutlass/version.h", 4, 6);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->lines,
            (std::vector<std::string>{"#define CUTLASS_MAJOR 9", "#define CUTLASS_MINOR 8",
                                      "#define CUTLASS_PATCH 7"}));
  EXPECT_FALSE(e->truncated);
  EXPECT_EQ(ReadCutlassFile(Fixture(), "./cutlass/version.h", 1, 0)->last_line, 6);
  EXPECT_EQ(ReadCutlassFile(Fixture(), "cutlass/version.h", 5, 99)->last_line, 6);
  for (const std::string& escape :
       {std::string("../cutlass_tree/include/cutlass/version.h"),
        kFixtureInclude + "/cute/tensor.hpp", std::string("cute/../../README.md")}) {
    Result<FileExcerpt> refused = ReadCutlassFile(Fixture(), escape, 1, 2);
    EXPECT_EQ(refused.status().code(), Status::Code::kInvalidArgument) << escape;
  }
  EXPECT_EQ(ReadCutlassFile(Fixture(), "cute/nothing.hpp", 1, 2).status().code(),
            Status::Code::kNotFound);
  EXPECT_FALSE(ReadCutlassFile(Fixture(), "cutlass/version.h", 7, 8).ok());  // past the end
  EXPECT_FALSE(ReadCutlassFile(Fixture(), "cutlass/version.h", 5, 4).ok());
  EXPECT_FALSE(ReadCutlassFile(Fixture(), "cutlass/version.h", 0, 4).ok());
}

TEST(CutlassListTest, ListsDirectoriesThenFiles) {
  Result<DirectoryListing> top = ListCutlassDirectory(Fixture(), "");
  ASSERT_TRUE(top.ok());
  ASSERT_EQ(top->entries.size(), 2u);
  EXPECT_EQ(top->entries[0].name, "cute/");
  EXPECT_EQ(top->entries[0].files, 5);
  Result<DirectoryListing> cute = ListCutlassDirectory(Fixture(), "cute");
  ASSERT_TRUE(cute.ok());
  std::vector<std::string> names;
  for (const DirectoryEntry& e : cute->entries) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"arch/", "atom/", "layout.hpp", "tensor.hpp"}));
  EXPECT_EQ(ListCutlassDirectory(Fixture(), "cute/nope").status().code(), Status::Code::kNotFound);
  EXPECT_FALSE(ListCutlassDirectory(Fixture(), "cute/tensor.hpp").ok());
  EXPECT_FALSE(ListCutlassDirectory(Fixture(), "/etc").ok());
}

TEST(CutlassToolsTest, DefinitionsHaveSchemasNamingTheirArguments) {
  std::vector<llm::ToolDefinition> tools = CutlassToolDefinitions();
  ASSERT_EQ(tools.size(), 3u);
  EXPECT_EQ(tools[0].name, "search_cutlass");
  EXPECT_EQ(tools[0].input_schema["required"], Json::array({"regex"}));
  EXPECT_TRUE(tools[0].input_schema["properties"].contains("path"));
  EXPECT_EQ(tools[1].name, "read_cutlass_file");
  EXPECT_EQ(tools[1].input_schema["required"], Json::array({"file"}));
  EXPECT_EQ(tools[2].name, "list_cutlass_directory");
  for (const llm::ToolDefinition& t : tools) {
    EXPECT_FALSE(t.description.empty());
    EXPECT_EQ(t.input_schema["type"], "object");
  }
}

TEST(CutlassToolsTest, OnlySearchesCountAgainstTheSearchBudget) {
  EXPECT_TRUE(RunCutlassTool(Fixture(), "search_cutlass", {{"regex", "Tensor"}}).counts_as_search);
  EXPECT_FALSE(RunCutlassTool(Fixture(), "read_cutlass_file", {{"file", "cute/tensor.hpp"}})
                   .counts_as_search);
  EXPECT_FALSE(
      RunCutlassTool(Fixture(), "list_cutlass_directory", Json::object()).counts_as_search);
  // A search refused for its arguments searched nothing.
  CutlassToolOutcome bad = RunCutlassTool(Fixture(), "search_cutlass", {{"regex", "("}});
  EXPECT_FALSE(bad.text.ok());
  EXPECT_FALSE(bad.counts_as_search);
}

TEST(CutlassToolsTest, BadArgumentsAreClearErrorsForTheModel) {
  const std::vector<std::tuple<std::string, Json, std::string>> table = {
      {"search_cutlass", Json::object(), "search_cutlass: 'regex' is required"},
      {"search_cutlass",
       {{"pattern", "x"}},
       "search_cutlass: unknown argument 'pattern' (arguments: regex, path, max_results, "
       "context_lines)"},
      {"search_cutlass", {{"regex", 3}}, "search_cutlass: 'regex' must be a string"},
      {"search_cutlass",
       {{"regex", "x"}, {"max_results", 1000}},
       "search_cutlass: 'max_results' must be a whole number from 1 to 100"},
      {"search_cutlass",
       {{"regex", "x"}, {"max_results", "5"}},
       "search_cutlass: 'max_results' must be a whole number"},
      {"search_cutlass", Json::array({"x"}), "search_cutlass: the arguments must be a JSON object"},
      {"read_cutlass_file",
       {{"file", "/etc/passwd"}},
       "read_cutlass_file: file '/etc/passwd' is absolute: paths are relative to the CUTLASS "
       "include folder, e.g. cute/tensor.hpp"},
      {"read_cutlass_file",
       {{"file", "cute/tensor.hpp"}, {"start_line", 1.5}},
       "read_cutlass_file: 'start_line' must be a whole number from 1 to 10000000"},
      {"list_cutlass_directory",
       {{"dir", "../.."}},
       "list_cutlass_directory: dir '../..' leaves the CUTLASS include folder ('..' is not "
       "allowed)"},
      {"grep_cutlass", Json::object(),
       "unknown CUTLASS tool 'grep_cutlass' (tools: search_cutlass, read_cutlass_file, "
       "list_cutlass_directory)"},
  };
  for (const auto& [tool, args, message] : table) {
    CutlassToolOutcome out = RunCutlassTool(Fixture(), tool, args);
    ASSERT_FALSE(out.text.ok()) << tool << " " << args.dump();
    EXPECT_EQ(out.text.status().message(), message) << tool << " " << args.dump();
  }
}

// The tools as the programmer's tool loop runs them: results go back to the model, a bad call is
// an error result it can correct, and only searches are counted.
TEST(CutlassToolsTest, RunInTheToolLoopAsTheModelCallsThem) {
  llm::testing::ScriptedBackend backend;
  backend.Push(llm::testing::ToolUseResponse(
      {{"c1", "search_cutlass", {{"regex", "tile_to_shape"}, {"context_lines", 0}}},
       {"c2", "read_cutlass_file", {{"file", "../secret"}}},
       {"c3", "list_cutlass_directory", {{"dir", "cute/atom"}}}},
      {10, 10}));
  backend.Push(llm::testing::TextResponse("done", {10, 10}));
  int searches = 0;
  std::map<std::string, llm::ToolHandler> handlers;
  for (const llm::ToolDefinition& tool : CutlassToolDefinitions()) {
    handlers[tool.name] = [&searches, name = tool.name](const Json& args) {
      CutlassToolOutcome out = RunCutlassTool(Fixture(), name, args);
      searches += out.counts_as_search;
      return out.text;
    };
  }
  llm::Request request;
  request.messages.push_back(llm::Message::User("Write a CuTe GEMM."));
  request.tools = CutlassToolDefinitions();
  llm::ToolConversation c = llm::RunToolConversation(backend, request, handlers);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(searches, 1);
  const std::vector<llm::Request> requests = backend.Requests();
  ASSERT_EQ(requests.size(), 2u);
  const std::vector<llm::Message>& m = requests[1].messages;
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[2].tool_result->content,
            "3 matching lines in 1 file for /tile_to_shape/ (7 files searched):\n"
            "cute/layout.hpp:17:// The shared-memory layout the paper's tile_to_shape example "
            "builds.\n"
            "--\n"
            "cute/layout.hpp:19:auto tile_to_shape(Atom atom, Shape shape) {\n"
            "cute/layout.hpp:20:  static_assert(sizeof(Atom) > 0, \"tile_to_shape: the atom "
            "must tile the shape\");\n");
  EXPECT_FALSE(m[2].tool_result->is_error);
  EXPECT_TRUE(m[3].tool_result->is_error);
  EXPECT_TRUE(Contains(m[3].tool_result->content, "leaves the CUTLASS include folder"))
      << m[3].tool_result->content;
  EXPECT_TRUE(Contains(m[4].tool_result->content, "cute/atom/ (2 entries):"));
}

// What the model reads for each tool, reviewed once and kept.
TEST(CutlassToolsGoldenTest, ToolTextsReadAsReviewed) {
  const std::vector<std::pair<std::string, Json>> calls = {
      {"search_cutlass", {{"regex", "SM90_64x\\d+x16_F32BF16BF16_SS"}}},
      {"search_cutlass", {{"regex", "static_assert"}, {"context_lines", 1}}},
      {"search_cutlass", {{"regex", "namespace"}, {"max_results", 2}, {"context_lines", 0}}},
      {"search_cutlass", {{"regex", "no_such_name"}, {"path", "cute/"}}},
      {"read_cutlass_file", {{"file", "cute/layout.hpp"}, {"start_line", 17}, {"end_line", 22}}},
      {"list_cutlass_directory", Json::object()},
      {"list_cutlass_directory", {{"dir", "cute"}}},
      {"read_cutlass_file", {{"file", "cute/nothing.hpp"}}},
  };
  std::string text;
  for (const auto& [tool, args] : calls) {
    CutlassToolOutcome out = RunCutlassTool(Fixture(), tool, args);
    text += "=== " + tool + " " + args.dump() + "\n";
    text += out.text.ok() ? *out.text : "ERROR " + out.text.status().message() + "\n";
  }
  const std::string golden = kRoot + "/tests/golden/cutlass/tools.txt";
  if (std::getenv("KERNELPRO_UPDATE_GOLDEN") != nullptr) {
    fs::create_directories(kRoot + "/tests/golden/cutlass");
    std::ofstream(golden) << text;
    return;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " missing: run with KERNELPRO_UPDATE_GOLDEN=1";
  EXPECT_EQ(text, ReadFile(golden)) << "the tools' text changed; review, then regenerate";
}

// The real tree, where the wheel is installed (scripts/setup, or KERNELPRO_CUTLASS_DIR).
TEST(CutlassRealTreeTest, FindsHopperMmaAtomsInTheInstalledTree) {
  Result<CutlassTree> tree = LocateCutlass("");
  if (!tree.ok())
    GTEST_SKIP() << "no CUTLASS installed (scripts/setup installs it): " << tree.status().message();
  Result<CutlassIndex> index = CutlassIndex::Load(tree->include_dir);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_GT(index->files().size(), 500u);
  SearchOptions options;
  options.path = "cute/arch/";
  Result<SearchResult> r = SearchCutlass(*index, "struct MMA_64x128x16_F32BF16BF16_SS\\b", options);
  ASSERT_TRUE(r.ok());
  ASSERT_GE(r->total_matches, 1);
  EXPECT_EQ(r->matches[0].file, "cute/arch/mma_sm90_gmma.hpp");
  CutlassToolOutcome read = RunCutlassTool(*index, "read_cutlass_file",
                                           {{"file", r->matches[0].file},
                                            {"start_line", r->matches[0].line},
                                            {"end_line", r->matches[0].line}});
  ASSERT_TRUE(read.text.ok());
  EXPECT_TRUE(Contains(*read.text, "struct MMA_64x128x16_F32BF16BF16_SS")) << *read.text;
  // A search of every line of the tree stays within its bound.
  CutlassToolOutcome everything = RunCutlassTool(*index, "search_cutlass", {{"regex", "."}});
  ASSERT_TRUE(everything.text.ok());
  EXPECT_LT(everything.text->size(), 16000u);
  EXPECT_TRUE(Contains(*everything.text, "more matching lines not shown"));
}

}  // namespace cutlass_code_search_test
}  // namespace kernelpro::cutlass
