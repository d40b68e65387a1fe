#include "cutlass/code_search.h"

#include <fnmatch.h>
#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace kernelpro::cutlass {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxMatchLineChars = 300;
constexpr std::size_t kMaxReadLineChars = 2000;

std::string Cut(std::string_view line, std::size_t max_chars) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.size() <= max_chars) return std::string(line);
  return std::string(line.substr(0, max_chars)) + " [... line cut]";
}

// `path` as a path relative to the include folder, without "." parts or an "include/" prefix
// (models often copy one from an -I flag). InvalidArgument when it would leave the tree.
Result<std::string> NormalizeRelative(const std::string& what, std::string path) {
  while (!path.empty() && std::isspace(static_cast<unsigned char>(path.back()))) path.pop_back();
  while (!path.empty() && std::isspace(static_cast<unsigned char>(path.front()))) path.erase(0, 1);
  if (!path.empty() && path.front() == '/') {
    return Status::InvalidArgument(what + " '" + path +
                                   "' is absolute: paths are relative to the CUTLASS include "
                                   "folder, e.g. cute/tensor.hpp");
  }
  std::vector<std::string> parts;
  std::stringstream stream(path);
  for (std::string part; std::getline(stream, part, '/');) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      return Status::InvalidArgument(what + " '" + path +
                                     "' leaves the CUTLASS include folder ('..' is not allowed)");
    }
    parts.push_back(part);
  }
  if (!parts.empty() && parts.front() == "include") parts.erase(parts.begin());
  std::string normal;
  for (const std::string& part : parts) normal += (normal.empty() ? "" : "/") + part;
  return normal;
}

bool IsGlob(const std::string& filter) { return filter.find_first_of("*?[") != std::string::npos; }

bool Selected(const std::string& path, const std::string& filter, bool glob) {
  if (filter.empty()) return true;
  if (glob) return ::fnmatch(filter.c_str(), path.c_str(), 0) == 0;
  return path.compare(0, filter.size(), filter) == 0;
}

std::string FormatBytes(std::size_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  const double kb = bytes / 1024.0;
  if (kb < 1024) return std::to_string(static_cast<long>(std::lround(kb))) + " KB";
  std::ostringstream out;
  out.precision(1);
  out << std::fixed << kb / 1024.0 << " MB";
  return out.str();
}

}  // namespace

std::string_view IndexedFile::Line(int line) const {
  if (line < 1 || line > line_count()) return {};
  const std::size_t start = line_starts[line - 1];
  std::size_t end = line < line_count() ? line_starts[line] - 1 : text.size();
  if (end > start && text[end - 1] == '\n') --end;  // the last line's own newline
  return std::string_view(text).substr(start, end - start);
}

// ---- the index

Result<CutlassIndex> CutlassIndex::Load(const std::string& include_dir) {
  std::error_code ec;
  if (!fs::is_directory(include_dir, ec)) {
    return Status::NotFound(include_dir + ": no such directory");
  }
  const fs::path root = fs::canonical(include_dir, ec);
  if (ec) return Status::IoError(include_dir + ": " + ec.message());
  CutlassIndex index;
  index.include_dir_ = include_dir;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  if (ec) return Status::IoError(include_dir + ": " + ec.message());
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return Status::IoError(include_dir + ": " + ec.message());
    const fs::directory_entry& entry = *it;
    if (entry.is_symlink(ec)) {
      // A link is followed only when it stays inside the tree (a directory link never is: the
      // files below it are reached through their own path, if at all).
      const fs::path target = fs::canonical(entry.path(), ec);
      if (ec || fs::is_directory(target, ec)) continue;
      const std::string inside = root.string() + "/";
      if (target.string().compare(0, inside.size(), inside) != 0) continue;
    }
    if (!entry.is_regular_file(ec)) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    if (!in) continue;
    IndexedFile file;
    file.text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (file.text.find('\0') != std::string::npos) continue;  // binary
    file.path = entry.path().lexically_relative(root).generic_string();
    if (!file.text.empty()) file.line_starts.push_back(0);
    for (std::size_t i = 0; i + 1 < file.text.size(); ++i) {
      if (file.text[i] == '\n') file.line_starts.push_back(i + 1);
    }
    index.total_bytes_ += file.text.size();
    index.files_.push_back(std::move(file));
  }
  std::sort(index.files_.begin(), index.files_.end(),
            [](const IndexedFile& a, const IndexedFile& b) { return a.path < b.path; });
  return index;
}

