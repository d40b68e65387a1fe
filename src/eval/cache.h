// What kernelpro's cache directory (--cache-dir, KERNELPRO_CACHE_DIR, default ~/.cache/kernelpro)
// holds, how much of the disk it takes, and pruning it by age and by size.
//
// The worker writes the cache (python/kernelpro_worker/reference_step.py and buildcache.py); its
// layout:
//
//   builds/<source hash>/<key>/       one candidate source's extensions (its build scope)
//   references/<key>/, inputs/<key>/  one problem's reference outputs and trial inputs, per seeds,
//                                     device and torch version; references/<key>.lock
//   pch/<...>/                        precompiled torch headers, one folder per toolchain/flags
//   kernels/                          torch's own NVRTC kernel cache
//
// An entry is the unit pruning removes: one build scope, one reference (its outputs and inputs
// together), one precompiled-header folder. Its last use is the newest modification time of any
// file in it (the worker touches a reference's meta.json and a build's manifest on every cache
// hit), so pruning removes the least recently used first. Precompiled headers go last of all: a
// size limit removes them only when removing every other entry it may does not reach it (every
// C++ build uses them; the worker's pch step makes missing ones again, a minute each).
//
// A reference entry is small (tens of KiB to tens of MiB): outputs and inputs above a few MiB are
// not stored but recomputed and checked against their digest (reference_step.py). The cache is
// held to a size (kDefaultCacheMaxBytes, or KERNELPRO_CACHE_MAX_SIZE) after every eval, optimize,
// resume and suite run by PruneCache with that max_bytes (cli/common.h EnforceCacheLimit).
//
// Only builds, references and headers are pruned; anything else in the directory (torch's kernel
// cache) is counted but kept. Pruning never removes what may be in use: an entry used within
// `keep_recent` (10 minutes by default), or whose lock file (references/<key>.lock,
// builds/.../<key>/.lock) another process holds, is skipped. A reference removed between a run's
// reference step and a later step is found missing by its content check and recomputed, never
// trusted. Lock files themselves stay (empty files that other processes may be waiting on).
//
// Functions here touch only the directory they are given; not thread-safe against themselves.
// Another process pruning the same cache at the same time is safe: locks decide who removes.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace kernelpro::eval {

enum class CacheEntryKind { kBuild, kReference, kHeaders, kOther };

// "build", "reference", "headers", "other".
const char* CacheEntryKindName(CacheEntryKind kind);

struct CacheEntry {
  CacheEntryKind kind = CacheEntryKind::kOther;
  std::string name;                // relative to the cache: "builds/3fa2…", "references/9c1e…"
  std::vector<std::string> paths;  // absolute paths removed with it (a reference: two trees)
  std::uint64_t bytes = 0;
  // The oldest time there is until a file says otherwise (file_time_type{} is not old: libstdc++'s
  // file clock counts from 2174).
  std::filesystem::file_time_type last_used = std::filesystem::file_time_type::min();
};

// Bytes by kind, and the entries they come from.
struct CacheUsage {
  std::string dir;  // absolute
  bool exists = false;
  std::uint64_t total_bytes = 0;
  std::uint64_t build_bytes = 0;
  std::uint64_t reference_bytes = 0;  // reference outputs and trial inputs
  std::uint64_t header_bytes = 0;
  std::uint64_t other_bytes = 0;
  std::vector<CacheEntry> entries;  // least recently used first
};

// Walks `dir`. A missing directory is an empty cache (exists = false), not an error; IoError when
// it exists but cannot be read.
Result<CacheUsage> MeasureCache(const std::string& dir);

// The size the cache is held to after each run when KERNELPRO_CACHE_MAX_SIZE does not say
// otherwise.
inline constexpr std::uint64_t kDefaultCacheMaxBytes = std::uint64_t{10} << 30;

// The automatic limit a KERNELPRO_CACHE_MAX_SIZE value sets: "" is kDefaultCacheMaxBytes, "off"
// (or "none") no limit (nullopt), anything else a size as ParseByteSize reads it.
Result<std::optional<std::uint64_t>> ParseCacheLimit(const std::string& text);

struct PruneOptions {
  // Remove entries last used longer ago than this; nullopt: no age limit.
  std::optional<std::chrono::seconds> older_than;
  // Then remove the least recently used until the cache holds at most this many bytes; nullopt:
  // no size limit.
  std::optional<std::uint64_t> max_bytes;
  // Entries used more recently than this are never removed: a run may be using them. Zero still
  // keeps what a running process holds locked.
  std::chrono::seconds keep_recent = std::chrono::minutes(10);
  // Remove nothing: the result says what would go (`removed`), what would stay and why.
  bool dry_run = false;
  // The clock's "now" (a parameter so that tests choose it).
  std::filesystem::file_time_type now = std::filesystem::file_time_type::clock::now();
};

struct PruneResult {
  std::vector<CacheEntry> removed;         // with dry_run: would be removed
  std::vector<CacheEntry> skipped_in_use;  // would have gone, but recent or locked
  std::uint64_t skipped_bytes = 0;         // their size
  std::uint64_t other_bytes = 0;  // files not in kernelpro's layout: counted, never removed
  std::uint64_t freed_bytes = 0;
  std::uint64_t remaining_bytes = 0;
  // The cache holds at most max_bytes now (always true without max_bytes).
  bool target_reached = true;
  std::vector<std::string> errors;  // entries that could not be removed (wholly), with why
};

// Removes entries as `options` say, least recently used first and precompiled headers last.
// IoError only when the cache cannot be read.
Result<PruneResult> PruneCache(const std::string& dir, const PruneOptions& options);

// ---- the values a user types

// "500M", "2G", "1.5G", "700K", "123" (bytes): binary units (K = 1024), case-insensitive, an
// optional trailing "B" or "iB" ("2GiB"). InvalidArgument names the text and the accepted forms.
Result<std::uint64_t> ParseByteSize(const std::string& text);

// "7d", "12h", "30m", "45s", "2w": a whole or decimal number with one unit. InvalidArgument
// otherwise.
Result<std::chrono::seconds> ParseAge(const std::string& text);

// 1536 → "1.5 KiB", 1610612736 → "1.5 GiB", 12 → "12 B".
std::string FormatByteSize(std::uint64_t bytes);

}  // namespace kernelpro::eval
