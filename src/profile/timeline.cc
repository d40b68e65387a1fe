#include "profile/timeline.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "core/json_io.h"

#ifdef KERNELPRO_HAVE_SQLITE
#include <sqlite3.h>
#endif

namespace kernelpro::profile {
namespace {

constexpr double kMinGapThresholdUs = 5.0;
constexpr double kGapThresholdShare = 0.01;
// About 3000 years. Times beyond it are garbage (a corrupted field); keeping them out also keeps
// every sum of durations finite.
constexpr double kMaxAbsTimeUs = 1e17;

// ---- Names ----------------------------------------------------------------------------------

// nsys records API names with the version and per-thread-stream suffixes of the CUPTI callback
// ("cudaStreamSynchronize_v3020", "cudaMemcpyAsync_ptsz_v7000"); Kineto does not. Dropping them
// lets one list of names serve both.
std::string_view BaseApiName(std::string_view name) {
  size_t v = name.rfind("_v");
  if (v != std::string_view::npos && v + 2 < name.size() &&
      std::all_of(name.begin() + v + 2, name.end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    name = name.substr(0, v);
  }
  for (std::string_view suffix : {"_ptsz", "_ptds"}) {
    if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix) {
      name = name.substr(0, name.size() - suffix.size());
    }
  }
  return name;
}

bool IsHostSynchronizingCall(std::string_view raw_name) {
  const std::string_view name = BaseApiName(raw_name);
  static constexpr std::string_view kExplicit[] = {"cudaDeviceSynchronize", "cudaStreamSynchronize",
                                                   "cudaEventSynchronize",  "cudaThreadSynchronize",
                                                   "cuCtxSynchronize",      "cuStreamSynchronize",
                                                   "cuEventSynchronize"};
  for (std::string_view sync : kExplicit) {
    if (name == sync) return true;
  }
  // A copy without "Async" returns only once the copy is done, which waits for the work queued
  // before it on the legacy default stream.
  const bool is_copy = name.starts_with("cudaMemcpy") || name.starts_with("cuMemcpy");
  return is_copy && name.find("Async") == std::string_view::npos;
}

// CUPTI's copy-kind abbreviation ("HtoD", "AtoH", "PtoP"...) to the summary's direction.
std::string CopyDirection(std::string_view cupti_kind) {
  if (cupti_kind == "HtoD" || cupti_kind == "HtoA") return "HtoD";
  if (cupti_kind == "DtoH" || cupti_kind == "AtoH") return "DtoH";
  if (cupti_kind == "DtoD" || cupti_kind == "AtoA" || cupti_kind == "AtoD" ||
      cupti_kind == "DtoA" || cupti_kind == "PtoP") {
    return "DtoD";
  }
  if (cupti_kind == "HtoH") return "HtoH";
  return "other";
}

// ---- The shared summary ----------------------------------------------------------------------

bool ValidInterval(double start, double end) {
  return std::abs(start) <= kMaxAbsTimeUs && std::abs(end) <= kMaxAbsTimeUs && end >= start;
}

std::int64_t SaturatingAdd(std::int64_t a, std::int64_t b) {
  std::int64_t sum;
  if (__builtin_add_overflow(a, b, &sum)) return std::numeric_limits<std::int64_t>::max();
  return sum;
}

struct Interval {
  double start;
  double end;
};

}  // namespace

Result<TimelineSummary> SummarizeTimeline(std::string source, const TimelineEvents& events) {
  std::vector<const GpuActivity*> gpu;
  for (const GpuActivity& activity : events.gpu) {
    if (ValidInterval(activity.start_us, activity.end_us)) gpu.push_back(&activity);
  }
  if (gpu.empty()) return Status::InvalidArgument("the timeline has no GPU activity");

  TimelineSummary summary;
  summary.source = std::move(source);

  double window_start = std::numeric_limits<double>::infinity();
  double window_end = -std::numeric_limits<double>::infinity();
  std::vector<Interval> intervals;
  intervals.reserve(gpu.size());
  for (const GpuActivity* activity : gpu) {
    window_start = std::min(window_start, activity->start_us);
    window_end = std::max(window_end, activity->end_us);
    intervals.push_back({activity->start_us, activity->end_us});
    if (activity->kind == GpuActivity::Kind::kKernel) ++summary.kernel_count;
  }
  // The earliest API call starts the window: the host-side work before the first GPU activity
  // (allocation, the first launch) is part of what the user waits for.
  std::unordered_map<std::int64_t, double> call_start_by_correlation;
  for (const HostApiCall& call : events.api_calls) {
    if (!ValidInterval(call.start_us, call.end_us)) continue;
    window_start = std::min(window_start, call.start_us);
    if (call.correlation_id >= 0) {
      auto [it, inserted] = call_start_by_correlation.emplace(call.correlation_id, call.start_us);
      if (!inserted) it->second = std::min(it->second, call.start_us);
    }
    if (IsHostSynchronizingCall(call.name)) {
      ++summary.sync_calls;
      summary.sync_time_us += call.end_us - call.start_us;
    }
  }
  summary.end_to_end_us = window_end - window_start;

  // Union of busy intervals, in time order.
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> busy;
  for (const Interval& interval : intervals) {
    if (!busy.empty() && interval.start <= busy.back().end) {
      busy.back().end = std::max(busy.back().end, interval.end);
    } else {
      busy.push_back(interval);
    }
  }
  for (const Interval& interval : busy) summary.gpu_busy_us += interval.end - interval.start;
  if (summary.end_to_end_us > 0) {
    summary.launch_overhead_share =
        std::clamp(1.0 - summary.gpu_busy_us / summary.end_to_end_us, 0.0, 1.0);
  }

  summary.gap_threshold_us =
      std::max(kGapThresholdShare * summary.end_to_end_us, kMinGapThresholdUs);
  double idle_since = window_start;
  for (const Interval& interval : busy) {
    const double idle = interval.start - idle_since;
    if (idle > summary.gap_threshold_us) {
      summary.gaps.push_back({idle_since - window_start, idle});
    }
    idle_since = std::max(idle_since, interval.end);
  }

  double latency_sum = 0;
  int latency_count = 0;
  for (const GpuActivity* activity : gpu) {
    if (activity->kind != GpuActivity::Kind::kKernel || activity->correlation_id < 0) continue;
    auto it = call_start_by_correlation.find(activity->correlation_id);
    if (it == call_start_by_correlation.end()) continue;
    latency_sum += activity->start_us - it->second;
    ++latency_count;
  }
  if (latency_count > 0) summary.avg_launch_latency_us = latency_sum / latency_count;

  std::map<std::string, MemcpySummary> copies;
  for (const GpuActivity* activity : gpu) {
    if (activity->kind == GpuActivity::Kind::kKernel) continue;
    const std::string direction =
        activity->kind == GpuActivity::Kind::kMemset ? "memset" : activity->copy_direction;
    MemcpySummary& row = copies[direction.empty() ? "other" : direction];
    ++row.count;
    row.bytes = SaturatingAdd(row.bytes, std::max<std::int64_t>(activity->bytes, 0));
    row.time_us += activity->end_us - activity->start_us;
  }
  for (const char* direction : {"HtoD", "DtoH", "DtoD", "HtoH", "other", "memset"}) {
    auto it = copies.find(direction);
    if (it == copies.end()) continue;
    it->second.direction = direction;
    summary.memcpy.push_back(it->second);
  }
  return summary;
}

// ---- PyTorch profiler Chrome traces -------------------------------------------------------

namespace {

std::optional<double> NumberField(const Json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  const double value = it->get<double>();
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

// An integer field (correlation id, byte count); a float only when it holds an exact integer, so
// that a mangled value never goes through an out-of-range float-to-integer conversion.
std::optional<std::int64_t> IntegerField(const Json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end()) return std::nullopt;
  if (it->is_number_unsigned()) {
    const std::uint64_t value = it->get<std::uint64_t>();
    if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return std::nullopt;
    }
    return static_cast<std::int64_t>(value);
  }
  if (it->is_number_integer()) return it->get<std::int64_t>();
  if (it->is_number_float()) {
    const double value = it->get<double>();
    constexpr double kExactLimit = 9007199254740992.0;  // 2^53
    if (std::isfinite(value) && std::abs(value) <= kExactLimit && value == std::floor(value)) {
      return static_cast<std::int64_t>(value);
    }
  }
  return std::nullopt;
}

std::string_view StringField(const Json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return {};
  return it->get_ref<const std::string&>();
}

enum class TraceCategory { kOther, kKernel, kMemcpy, kMemset, kApiCall };

TraceCategory CategoryOf(std::string_view cat) {
  if (cat == "kernel" || cat == "Kernel") return TraceCategory::kKernel;
  if (cat == "gpu_memcpy" || cat == "Memcpy") return TraceCategory::kMemcpy;
  if (cat == "gpu_memset" || cat == "Memset") return TraceCategory::kMemset;
  if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "Runtime" || cat == "Driver") {
    return TraceCategory::kApiCall;
  }
  return TraceCategory::kOther;
}

