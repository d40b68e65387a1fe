// `kernelpro cache [info]`: what the cache holds and the size it is held to; `kernelpro cache
// prune [--older-than D] [--max-size S] [--include-recent]`: removes the least recently used
// builds and references, precompiled headers last (eval/cache.h), never one locked by a running
// process. Its first line says what it will remove and, when that does not reach S, what it keeps
// and why; it exits 1 when the cache is still above S.
#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/option_groups.h"
#include "eval/cache.h"

namespace kernelpro::cli {
namespace {

struct CacheArgs {
  // One per (sub)command, so that `cache --cache-dir X` and `cache prune --cache-dir X` both work.
  std::string dir, info_dir, prune_dir;
  bool json = false, info_json = false;
  std::string older_than, max_size;
  bool include_recent = false;
};

// "3 days", "5 hours", "12 minutes": how long ago an entry was last used.
std::string Ago(std::filesystem::file_time_type when, std::filesystem::file_time_type now) {
  const long long minutes = std::chrono::duration_cast<std::chrono::minutes>(now - when).count();
  if (minutes >= 2 * 24 * 60) return std::to_string(minutes / (24 * 60)) + " days ago";
  if (minutes >= 2 * 60) return std::to_string(minutes / 60) + " hours ago";
  if (minutes < 1) return "just now";
  return minutes == 1 ? "1 minute ago" : std::to_string(minutes) + " minutes ago";
}

std::string Entries(std::size_t n) { return n == 1 ? "1 entry" : std::to_string(n) + " entries"; }

std::string Describe(const eval::CacheEntry& e, std::filesystem::file_time_type now) {
  return e.name + " (" + eval::CacheEntryKindName(e.kind) + ", " + eval::FormatByteSize(e.bytes) +
         ", last used " + Ago(e.last_used, now) + ")";
}

int Info(const std::string& dir_option, bool json) {
  const std::string dir = dir_option.empty() ? DefaultCacheDir() : dir_option;
  auto usage = eval::MeasureCache(dir);
  if (!usage.ok()) {
    std::cerr << "kernelpro cache: " << usage.status().message() << "\n";
    return 2;
  }
  const char* env = std::getenv(kCacheMaxSizeEnv);
  auto limit = eval::ParseCacheLimit(env ? env : "");
  int builds = 0, references = 0;
  for (const eval::CacheEntry& e : usage->entries) {
    builds += e.kind == eval::CacheEntryKind::kBuild;
    references += e.kind == eval::CacheEntryKind::kReference;
  }
  if (json) {
    std::cout << DumpJson({{"dir", usage->dir},
                           {"exists", usage->exists},
                           {"total_bytes", usage->total_bytes},
                           {"build_bytes", usage->build_bytes},
                           {"reference_bytes", usage->reference_bytes},
                           {"header_bytes", usage->header_bytes},
                           {"other_bytes", usage->other_bytes},
                           {"builds", builds},
                           {"references", references},
                           {"max_bytes", limit.ok() && *limit ? Json(**limit) : Json(nullptr)}})
              << "\n";
    return 0;
  }
  if (!usage->exists) {
    std::cout << "cache " << usage->dir << ": empty (it does not exist yet)\n";
    return 0;
  }
  auto row = [](const std::string& what, std::uint64_t bytes, const std::string& count) {
    std::string size = eval::FormatByteSize(bytes);
    std::cout << "  " << what << std::string(32 - what.size(), ' ')
              << std::string(size.size() < 9 ? 9 - size.size() : 0, ' ') << size
              << (count.empty() ? "" : "  (" + count + ")") << "\n";
  };
  std::cout << "cache " << usage->dir << ": " << eval::FormatByteSize(usage->total_bytes) << "\n";
  row("builds", usage->build_bytes, std::to_string(builds) + " candidate source(s)");
  row("reference outputs and inputs", usage->reference_bytes,
      std::to_string(references) + " problem(s) and settings");
  row("precompiled headers", usage->header_bytes, "");
  row("other", usage->other_bytes, "");
  if (!limit.ok()) {
    std::cout << "size limit: none in force: " << kCacheMaxSizeEnv << ": "
              << limit.status().message() << "\n";
  } else if (!*limit) {
    std::cout << "size limit: none (" << kCacheMaxSizeEnv << "=" << env << ")\n";
  } else {
    std::cout << "size limit: " << eval::FormatByteSize(**limit)
              << (env && *env ? " (" + std::string(kCacheMaxSizeEnv) + ")"
                              : " (the default; set " + std::string(kCacheMaxSizeEnv) +
                                    " to change it, off for none)")
              << ", enforced after each eval, optimize, resume and suite run: least recently used "
                 "first, precompiled headers last\n";
  }
  std::cout << "free space with: kernelpro cache prune --older-than 7d (or --max-size 2G)\n";
  return 0;
}

int Prune(const CacheArgs& args) {
  const std::string dir =
      !args.prune_dir.empty() ? args.prune_dir : (!args.dir.empty() ? args.dir : DefaultCacheDir());
  eval::PruneOptions options;
  if (args.older_than.empty() && args.max_size.empty()) {
    std::cerr << "kernelpro cache prune: give --older-than D (e.g. 7d) and/or --max-size S (e.g. "
                 "2G)\n";
    return 2;
  }
  if (!args.older_than.empty()) {
    auto age = eval::ParseAge(args.older_than);
    if (!age.ok()) {
      std::cerr << "kernelpro cache prune: --older-than: " << age.status().message() << "\n";
      return 2;
    }
    options.older_than = *age;
  }
  if (!args.max_size.empty()) {
    auto size = eval::ParseByteSize(args.max_size);
    if (!size.ok()) {
      std::cerr << "kernelpro cache prune: --max-size: " << size.status().message() << "\n";
      return 2;
    }
    options.max_bytes = *size;
  }
  if (args.include_recent) options.keep_recent = std::chrono::seconds(0);
  const std::string in_use = args.include_recent
                                 ? "locked by a running kernelpro"
                                 : "used in the last 10 minutes or locked by a running kernelpro";
  // First what will happen, before anything is removed.
  options.dry_run = true;
  auto plan = eval::PruneCache(dir, options);
  if (!plan.ok()) {
    std::cerr << "kernelpro cache prune: " << plan.status().message() << "\n";
    return 2;
  }
  std::string first = "removing " + Entries(plan->removed.size()) + " (" +
                      eval::FormatByteSize(plan->freed_bytes) + ")";
  if (!plan->skipped_in_use.empty()) {
    first += "; keeping " + Entries(plan->skipped_in_use.size()) + " (" +
             eval::FormatByteSize(plan->skipped_bytes) + ") " + in_use;
    if (!args.include_recent) first += " (--include-recent removes the unlocked ones too)";
  }
  if (!plan->target_reached) {
    first += "; the cache will still hold " + eval::FormatByteSize(plan->remaining_bytes) +
             ", above the " + eval::FormatByteSize(*options.max_bytes) + " asked for";
    if (plan->other_bytes > 0) {
      first += " (" + eval::FormatByteSize(plan->other_bytes) +
               " of it torch's kernel cache and other files kernelpro never removes)";
    }
  }
  std::cout << first << "\n";
  options.dry_run = false;
  auto pruned = eval::PruneCache(dir, options);
  if (!pruned.ok()) {
    std::cerr << "kernelpro cache prune: " << pruned.status().message() << "\n";
    return 2;
  }
  for (const eval::CacheEntry& e : pruned->removed) {
    std::cout << "removed " << Describe(e, options.now) << "\n";
  }
  for (const eval::CacheEntry& e : pruned->skipped_in_use) {
    std::cout << "kept    " << Describe(e, options.now) << ": may be in use (" << in_use << ")\n";
  }
  for (const std::string& error : pruned->errors) {
    std::cerr << "kernelpro cache prune: could not remove " << error << "\n";
  }
  std::cout << (pruned->removed.empty() && pruned->freed_bytes == 0
                    ? "nothing removed"
                    : "freed " + eval::FormatByteSize(pruned->freed_bytes))
            << "; the cache (" << dir << ") now holds "
            << eval::FormatByteSize(pruned->remaining_bytes) << "\n";
  if (!pruned->target_reached) {
    std::cerr << "kernelpro cache prune: the cache holds "
              << eval::FormatByteSize(pruned->remaining_bytes) << ", above --max-size "
              << args.max_size << ": the rest is " << in_use << ", or not kernelpro's\n";
  }
  return pruned->errors.empty() && pruned->target_reached ? 0 : 1;
}

}  // namespace

CommandRunner RegisterCacheCommand(CLI::App& app) {
  auto args = std::make_shared<CacheArgs>();
  CLI::App* cache =
      app.add_subcommand("cache", "Show the cache's size (builds, reference outputs), or prune it");
  cache->require_subcommand(0, 1);
  cache->footer("Alone, the same as `cache info`.");
  AddOption(*cache, kCacheDirOption, args->dir);
  AddOption(*cache, kJsonOption, args->json);
  CLI::App* info = cache->add_subcommand("info", "The cache's size, by kind");
  info->footer(
      "--json prints {dir, exists, total_bytes, build_bytes, reference_bytes, header_bytes, "
      "other_bytes, builds, references}");
  AddOption(*info, kCacheDirOption, args->info_dir);
  AddOption(*info, kJsonOption, args->info_json);
  CLI::App* prune =
      cache->add_subcommand("prune", "Remove the least recently used builds and reference outputs");
  prune->footer(
      "--older-than removes entries last used longer ago than D; --max-size then removes the "
      "least recently used until the cache holds at most S, precompiled headers last. Entries "
      "used in the last 10 minutes (unless --include-recent), or locked by a running kernelpro, "
      "are kept; the first line says so, and the exit status is 1 when the cache is still above "
      "S. A removed reference is recomputed when a problem needs it again; a removed build is "
      "rebuilt; removed headers are made again by the next run that uses them.");
  AddOption(*prune, kCacheDirOption, args->prune_dir);
  AddOption(*prune, {"--older-than", "Remove entries last used more than D ago: 7d, 12h, 30m, 2w"},
            args->older_than);
  AddOption(*prune,
            {"--max-size",
             "Then remove the least recently used until the cache fits in S: 500M, "
             "2G (powers of 1024)"},
            args->max_size);
  AddOption(*prune,
            {"--include-recent",
             "Also remove entries used in the last 10 minutes (never one a running kernelpro "
             "holds locked)"},
            args->include_recent);
  return [args, info, prune] {
    if (prune->parsed()) return Prune(*args);
    if (info->parsed()) {
      return Info(args->info_dir.empty() ? args->dir : args->info_dir,
                  args->info_json || args->json);
    }
    return Info(args->dir, args->json);
  };
}

}  // namespace kernelpro::cli
