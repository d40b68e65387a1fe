#include "eval/cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include "core/text.h"

namespace kernelpro::eval {
namespace {

namespace fs = std::filesystem;

bool EndsWith(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Adds the bytes and newest modification time under `path` (a file or a tree) to `entry`.
// Symbolic links are counted as links, never followed: a link out of the cache is not its size.
void Measure(const fs::path& path, CacheEntry& entry) {
  std::error_code ec;
  auto visit = [&entry](const fs::directory_entry& item) {
    std::error_code ec;
    if (item.is_symlink(ec)) return;
    const fs::file_time_type time = item.last_write_time(ec);
    if (!ec) entry.last_used = std::max(entry.last_used, time);
    if (item.is_regular_file(ec)) {
      const std::uintmax_t size = item.file_size(ec);
      if (!ec) entry.bytes += size;
    }
  };
  const fs::directory_entry top(path, ec);
  if (ec) return;
  visit(top);
  if (!top.is_directory(ec) || top.is_symlink(ec)) return;
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec),
       end;
       !ec && it != end; it.increment(ec)) {
    visit(*it);
  }
}

// The lock files guarding `entry`: "<tree>.lock" beside a reference or header tree, and each
// build key's ".lock" inside a build scope.
std::vector<fs::path> LockFiles(const CacheEntry& entry) {
  std::vector<fs::path> locks;
  for (const std::string& path : entry.paths) {
    std::error_code ec;
    if (fs::exists(path + ".lock", ec)) locks.push_back(path + ".lock");
    if (entry.kind != CacheEntryKind::kBuild || !fs::is_directory(path, ec)) continue;
    for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      if (fs::exists(it->path() / ".lock", ec)) locks.push_back(it->path() / ".lock");
    }
  }
  return locks;
}

// Holds the locks of one entry (flock, shared with the worker's fcntl.flock) for as long as it
// lives; empty when another process holds any of them.
class EntryLocks {
 public:
  static std::optional<EntryLocks> TryAcquire(const CacheEntry& entry) {
    EntryLocks held;
    for (const fs::path& lock : LockFiles(entry)) {
      const int fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;  // gone meanwhile: nothing to wait for
      if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        ::close(fd);
        return std::nullopt;
      }
      held.fds_.push_back(fd);
    }
    return held;
  }
  EntryLocks(EntryLocks&& other) noexcept : fds_(std::move(other.fds_)) { other.fds_.clear(); }
  EntryLocks& operator=(EntryLocks&&) = delete;
  ~EntryLocks() {
    for (int fd : fds_) ::close(fd);  // closing releases the flock
  }

 private:
  EntryLocks() = default;
  std::vector<int> fds_;
};

}  // namespace

const char* CacheEntryKindName(CacheEntryKind kind) {
  switch (kind) {
    case CacheEntryKind::kBuild:
      return "build";
    case CacheEntryKind::kReference:
      return "reference";
    case CacheEntryKind::kHeaders:
      return "headers";
    case CacheEntryKind::kOther:
      return "other";
  }
  return "other";
}