// "Memcpy HtoD (Pageable -> Device)" -> "HtoD".
std::string_view CuptiCopyKindFromName(std::string_view name) {
  constexpr std::string_view kPrefix = "Memcpy ";
  if (!name.starts_with(kPrefix)) return {};
  name.remove_prefix(kPrefix.size());
  return name.substr(0, name.find(' '));
}

// The API calls starting inside one of `ranges`, and the GPU activities they launched (matched
// by correlation id; an activity without one counts when it starts inside a range).
TimelineEvents RestrictToRanges(const TimelineEvents& events, const std::vector<Interval>& ranges) {
  auto inside = [&](double t) {
    return std::any_of(ranges.begin(), ranges.end(),
                       [&](const Interval& r) { return t >= r.start && t <= r.end; });
  };
  TimelineEvents kept;
  std::set<std::int64_t> correlations;
  for (const HostApiCall& call : events.api_calls) {
    if (!inside(call.start_us)) continue;
    kept.api_calls.push_back(call);
    if (call.correlation_id >= 0) correlations.insert(call.correlation_id);
  }
  for (const GpuActivity& activity : events.gpu) {
    if (activity.correlation_id >= 0 ? correlations.count(activity.correlation_id) > 0
                                     : inside(activity.start_us)) {
      kept.gpu.push_back(activity);
    }
  }
  return kept;
}

}  // namespace