const IndexedFile* CutlassIndex::Find(const std::string& path) const {
  auto it = std::lower_bound(files_.begin(), files_.end(), path,
                             [](const IndexedFile& f, const std::string& p) { return f.path < p; });
  return it != files_.end() && it->path == path ? &*it : nullptr;
}

// ---- search

Result<SearchResult> SearchCutlass(const CutlassIndex& index, const std::string& regex,
                                   const SearchOptions& options) {
  if (regex.empty()) return Status::InvalidArgument("give a regex to search for");
  if (options.max_results < 1 || options.context_lines < 0) {
    return Status::InvalidArgument("max_results must be at least 1 and context_lines at least 0");
  }
  Result<std::string> filter = NormalizeRelative("path", options.path);
  if (!filter.ok()) return filter.status();
  // A prefix that names a directory matches only below it ("cute/atom" not "cute/atomic.hpp").
  std::string prefix = *filter;
  const bool glob = IsGlob(prefix);
  if (!glob && !prefix.empty() && index.Find(prefix) == nullptr) {
    const std::string below = prefix + "/";
    for (const IndexedFile& file : index.files()) {
      if (file.path.compare(0, below.size(), below) == 0) {
        prefix = below;
        break;
      }
    }
  }
  RE2::Options re_options;
  re_options.set_log_errors(false);
  const RE2 re("(?m)" + regex, re_options);
  if (!re.ok()) {
    // RE2 quotes the pattern it was given: the user's, without the line-mode flag added here.
    std::string error = re.error();
    if (std::size_t flag = error.find("(?m)"); flag != std::string::npos) error.erase(flag, 4);
    return Status::InvalidArgument("bad regex '" + regex + "': " + error +
                                   " (RE2 syntax: no backreferences or lookaround)");
  }
  SearchResult result;
  result.regex = regex;
  result.path = options.path;
  for (const IndexedFile& file : index.files()) {
    if (!Selected(file.path, prefix, glob)) continue;
    ++result.files_searched;
    const re2::StringPiece text(file.text);
    std::size_t pos = 0;
    int in_file = 0;
    while (pos <= text.size()) {
      re2::StringPiece match;
      if (!re.Match(text, pos, text.size(), RE2::UNANCHORED, &match, 1)) break;
      const std::size_t start = match.data() - text.data();
      const int line = static_cast<int>(
          std::upper_bound(file.line_starts.begin(), file.line_starts.end(), start) -
          file.line_starts.begin());
      ++in_file;
      if (static_cast<int>(result.matches.size()) < options.max_results) {
        result.matches.push_back(
            {file.path, std::max(line, 1), Cut(file.Line(line), kMaxMatchLineChars)});
      }
      // One result per line: go on at the next line.
      if (line >= file.line_count()) break;
      pos = file.line_starts[line];
    }
    if (in_file > 0) {
      result.total_matches += in_file;
      ++result.matching_files;
      result.file_counts.emplace_back(file.path, in_file);
    }
  }
  return result;
}