Result<CacheUsage> MeasureCache(const std::string& dir) {
  CacheUsage usage;
  std::error_code ec;
  usage.dir = fs::absolute(dir, ec).lexically_normal().string();
  if (ec) usage.dir = dir;
  const fs::file_status status = fs::status(usage.dir, ec);
  if (!fs::exists(status)) return usage;
  if (!fs::is_directory(status)) {
    return Status::IoError("the cache " + usage.dir + " is not a directory");
  }
  usage.exists = true;
  const fs::path root = usage.dir;
  // Entries by name, so that a reference's inputs tree joins its outputs tree.
  std::map<std::string, CacheEntry> entries;
  auto add = [&](CacheEntryKind kind, const std::string& name, const fs::path& path) {
    CacheEntry& entry = entries[name];
    entry.kind = kind;
    entry.name = name;
    entry.paths.push_back(path.string());
    Measure(path, entry);
  };
  fs::directory_iterator top(root, ec);
  if (ec) return Status::IoError("cannot read the cache " + usage.dir + ": " + ec.message());
  for (fs::directory_iterator end; top != end; top.increment(ec)) {
    if (ec) return Status::IoError("cannot read the cache " + usage.dir + ": " + ec.message());
    const std::string section = top->path().filename().string();
    const bool per_child =
        top->is_directory(ec) && !top->is_symlink(ec) &&
        (section == "builds" || section == "references" || section == "inputs" || section == "pch");
    if (!per_child) {
      add(CacheEntryKind::kOther, section, top->path());
      continue;
    }
    for (fs::directory_iterator it(top->path(), ec), stop; !ec && it != stop; it.increment(ec)) {
      const std::string child = it->path().filename().string();
      // Lock files belong to their tree and stay: another process may be waiting on one.
      if (EndsWith(child, ".lock")) continue;
      if (section == "builds") {
        // The executor's record of a built source sits beside its scope: one entry with it.
        constexpr std::string_view kRecord = ".built.json";
        const std::string scope =
            EndsWith(child, kRecord) ? child.substr(0, child.size() - kRecord.size()) : child;
        add(CacheEntryKind::kBuild, "builds/" + scope, it->path());
      } else if (section == "pch") {
        add(CacheEntryKind::kHeaders, "pch/" + child, it->path());
      } else {
        add(CacheEntryKind::kReference, "references/" + child, it->path());
      }
    }
  }
  for (auto& [name, entry] : entries) {
    usage.total_bytes += entry.bytes;
    switch (entry.kind) {
      case CacheEntryKind::kBuild:
        usage.build_bytes += entry.bytes;
        break;
      case CacheEntryKind::kReference:
        usage.reference_bytes += entry.bytes;
        break;
      case CacheEntryKind::kHeaders:
        usage.header_bytes += entry.bytes;
        break;
      case CacheEntryKind::kOther:
        usage.other_bytes += entry.bytes;
        break;
    }
    usage.entries.push_back(std::move(entry));
  }
  std::stable_sort(
      usage.entries.begin(), usage.entries.end(),
      [](const CacheEntry& a, const CacheEntry& b) { return a.last_used < b.last_used; });
  return usage;
}

Result<std::optional<std::uint64_t>> ParseCacheLimit(const std::string& text) {
  if (text.empty()) return std::optional<std::uint64_t>(kDefaultCacheMaxBytes);
  const std::string lower = Lower(text);
  if (lower == "off" || lower == "none") return std::optional<std::uint64_t>();
  auto bytes = ParseByteSize(text);
  if (!bytes.ok()) {
    return Status::InvalidArgument(bytes.status().message() + ", or off for no limit");
  }
  return std::optional<std::uint64_t>(*bytes);
}

Result<PruneResult> PruneCache(const std::string& dir, const PruneOptions& options) {
  auto usage = MeasureCache(dir);
  if (!usage.ok()) return usage.status();
  PruneResult result;
  result.other_bytes = usage->other_bytes;
  std::uint64_t total = usage->total_bytes;
  const auto recent = options.now - options.keep_recent;
  // Least recently used first, precompiled headers after everything else: every next C++ build
  // needs them and making them again takes a minute per flag set.
  std::vector<CacheEntry> order = usage->entries;
  std::stable_partition(order.begin(), order.end(),
                        [](const CacheEntry& e) { return e.kind != CacheEntryKind::kHeaders; });
  for (const CacheEntry& entry : order) {
    const bool too_old =
        options.older_than.has_value() && entry.last_used < options.now - *options.older_than;
    const bool too_big = options.max_bytes.has_value() && total > *options.max_bytes;
    if (!too_old && !too_big) continue;
    // Not kernelpro's own layout (torch's kernel cache, files a user put there): counted, kept.
    if (entry.kind == CacheEntryKind::kOther) continue;
    const bool is_recent = options.keep_recent.count() > 0 && entry.last_used >= recent;
    std::optional<EntryLocks> locks = is_recent ? std::nullopt : EntryLocks::TryAcquire(entry);
    if (!locks) {
      result.skipped_in_use.push_back(entry);
      result.skipped_bytes += entry.bytes;
      continue;
    }
    if (options.dry_run) {
      result.freed_bytes += entry.bytes;
      total -= entry.bytes;
      result.removed.push_back(entry);
      continue;
    }
    std::string error;
    for (const std::string& path : entry.paths) {
      std::error_code ec;
      fs::remove_all(path, ec);
      if (ec && error.empty()) error = path + ": " + ec.message();
    }
    if (!error.empty()) {
      result.errors.push_back(entry.name + ": " + error);
      // Whatever part went is freed; the rest still counts.
      CacheEntry left;
      for (const std::string& path : entry.paths) Measure(path, left);
      const std::uint64_t freed = entry.bytes > left.bytes ? entry.bytes - left.bytes : 0;
      result.freed_bytes += freed;
      total -= freed;
      continue;
    }
    result.freed_bytes += entry.bytes;
    total -= entry.bytes;
    result.removed.push_back(entry);
  }
  result.remaining_bytes = total;
  result.target_reached = !options.max_bytes.has_value() || total <= *options.max_bytes;
  return result;
}