Result<TimelineSummary> ParseTorchProfilerTrace(std::string_view json_text) {
  const Json trace = Json::parse(json_text.begin(), json_text.end(), /*cb=*/nullptr,
                                 /*allow_exceptions=*/false);
  if (trace.is_discarded()) {
    return Status::InvalidArgument("the profiler trace is not valid JSON (a truncated file?)");
  }
  const Json* trace_events = nullptr;
  if (trace.is_array()) {
    trace_events = &trace;
  } else if (trace.is_object()) {
    auto it = trace.find("traceEvents");
    if (it != trace.end() && it->is_array()) trace_events = &*it;
  }
  if (trace_events == nullptr) {
    return Status::InvalidArgument(
        "the profiler trace has no \"traceEvents\" array: is it a Chrome trace from "
        "torch.profiler's export_chrome_trace?");
  }

  TimelineEvents events;
  std::vector<Interval> ranges;  // kTraceRangeName annotations, relative to `origin`
  std::optional<double> origin;
  for (const Json& event : *trace_events) {
    if (!event.is_object() || StringField(event, "ph") != "X") continue;
    const std::string_view cat = StringField(event, "cat");
    const TraceCategory category = CategoryOf(cat);
    const bool is_range = cat == "user_annotation" && StringField(event, "name") == kTraceRangeName;
    if (category == TraceCategory::kOther && !is_range) continue;
    const std::optional<double> ts = NumberField(event, "ts");
    const std::optional<double> dur = NumberField(event, "dur");
    if (!ts || !dur || std::abs(*ts) > kMaxAbsTimeUs || *dur < 0 || *dur > kMaxAbsTimeUs) {
      continue;
    }
    if (!origin) origin = *ts;
    // Subtracting first keeps the nanosecond digits that ts + dur would round away.
    const double start = *ts - *origin;
    const double end = start + *dur;
    if (!ValidInterval(start, end)) continue;
    if (is_range) {
      ranges.push_back({start, end});
      continue;
    }

    std::int64_t correlation = -1;
    std::int64_t bytes = 0;
    auto args = event.find("args");
    if (args != event.end() && args->is_object()) {
      correlation = IntegerField(*args, "correlation").value_or(-1);
      bytes = std::max<std::int64_t>(IntegerField(*args, "bytes").value_or(0), 0);
    }
    const std::string_view name = StringField(event, "name");
    switch (category) {
      case TraceCategory::kApiCall:
        events.api_calls.push_back({std::string(name), start, end, correlation});
        break;
      case TraceCategory::kKernel:
        events.gpu.push_back({GpuActivity::Kind::kKernel, start, end, correlation, "", 0});
        break;
      case TraceCategory::kMemcpy:
        events.gpu.push_back({GpuActivity::Kind::kMemcpy, start, end, correlation,
                              CopyDirection(CuptiCopyKindFromName(name)), bytes});
        break;
      case TraceCategory::kMemset:
        events.gpu.push_back({GpuActivity::Kind::kMemset, start, end, correlation, "", bytes});
        break;
      case TraceCategory::kOther:
        break;
    }
  }
  if (events.gpu.empty()) {
    return Status::InvalidArgument(
        "the trace has no GPU activity: was it recorded with ProfilerActivity.CUDA?");
  }
  if (!ranges.empty()) events = RestrictToRanges(events, ranges);
  return SummarizeTimeline("torch_profiler", events);
}