std::string RenderSearch(const CutlassIndex& index, const SearchResult& result,
                         const SearchOptions& options) {
  std::ostringstream out;
  const std::string where = result.path.empty() ? "" : " under '" + result.path + "'";
  out << result.total_matches << " matching line" << (result.total_matches == 1 ? "" : "s")
      << " in " << result.matching_files << " file" << (result.matching_files == 1 ? "" : "s")
      << " for /" << result.regex << "/" << where << " (" << result.files_searched
      << " files searched)";
  if (result.total_matches == 0) {
    out << "\n";
    return out.str();
  }
  out << ":\n";
  std::size_t shown = 0;
  bool cut_by_bytes = false;
  // Matches grouped by file, each group's lines with their context, overlapping ranges merged.
  for (std::size_t i = 0; i < result.matches.size();) {
    const IndexedFile* file = index.Find(result.matches[i].file);
    std::set<int> hits;
    std::size_t j = i;
    for (; j < result.matches.size() && result.matches[j].file == result.matches[i].file; ++j) {
      hits.insert(result.matches[j].line);
    }
    std::ostringstream group;
    int last_printed = -1;
    for (int hit : hits) {
      const int from = std::max(1, hit - options.context_lines);
      const int to =
          file == nullptr ? hit : std::min(file->line_count(), hit + options.context_lines);
      if (last_printed >= 0 && from > last_printed + 1) group << "--\n";
      for (int line = std::max(from, last_printed + 1); line <= to; ++line) {
        const bool is_hit = hits.count(line) > 0;
        const std::string text = file == nullptr ? "" : Cut(file->Line(line), kMaxMatchLineChars);
        group << result.matches[i].file << (is_hit ? ':' : '-') << line << (is_hit ? ':' : '-')
              << text << "\n";
      }
      last_printed = std::max(last_printed, to);
    }
    const std::string text = group.str();
    if (shown > 0 && static_cast<std::size_t>(out.tellp()) + text.size() > options.max_bytes) {
      cut_by_bytes = true;
      break;
    }
    if (shown > 0) out << "--\n";
    out << text;
    shown += j - i;
    i = j;
  }
  if (shown < static_cast<std::size_t>(result.total_matches)) {
    out << "[" << result.total_matches - shown << " more matching lines not shown"
        << (cut_by_bytes ? " (output bound reached)" : "")
        << "; narrow the regex or the path. Matching lines per file:";
    // Where the rest are, so that the next query can aim at them.
    int listed = 0;
    for (const auto& [path, count] : result.file_counts) {
      if (listed++ == 20) {
        out << " ...";
        break;
      }
      out << (listed == 1 ? " " : ", ") << path << " (" << count << ")";
    }
    out << "]\n";
  }
  return out.str();
}

// ---- read and list

Result<FileExcerpt> ReadCutlassFile(const CutlassIndex& index, const std::string& file, int first,
                                    int last, const std::string& how_to_list) {
  Result<std::string> path = NormalizeRelative("file", file);
  if (!path.ok()) return path.status();
  if (path->empty()) return Status::InvalidArgument("give a file to read, e.g. cute/tensor.hpp");
  const IndexedFile* found = index.Find(*path);
  if (found == nullptr) {
    return Status::NotFound("no file " + *path +
                            " in the CUTLASS tree (paths are relative to its include folder; " +
                            how_to_list + " shows what is there)");
  }
  if (first < 1)
    return Status::InvalidArgument("lines start at 1 (asked for " + std::to_string(first) + ")");
  if (last != 0 && last < first) {
    return Status::InvalidArgument("the last line (" + std::to_string(last) +
                                   ") is before the first (" + std::to_string(first) + ")");
  }
  if (first > found->line_count()) {
    return Status::InvalidArgument(*path + " has " + std::to_string(found->line_count()) +
                                   " lines; line " + std::to_string(first) + " is past its end");
  }
  FileExcerpt excerpt;
  excerpt.file = *path;
  excerpt.line_count = found->line_count();
  excerpt.first_line = first;
  const int wanted_last = last == 0 ? found->line_count() : std::min(last, found->line_count());
  std::size_t bytes = 0;
  for (int line = first; line <= wanted_last; ++line) {
    std::string text = Cut(found->Line(line), kMaxReadLineChars);
    if (excerpt.lines.size() >= static_cast<std::size_t>(kMaxReadLines) ||
        (bytes + text.size() > kMaxReadBytes && !excerpt.lines.empty())) {
      excerpt.truncated = true;
      break;
    }
    bytes += text.size() + 1;
    excerpt.lines.push_back(std::move(text));
  }
  excerpt.last_line = first + static_cast<int>(excerpt.lines.size()) - 1;
  return excerpt;
}

