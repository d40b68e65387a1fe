#include "suite/problem_set.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <tuple>

namespace kernelpro::suite {
namespace fs = std::filesystem;
namespace {

bool Hidden(const std::string& name) { return name.empty() || name[0] == '_' || name[0] == '.'; }

std::optional<int> LeadingNumber(const std::string& stem) {
  static const std::regex kNumber(R"(^(\d{1,9})(?:_|$))");
  std::smatch m;
  if (std::regex_search(stem, m, kNumber)) return std::stoi(m[1].str());
  return std::nullopt;
}

std::vector<fs::path> SortedEntries(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool IsFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);  // follows symbolic links
}
bool IsDir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

// Problems directly in `dir` (files, and folders holding problem.py), at `level`.
void Collect(const fs::path& dir, int level, const std::string& prefix,
             std::vector<SuiteProblem>& out) {
  for (const fs::path& entry : SortedEntries(dir)) {
    const std::string name = entry.filename().string();
    if (Hidden(name)) continue;
    SuiteProblem p;
    p.level = level;
    // A problem file, or a CUDA program (docs/programs.md); a folder holding either.
    const fs::path in_folder =
        IsFile(entry / "problem.py") ? entry / "problem.py" : entry / "problem.cu";
    if (IsFile(entry) && (entry.extension() == ".py" || entry.extension() == ".cu")) {
      p.name = entry.stem().string();
      p.path = fs::absolute(entry).lexically_normal().string();
    } else if (IsDir(entry) && !LevelOfFolder(name) && IsFile(in_folder)) {
      p.name = name;
      p.path = fs::absolute(in_folder).lexically_normal().string();
    } else {
      continue;
    }
    p.key = prefix + p.name;
    p.task = LeadingNumber(p.name);
    out.push_back(std::move(p));
  }
}

void AddPythonFiles(const fs::path& dir, std::vector<std::string>& out) {
  for (const fs::path& entry : SortedEntries(dir)) {
    if (IsFile(entry) && entry.extension() == ".py" && !Hidden(entry.filename().string())) {
      out.push_back(fs::absolute(entry).lexically_normal().string());
    }
  }
}

}  // namespace

std::optional<int> LevelOfFolder(const std::string& name) {
  static const std::regex kLevel(R"((?:level|l)[_-]?(\d{1,9}))", std::regex::icase);
  std::smatch m;
  if (std::regex_match(name, m, kLevel)) return std::stoi(m[1].str());
  return std::nullopt;
}

Result<std::vector<SuiteProblem>> DiscoverProblems(const std::string& dir,
                                                   const ProblemFilter& filter) {
  if (!IsDir(dir)) {
    return Status::InvalidArgument("--problems " + dir + ": not a folder");
  }
  std::vector<SuiteProblem> problems;
  Collect(dir, 0, "", problems);
  for (const fs::path& entry : SortedEntries(dir)) {
    if (!IsDir(entry)) continue;
    const std::string name = entry.filename().string();
    if (auto level = LevelOfFolder(name)) Collect(entry, *level, name + "/", problems);
  }
  if (problems.empty()) {
    return Status::InvalidArgument(
        "--problems " + dir +
        ": no problem files (expected NAME.py, NAME/problem.py, or level folders such as "
        "level1/NAME.py)");
  }
  std::optional<std::regex> pattern;
  if (!filter.pattern.empty()) {
    try {
      pattern.emplace(filter.pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {  // the library's only way to say so
      return Status::InvalidArgument("--filter '" + filter.pattern +
                                     "': not a regular expression: " + e.what());
    }
  }
  const std::set<int> levels(filter.levels.begin(), filter.levels.end());
  std::vector<SuiteProblem> kept;
  for (SuiteProblem& p : problems) {
    if (!levels.empty() && !levels.count(p.level)) continue;
    if (pattern && !std::regex_search(p.key, *pattern)) continue;
    kept.push_back(std::move(p));
  }
  if (kept.empty()) {
    return Status::InvalidArgument("no problem under " + dir + " matches the filter (" +
                                   std::to_string(problems.size()) + " problems there)");
  }
  std::stable_sort(kept.begin(), kept.end(), [](const SuiteProblem& a, const SuiteProblem& b) {
    return std::make_tuple(a.level, a.task.value_or(1 << 30), a.name) <
           std::make_tuple(b.level, b.task.value_or(1 << 30), b.name);
  });
  return kept;
}

std::vector<std::string> FindCandidates(const std::string& candidates_dir,
                                        const SuiteProblem& problem) {
  std::vector<std::string> out;
  std::vector<fs::path> roots = {fs::path(candidates_dir)};
  if (problem.level > 0) {
    for (const fs::path& entry : SortedEntries(candidates_dir)) {
      auto level = LevelOfFolder(entry.filename().string());
      if (IsDir(entry) && level && *level == problem.level) roots.push_back(entry);
    }
  }
  for (const fs::path& root : roots) {
    if (IsFile(root / (problem.name + ".py"))) {
      out.push_back(fs::absolute(root / (problem.name + ".py")).lexically_normal().string());
    }
    if (IsDir(root / problem.name)) AddPythonFiles(root / problem.name, out);
  }
  if (problem.task) {
    // KernelBench's generations: level_1_problem_19_sample_0_kernel.py, by sample number.
    std::map<int, std::string> samples;
    for (const fs::path& entry : SortedEntries(candidates_dir)) {
      static const std::regex kGeneration(
          R"(level_(\d{1,9})_problem_(\d{1,9})_sample_(\d{1,9})_kernel\.py)");
      const std::string name = entry.filename().string();
      std::smatch m;
      if (IsFile(entry) && std::regex_match(name, m, kGeneration) &&
          std::stoi(m[1].str()) == problem.level && std::stoi(m[2].str()) == *problem.task) {
        samples[std::stoi(m[3].str())] = fs::absolute(entry).lexically_normal().string();
      }
    }
    for (auto& [sample, path] : samples) out.push_back(path);
  }
  // One file reached two ways (a level folder and the top) counts once.
  std::vector<std::string> unique;
  for (std::string& p : out) {
    if (std::find(unique.begin(), unique.end(), p) == unique.end()) unique.push_back(std::move(p));
  }
  return unique;
}

}  // namespace kernelpro::suite