Result<TimelineSummary> ParseTorchProfilerTraceFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open profiler trace " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  Result<TimelineSummary> summary = ParseTorchProfilerTrace(buffer.str());
  if (!summary.ok()) {
    return Status::InvalidArgument(path + ": " + summary.status().message());
  }
  return summary;
}

// ---- Nsight Systems SQLite exports ----------------------------------------------------------

#ifdef KERNELPRO_HAVE_SQLITE

namespace {

// CUpti_ActivityMemcpyKind, the integer nsys stores in copyKind.
std::string CopyDirection(std::int64_t cupti_kind) {
  static constexpr std::string_view kNames[] = {"",     "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                                "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
  if (cupti_kind < 0 || cupti_kind >= static_cast<std::int64_t>(std::size(kNames))) {
    return "other";
  }
  return CopyDirection(kNames[cupti_kind]);
}

struct SqliteCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct StatementFinalizer {
  void operator()(sqlite3_stmt* statement) const { sqlite3_finalize(statement); }
};
using SqliteDb = std::unique_ptr<sqlite3, SqliteCloser>;
using SqliteStatement = std::unique_ptr<sqlite3_stmt, StatementFinalizer>;

// A row as read, before times are rebased; columns past start/end depend on the table.
struct NsysRow {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t correlation_id = -1;
  std::int64_t bytes = 0;
  std::int64_t copy_kind = 0;
  std::string name;
};

std::optional<std::int64_t> ColumnInteger(sqlite3_stmt* statement, int column) {
  if (sqlite3_column_type(statement, column) != SQLITE_INTEGER) return std::nullopt;
  return sqlite3_column_int64(statement, column);
}

// Runs `sql` and reads its rows: columns 0 and 1 are start and end (rows where either is not an
// integer are skipped); further columns are read by `read_rest`.
template <typename ReadRest>
Status ReadRows(sqlite3* db, const std::string& path, const char* sql, ReadRest read_rest,
                std::vector<NsysRow>* rows) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &raw, nullptr) != SQLITE_OK) {
    return Status::InvalidArgument(path + " does not have the tables of an nsys SQLite export (" +
                                   sqlite3_errmsg(db) + ")");
  }
  SqliteStatement statement(raw);
  int rc;
  while ((rc = sqlite3_step(statement.get())) == SQLITE_ROW) {
    const std::optional<std::int64_t> start = ColumnInteger(statement.get(), 0);
    const std::optional<std::int64_t> end = ColumnInteger(statement.get(), 1);
    if (!start || !end || *end < *start) continue;
    NsysRow row;
    row.start_ns = *start;
    row.end_ns = *end;
    read_rest(statement.get(), &row);
    rows->push_back(std::move(row));
  }
  if (rc != SQLITE_DONE) {
    return Status::InvalidArgument("cannot read " + path + ": " + sqlite3_errmsg(db));
  }
  return Status::Ok();
}