std::string RenderExcerpt(const FileExcerpt& excerpt) {
  std::ostringstream out;
  out << excerpt.file << " lines " << excerpt.first_line << "-" << excerpt.last_line << " of "
      << excerpt.line_count << ":\n";
  const int width = static_cast<int>(std::to_string(excerpt.last_line).size());
  for (std::size_t i = 0; i < excerpt.lines.size(); ++i) {
    const std::string number = std::to_string(excerpt.first_line + static_cast<int>(i));
    out << std::string(width - number.size(), ' ') << number << "  " << excerpt.lines[i] << "\n";
  }
  if (excerpt.truncated) {
    out << "[cut at line " << excerpt.last_line << " (at most " << kMaxReadLines << " lines or "
        << kMaxReadBytes << " bytes per read); read on from line " << excerpt.last_line + 1
        << "]\n";
  }
  return out.str();
}

Result<DirectoryListing> ListCutlassDirectory(const CutlassIndex& index, const std::string& dir) {
  Result<std::string> path = NormalizeRelative("dir", dir);
  if (!path.ok()) return path.status();
  if (index.Find(*path) != nullptr) {
    return Status::InvalidArgument(*path + " is a file, not a directory (read it instead)");
  }
  const std::string prefix = path->empty() ? "" : *path + "/";
  std::map<std::string, DirectoryEntry> directories;
  std::vector<DirectoryEntry> files;
  for (const IndexedFile& file : index.files()) {
    if (file.path.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string rest = file.path.substr(prefix.size());
    const std::size_t slash = rest.find('/');
    if (slash == std::string::npos) {
      files.push_back({rest, false, 0, file.text.size(), file.line_count()});
      continue;
    }
    DirectoryEntry& entry = directories[rest.substr(0, slash + 1)];
    entry.name = rest.substr(0, slash + 1);
    entry.is_directory = true;
    ++entry.files;
    entry.bytes += file.text.size();
  }
  if (directories.empty() && files.empty()) {
    return Status::NotFound("no directory " + *path +
                            " in the CUTLASS tree (the top holds cute/ and cutlass/)");
  }
  DirectoryListing listing;
  listing.dir = *path;
  listing.total_entries = static_cast<int>(directories.size() + files.size());
  for (auto& [name, entry] : directories) listing.entries.push_back(entry);
  for (DirectoryEntry& entry : files) listing.entries.push_back(std::move(entry));
  if (listing.entries.size() > static_cast<std::size_t>(kMaxListEntries)) {
    listing.entries.resize(kMaxListEntries);
  }
  return listing;
}

std::string RenderListing(const DirectoryListing& listing) {
  std::ostringstream out;
  out << (listing.dir.empty() ? "." : listing.dir + "/") << " (" << listing.total_entries
      << " entries):\n";
  std::size_t width = 0;
  for (const DirectoryEntry& e : listing.entries) width = std::max(width, e.name.size());
  for (const DirectoryEntry& e : listing.entries) {
    out << "  " << e.name << std::string(width - e.name.size() + 2, ' ');
    if (e.is_directory) {
      out << e.files << " file" << (e.files == 1 ? "" : "s") << ", " << FormatBytes(e.bytes);
    } else {
      out << e.lines << " line" << (e.lines == 1 ? "" : "s") << ", " << FormatBytes(e.bytes);
    }
    out << "\n";
  }
  if (static_cast<int>(listing.entries.size()) < listing.total_entries) {
    out << "[" << listing.total_entries - static_cast<int>(listing.entries.size())
        << " more entries not shown]\n";
  }
  return out.str();
}

// ---- tools

namespace {

constexpr char kSearchTool[] = "search_cutlass";
constexpr char kReadTool[] = "read_cutlass_file";
constexpr char kListTool[] = "list_cutlass_directory";

// The arguments of one call, checked: known names only, each of the type its schema says.
class Arguments {
 public:
  Arguments(std::string tool, const Json& json) : tool_(std::move(tool)), json_(json) {}

  Status CheckNames(const std::vector<std::string>& known) const {
    if (!json_.is_object()) {
      return Status::InvalidArgument(tool_ + ": the arguments must be a JSON object");
    }
    for (const auto& [key, value] : json_.items()) {
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        std::string list;
        for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
        return Status::InvalidArgument(tool_ + ": unknown argument '" + key +
                                       "' (arguments: " + list + ")");
      }
    }
    return Status::Ok();
  }

  Result<std::string> String(const char* key, bool required) const {
    auto it = json_.find(key);
    if (it == json_.end() || it->is_null()) {
      if (required) return Status::InvalidArgument(tool_ + ": '" + key + "' is required");
      return std::string();
    }
    if (!it->is_string()) {
      return Status::InvalidArgument(tool_ + ": '" + key + "' must be a string");
    }
    return it->get<std::string>();
  }

  // An integer from `low` to `high`; `fallback` when absent.
  Result<int> Integer(const char* key, int fallback, int low, int high) const {
    auto it = json_.find(key);
    if (it == json_.end() || it->is_null()) return fallback;
    double value = 0;
    if (it->is_number()) {
      value = it->get<double>();
    } else {
      return Status::InvalidArgument(tool_ + ": '" + key + "' must be a whole number");
    }
    if (value != std::floor(value) || value < low || value > high) {
      return Status::InvalidArgument(tool_ + ": '" + key + "' must be a whole number from " +
                                     std::to_string(low) + " to " + std::to_string(high));
    }
    return static_cast<int>(value);
  }

 private:
  std::string tool_;
  const Json& json_;
};

Result<std::string> RunSearch(const CutlassIndex& index, const Arguments& args) {
  if (Status s = args.CheckNames({"regex", "path", "max_results", "context_lines"}); !s.ok()) {
    return s;
  }
  Result<std::string> regex = args.String("regex", true);
  if (!regex.ok()) return regex.status();
  Result<std::string> path = args.String("path", false);
  if (!path.ok()) return path.status();
  Result<int> max_results = args.Integer("max_results", 30, 1, 100);
  if (!max_results.ok()) return max_results.status();
  Result<int> context = args.Integer("context_lines", 2, 0, 10);
  if (!context.ok()) return context.status();
  SearchOptions options;
  options.path = *path;
  options.max_results = *max_results;
  options.context_lines = *context;
  Result<SearchResult> result = SearchCutlass(index, *regex, options);
  if (!result.ok())
    return Status::InvalidArgument(std::string(kSearchTool) + ": " + result.status().message());
  return RenderSearch(index, *result, options);
}

Result<std::string> RunRead(const CutlassIndex& index, const Arguments& args) {
  if (Status s = args.CheckNames({"file", "start_line", "end_line"}); !s.ok()) return s;
  Result<std::string> file = args.String("file", true);
  if (!file.ok()) return file.status();
  Result<int> first = args.Integer("start_line", 1, 1, 10000000);
  if (!first.ok()) return first.status();
  Result<int> last = args.Integer("end_line", *first + 199, 1, 10000000);
  if (!last.ok()) return last.status();
  Result<FileExcerpt> excerpt = ReadCutlassFile(index, *file, *first, *last);
  if (!excerpt.ok()) {
    const std::string message = std::string(kReadTool) + ": " + excerpt.status().message();
    return excerpt.status().code() == Status::Code::kNotFound ? Status::NotFound(message)
                                                              : Status::InvalidArgument(message);
  }
  return RenderExcerpt(*excerpt);
}

Result<std::string> RunList(const CutlassIndex& index, const Arguments& args) {
  if (Status s = args.CheckNames({"dir"}); !s.ok()) return s;
  Result<std::string> dir = args.String("dir", false);
  if (!dir.ok()) return dir.status();
  Result<DirectoryListing> listing = ListCutlassDirectory(index, *dir);
  if (!listing.ok()) {
    return Status::InvalidArgument(std::string(kListTool) + ": " + listing.status().message());
  }
  return RenderListing(*listing);
}

}  // namespace

