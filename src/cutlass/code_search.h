// Code search over a CUTLASS tree, for the programmer agent (as tools it calls) and for people
// (`kernelpro cutlass search|read|ls`): the paper's "LLM-autonomous code search" (§4.3).
//
// A CutlassIndex holds every text file under the tree's include/ folder in memory (path, bytes,
// where each line starts), loaded once; a search is then one RE2 pass over each file, a whole-tree
// query taking tens of milliseconds (bench/cutlass_search_bench.cc). Every output is bounded
// (results, lines, bytes) and says when it was cut, so that one careless query cannot flood a
// model's context. Paths are relative to the include folder ("cute/tensor.hpp"); a path that
// leaves the tree ("..", absolute, a symlink pointing outside) is refused, and since reads are
// served from the index, nothing outside the tree is ever read through it.
//
// An index is immutable once loaded: share it between threads freely.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/json_io.h"
#include "core/status.h"
#include "llm/types.h"

namespace kernelpro::cutlass {

struct IndexedFile {
  std::string path;                      // relative to the include folder, '/'-separated
  std::string text;                      // the whole file
  std::vector<std::size_t> line_starts;  // offset of each line's first byte; [0] = 0

  int line_count() const { return static_cast<int>(line_starts.size()); }
  // Line `line` (1-based) without its newline.
  std::string_view Line(int line) const;
};

class CutlassIndex {
 public:
  // Every regular text file below `include_dir` (files with a NUL byte are skipped as binary, as
  // are symlinks resolving outside it). NotFound when `include_dir` is not a directory.
  static Result<CutlassIndex> Load(const std::string& include_dir);

  const std::string& include_dir() const { return include_dir_; }
  // Sorted by path.
  const std::vector<IndexedFile>& files() const { return files_; }
  std::size_t total_bytes() const { return total_bytes_; }
  // The file at `path` (relative), or null.
  const IndexedFile* Find(const std::string& path) const;

 private:
  std::string include_dir_;
  std::vector<IndexedFile> files_;
  std::size_t total_bytes_ = 0;
};

// ---- search

struct SearchOptions {
  // Which files: "" = all; text with *, ? or [ is a glob over the relative path in which * also
  // crosses '/' ("cute/atom/*sm90*", "*.inl"); anything else is a path prefix ("cute/atom/",
  // "cutlass/gemm/collective").
  std::string path;
  int max_results = 30;           // matching lines shown; the rest are only counted
  int context_lines = 2;          // lines shown before and after each match
  std::size_t max_bytes = 12000;  // the rendered text stops near this size
};

struct SearchMatch {
  std::string file;  // relative to the include folder
  int line = 0;      // 1-based
  std::string text;  // the matching line (cut at 300 characters)
};

struct SearchResult {
  std::string regex;
  std::string path;                  // the filter given
  std::vector<SearchMatch> matches;  // the first max_results matching lines, in path order
  int total_matches = 0;             // matching lines in the whole selection
  int matching_files = 0;
  int files_searched = 0;
  std::vector<std::pair<std::string, int>> file_counts;  // matching lines per file, path order
};

// Lines matching `regex` (RE2 syntax; ^ and $ match at line ends; a match spanning lines counts
// on its first line). InvalidArgument for a bad regex, a bad option, or a path filter that
// leaves the tree.
Result<SearchResult> SearchCutlass(const CutlassIndex& index, const std::string& regex,
                                   const SearchOptions& options = {});

// As grep -n shows it: "file:line:text" for a match, "file-line-text" for context, "--" between
// groups; a summary line first, and a last line saying what was left out when anything was.
std::string RenderSearch(const CutlassIndex& index, const SearchResult& result,
                         const SearchOptions& options = {});

// ---- read and list

inline constexpr int kMaxReadLines = 400;
inline constexpr std::size_t kMaxReadBytes = 40000;

struct FileExcerpt {
  std::string file;
  int first_line = 0, last_line = 0;  // what is shown, 1-based, inclusive
  int line_count = 0;                 // of the whole file
  std::vector<std::string> lines;
  bool truncated = false;  // fewer lines than asked for (the line or byte bound)
};

// Lines `first`..`last` of `file` (1-based, inclusive; `last` 0 = to the end), at most
// kMaxReadLines lines and kMaxReadBytes bytes. NotFound for a file not in the tree;
// InvalidArgument for a path leaving it or a bad range.
// `how_to_list` names, in a missing file's message, what shows a folder's files to the reader (the
// model's tool by default; `kernelpro cutlass ls` for a person).
Result<FileExcerpt> ReadCutlassFile(const CutlassIndex& index, const std::string& file, int first,
                                    int last,
                                    const std::string& how_to_list = "list_cutlass_directory");
// "file lines A-B of N:" then each line numbered; a last line when cut short.
std::string RenderExcerpt(const FileExcerpt& excerpt);

struct DirectoryEntry {
  std::string name;  // "atom/" for a directory
  bool is_directory = false;
  int files = 0;          // a directory: files below it, at any depth
  std::size_t bytes = 0;  // a file: its size; a directory: the files' total
  int lines = 0;          // a file's lines
};

inline constexpr int kMaxListEntries = 300;

struct DirectoryListing {
  std::string dir;                      // relative; "" = the include folder
  std::vector<DirectoryEntry> entries;  // directories first, then files, each sorted by name
  int total_entries = 0;
};

// The direct children of `dir`. NotFound when the tree has no such directory.
Result<DirectoryListing> ListCutlassDirectory(const CutlassIndex& index, const std::string& dir);
std::string RenderListing(const DirectoryListing& listing);

// ---- the programmer's tools

// search_cutlass, read_cutlass_file and list_cutlass_directory with their JSON schemas.
std::vector<llm::ToolDefinition> CutlassToolDefinitions();

struct CutlassToolOutcome {
  // What the model reads; an error (bad arguments, unknown file, bad regex) is meant to be sent
  // to it as an error result, never to end the conversation.
  Result<std::string> text;
  // Whether the call spends the per-iteration search budget: searches do, reads and listings
  // do not (the model reads what its searches found).
  bool counts_as_search = false;
};

// Runs one of CutlassToolDefinitions() on `index`. Never throws.
CutlassToolOutcome RunCutlassTool(const CutlassIndex& index, const std::string& name,
                                  const Json& arguments);

}  // namespace kernelpro::cutlass