Result<std::set<std::string>> TableNames(sqlite3* db, const std::string& path) {
  std::set<std::string> names;
  sqlite3_stmt* raw = nullptr;
  const char* sql = "SELECT name FROM sqlite_master WHERE type = 'table' OR type = 'view'";
  if (sqlite3_prepare_v2(db, sql, -1, &raw, nullptr) != SQLITE_OK) {
    return Status::InvalidArgument(path + " is not an SQLite database (" + sqlite3_errmsg(db) +
                                   ")");
  }
  SqliteStatement statement(raw);
  int rc;
  while ((rc = sqlite3_step(statement.get())) == SQLITE_ROW) {
    const unsigned char* text = sqlite3_column_text(statement.get(), 0);
    if (text != nullptr) names.insert(reinterpret_cast<const char*>(text));
  }
  if (rc != SQLITE_DONE) {
    return Status::InvalidArgument(path + " is not an SQLite database (" + sqlite3_errmsg(db) +
                                   ")");
  }
  return names;
}

// Nanoseconds since the origin, in microseconds. The difference is taken in 128 bits because
// nsys may store absolute times (~1.7e18 ns) that a double cannot hold to the nanosecond.
double RebasedUs(std::int64_t ns, std::int64_t origin_ns) {
  return static_cast<double>(static_cast<__int128>(ns) - origin_ns) / 1000.0;
}

}  // namespace