std::vector<llm::ToolDefinition> CutlassToolDefinitions() {
  const Json search_schema = {
      {"type", "object"},
      {"properties",
       {{"regex",
         {{"type", "string"},
          {"description",
           "RE2 regular expression matched against each line (^ and $ at line ends; no "
           "backreferences or lookaround), e.g. \"struct SM90_64x\\\\d+x16_F32BF16BF16_SS\""}}},
        {"path",
         {{"type", "string"},
          {"description",
           "Only files under this path prefix (\"cute/atom/\") or matching this glob, in which * "
           "also crosses / (\"cutlass/gemm/collective/*sm90*\"); omit for the whole tree"}}},
        {"max_results",
         {{"type", "integer"},
          {"minimum", 1},
          {"maximum", 100},
          {"description", "Matching lines shown (default 30); the rest are counted per file"}}},
        {"context_lines",
         {{"type", "integer"},
          {"minimum", 0},
          {"maximum", 10},
          {"description", "Lines shown before and after each match (default 2)"}}}}},
      {"required", {"regex"}},
      {"additionalProperties", false}};
  const Json read_schema = {
      {"type", "object"},
      {"properties",
       {{"file",
         {{"type", "string"},
          {"description",
           "Path relative to the include folder, e.g. cute/atom/mma_traits_sm90_gmma.hpp"}}},
        {"start_line",
         {{"type", "integer"}, {"minimum", 1}, {"description", "First line (default 1)"}}},
        {"end_line",
         {{"type", "integer"},
          {"minimum", 1},
          {"description", "Last line, inclusive (default start_line + 199); at most " +
                              std::to_string(kMaxReadLines) + " lines are returned per call"}}}}},
      {"required", {"file"}},
      {"additionalProperties", false}};
  const Json list_schema = {
      {"type", "object"},
      {"properties",
       {{"dir",
         {{"type", "string"},
          {"description",
           "Directory relative to the include folder (\"cute/arch\"); omit for "
           "the top (cute/, cutlass/)"}}}}},
      {"additionalProperties", false}};
  return {
      {kSearchTool,
       "Search the CUTLASS/CuTe C++ headers with a regular expression; returns file:line:text "
       "with context, like grep -n. Use it to find the exact names, template parameters and "
       "static_asserts of MMA atoms, copy atoms, layouts and collectives before using them.",
       search_schema},
      {kReadTool,
       "Read a line range of one CUTLASS/CuTe header (numbered lines), e.g. around a line that "
       "search_cutlass found.",
       read_schema},
      {kListTool,
       "List a directory of the CUTLASS/CuTe include tree: subdirectories with their file counts, "
       "files with their line counts.",
       list_schema},
  };
}

CutlassToolOutcome RunCutlassTool(const CutlassIndex& index, const std::string& name,
                                  const Json& arguments) {
  try {
    const Arguments args(name, arguments);
    if (name == kSearchTool) {
      Result<std::string> text = RunSearch(index, args);
      // A search that ran spends the budget; one refused for its arguments did not search.
      const bool ran = text.ok();
      return {std::move(text), ran};
    }
    if (name == kReadTool) return {RunRead(index, args), false};
    if (name == kListTool) return {RunList(index, args), false};
    return {Status::InvalidArgument("unknown CUTLASS tool '" + name + "' (tools: " + kSearchTool +
                                    ", " + kReadTool + ", " + kListTool + ")"),
            false};
  } catch (const std::exception& e) {
    // nlohmann::json and std::string can throw on odd input; the model hears of it instead.
    return {Status::Internal(name + ": " + e.what()), false};
  }
}

}  // namespace kernelpro::cutlass