Result<std::uint64_t> ParseByteSize(const std::string& text) {
  const auto refuse = [&text]() -> Result<std::uint64_t> {
    return Status::InvalidArgument("'" + text +
                                   "' is not a size: give a number with an optional unit K, M, "
                                   "G or T (powers of 1024), e.g. 500M or 2G");
  };
  std::string_view rest = text;
  double value = 0;
  auto [end, error] =
      std::from_chars(rest.data(), rest.data() + rest.size(), value, std::chars_format::fixed);
  if (error != std::errc() || end == rest.data() || !std::isfinite(value) || value < 0 ||
      rest.front() == '-' || rest.front() == '+') {
    return refuse();
  }
  std::string unit = Upper(std::string_view(end, rest.data() + rest.size() - end));
  if (EndsWith(unit, "IB")) {
    unit.resize(unit.size() - 2);
    if (unit.empty()) return refuse();  // "5iB"
  } else if (EndsWith(unit, "B")) {
    unit.pop_back();
  }
  double scale = 1;
  if (unit == "K") {
    scale = 1024.0;
  } else if (unit == "M") {
    scale = 1024.0 * 1024;
  } else if (unit == "G") {
    scale = 1024.0 * 1024 * 1024;
  } else if (unit == "T") {
    scale = 1024.0 * 1024 * 1024 * 1024;
  } else if (!unit.empty()) {
    return refuse();
  }
  const double bytes = value * scale;
  if (bytes >= 1.8e19) return refuse();
  return static_cast<std::uint64_t>(std::llround(bytes));
}

Result<std::chrono::seconds> ParseAge(const std::string& text) {
  const auto refuse = [&text]() -> Result<std::chrono::seconds> {
    return Status::InvalidArgument("'" + text +
                                   "' is not an age: give a number with a unit s, m, h, d or w, "
                                   "e.g. 7d or 12h");
  };
  if (text.size() < 2) return refuse();
  double value = 0;
  const char* last = text.data() + text.size() - 1;
  auto [end, error] = std::from_chars(text.data(), last, value, std::chars_format::fixed);
  if (error != std::errc() || end != last || !std::isfinite(value) || value < 0 ||
      text.front() == '-' || text.front() == '+') {
    return refuse();
  }
  double unit = 0;
  switch (*last) {
    case 's':
      unit = 1;
      break;
    case 'm':
      unit = 60;
      break;
    case 'h':
      unit = 3600;
      break;
    case 'd':
      unit = 86400;
      break;
    case 'w':
      unit = 7 * 86400;
      break;
    default:
      return refuse();
  }
  const double seconds = value * unit;
  if (seconds > 1e12) return refuse();  // beyond any file's age; file_time_type would overflow
  return std::chrono::seconds(static_cast<long long>(std::llround(seconds)));
}

std::string FormatByteSize(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  std::string text = FormatFixed(value, value < 10 ? 1 : 0);
  return text + " " + kUnits[unit];
}

}  // namespace kernelpro::eval