Result<TimelineSummary> ParseNsysSqlite(const std::string& path) {
  sqlite3* raw_db = nullptr;
  const int open_rc = sqlite3_open_v2(path.c_str(), &raw_db, SQLITE_OPEN_READONLY, nullptr);
  SqliteDb db(raw_db);  // closes even a handle whose open failed, as SQLite asks
  if (open_rc != SQLITE_OK) {
    return Status::NotFound("cannot open nsys export " + path + ": " +
                            (raw_db != nullptr ? sqlite3_errmsg(raw_db) : "out of memory"));
  }
  Result<std::set<std::string>> tables = TableNames(db.get(), path);
  if (!tables.ok()) return tables.status();
  auto has = [&](const char* table) { return tables->count(table) > 0; };

  auto read_correlation = [](sqlite3_stmt* s, NsysRow* row) {
    row->correlation_id = ColumnInteger(s, 2).value_or(-1);
  };
  auto read_copy = [](sqlite3_stmt* s, NsysRow* row) {
    row->correlation_id = ColumnInteger(s, 2).value_or(-1);
    row->bytes = std::max<std::int64_t>(ColumnInteger(s, 3).value_or(0), 0);
    row->copy_kind = ColumnInteger(s, 4).value_or(0);
  };
  auto read_call = [](sqlite3_stmt* s, NsysRow* row) {
    row->correlation_id = ColumnInteger(s, 2).value_or(-1);
    const unsigned char* text = sqlite3_column_text(s, 3);
    if (text != nullptr) row->name = reinterpret_cast<const char*>(text);
  };

  std::vector<NsysRow> kernels, memcpys, memsets, calls;
  Status status;
  if (status.ok() && has("CUPTI_ACTIVITY_KIND_KERNEL")) {
    status =
        ReadRows(db.get(), path, "SELECT start, end, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL",
                 read_correlation, &kernels);
  }
  if (status.ok() && has("CUPTI_ACTIVITY_KIND_MEMCPY")) {
    status = ReadRows(db.get(), path,
                      "SELECT start, end, correlationId, bytes, copyKind "
                      "FROM CUPTI_ACTIVITY_KIND_MEMCPY",
                      read_copy, &memcpys);
  }
  if (status.ok() && has("CUPTI_ACTIVITY_KIND_MEMSET")) {
    status = ReadRows(db.get(), path,
                      "SELECT start, end, correlationId, bytes, 0 FROM CUPTI_ACTIVITY_KIND_MEMSET",
                      read_copy, &memsets);
  }
  if (status.ok() && has("CUPTI_ACTIVITY_KIND_RUNTIME")) {
    // Without StringIds the calls still bound the window; they just cannot be recognised as syncs.
    const char* sql = has("StringIds") ? "SELECT r.start, r.end, r.correlationId, s.value "
                                         "FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r "
                                         "LEFT JOIN StringIds AS s ON s.id = r.nameId"
                                       : "SELECT start, end, correlationId, NULL "
                                         "FROM CUPTI_ACTIVITY_KIND_RUNTIME";
    status = ReadRows(db.get(), path, sql, read_call, &calls);
  }
  if (!status.ok()) return status;
  if (kernels.empty() && memcpys.empty() && memsets.empty()) {
    return Status::InvalidArgument(
        "the nsys export " + path +
        " has no GPU activity: was it recorded with CUDA tracing on (nsys profile --trace=cuda)?");
  }

  std::int64_t origin_ns = std::numeric_limits<std::int64_t>::max();
  for (const std::vector<NsysRow>* table : {&kernels, &memcpys, &memsets, &calls}) {
    for (const NsysRow& row : *table) origin_ns = std::min(origin_ns, row.start_ns);
  }
  TimelineEvents events;
  for (const NsysRow& row : kernels) {
    events.gpu.push_back({GpuActivity::Kind::kKernel, RebasedUs(row.start_ns, origin_ns),
                          RebasedUs(row.end_ns, origin_ns), row.correlation_id, "", 0});
  }
  for (const NsysRow& row : memcpys) {
    events.gpu.push_back({GpuActivity::Kind::kMemcpy, RebasedUs(row.start_ns, origin_ns),
                          RebasedUs(row.end_ns, origin_ns), row.correlation_id,
                          CopyDirection(row.copy_kind), row.bytes});
  }
  for (const NsysRow& row : memsets) {
    events.gpu.push_back({GpuActivity::Kind::kMemset, RebasedUs(row.start_ns, origin_ns),
                          RebasedUs(row.end_ns, origin_ns), row.correlation_id, "", row.bytes});
  }
  for (const NsysRow& row : calls) {
    events.api_calls.push_back({row.name, RebasedUs(row.start_ns, origin_ns),
                                RebasedUs(row.end_ns, origin_ns), row.correlation_id});
  }
  return SummarizeTimeline("nsys", events);
}

#else  // !KERNELPRO_HAVE_SQLITE

Result<TimelineSummary> ParseNsysSqlite(const std::string& path) {
  return Status::Unavailable("cannot read the nsys export " + path +
                             ": kernelpro was built without SQLite (install libsqlite3-dev and "
                             "rebuild), or use a PyTorch profiler trace");
}

#endif  // KERNELPRO_HAVE_SQLITE

}  // namespace kernelpro::profile
