// Reading Nsight Compute's CSV output into an NcuView (profile/metrics.h).
//
// Input is what `ncu --csv --page raw --print-units base` writes to stdout:
//
//   ==PROF== Connected to process 2688 (/usr/bin/python3.12)     <- profiler messages, any number
//   "ID","Process ID",...,"Kernel Name",...,"Block Size","Grid Size",...,"dram__bytes_read.sum",...
//   "","",...,"byte",...                                         <- units row
//   "0","2688",...,"naive_matmul(const float *, ...)",...,"16,784,128",...   <- one row per launch
//
// Values may carry thousands separators inside quotes ("1,234,567"), be "n/a" or empty (then the
// metric is absent from NcuKernel::values), and kernel names contain quoted commas. Values that
// cannot be measurements (NaN, negative, a percentage far above 100; profile/counter_check.h) are
// dropped as well, with a note in NcuView::notes naming each one. Units are
// normalised to base units in case ncu ran without --print-units base ("usecond" -> "nsecond",
// "Mbyte" -> "byte", "Ghz" -> "hz"). Lines the profiled program printed before the header are
// ignored. Every metric column that parses as a number is kept (device__attribute_* included),
// not only the catalog's.
//
// The reader streams: it holds one row at a time and aggregates as it goes, so its memory does not
// grow with the counters of every launch. Every kernel keeps its identity and duration; only the
// longest `max_detailed_kernels` keep every counter (a note says so when others were cut). The
// aggregate always covers every kernel kept. `collect --json` of a 10,000-kernel profile takes
// 0.6 s and 86 MB at peak on 2 cores (bench/large_profile_bench.cc).
//
// Failures are values. When no kernel row can be read: a counter-permission error
// (ERR_NVGPUCTRPERM) is Unavailable, ncu's "No kernels were profiled" is NotFound, anything else
// is InvalidArgument (quoting ncu's first ==ERROR== line, if any). Rows that are truncated or
// malformed are skipped with a note in NcuView::warnings, which also keeps ncu's ==WARNING== and
// ==ERROR== lines verbatim. The parser never throws and never reads out of bounds, whatever the
// bytes. Stateless; safe from any thread.
//
// The reading is in three files: CSV records and line sources (profile/csv_record.h), the running
// aggregate and the bound on detailed kernels (profile/ncu_aggregate.h, internal), and ncu's
// columns, units, messages and failures (ncu_csv.cc).
#pragma once

#include <cstddef>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "profile/csv_record.h"
#include "profile/metrics.h"

namespace kernelpro::profile {

struct NcuReadOptions {
  // Keep only the candidate's kernels while reading, by SelectCandidateKernels' rule
  // (profile/ncu_runner.h): its own entry kernels (mangled names), and the longest others when none
  // of those ran or it calls a library. Off: every kernel is kept.
  bool select_candidate_kernels = false;
  std::vector<std::string> entry_points;
  bool calls_libraries = false;
  // Kernels beyond this many (the longest are kept whole) keep their id, name, launch shape and
  // duration only: a profile of 10,000 launches x 400 counters would otherwise take gigabytes.
  std::size_t max_detailed_kernels = 100;
};

// Parses ncu's CSV (see above), reading `in` line by line. The aggregate is the one
// AggregateKernels would give over the kernels kept, with every counter of every one of them.
Result<NcuView> ReadNcuCsv(std::istream& in, const NcuReadOptions& options = {});
// The same over text already in memory (ncu's stdout), without copying it.
Result<NcuView> ParseNcuCsv(std::string_view text, const NcuReadOptions& options = {});

// Combines kernels into one: catalog "sum" metrics (and unknown counters) add up; "mean" metrics
// (percentages, ratios, rates, launch properties) are averaged weighted by each kernel's
// gpu__time_duration.sum, so a 2 ms kernel counts 1000 times as much as a 2 us one. Kernels
// without a duration weigh nothing, unless none has one: then every kernel weighs the same.
// A metric missing from some kernels is combined over the kernels that have it. The result is
// named "aggregate (N kernels)", has id -1, and keeps block and grid sizes only when all agree.
NcuKernel AggregateKernels(const std::vector<NcuKernel>& kernels);

// ---- Lower-level pieces, public for tests and for other CSV readers ---------------------------
// (The CSV records themselves, NextCsvRecord and SplitCsv, are in profile/csv_record.h.)

// A value cell as a double: "1,234,567.5" -> 1234567.5; "n/a", "", non-numbers and non-finite
// values -> nullopt.
std::optional<double> ParseNcuNumber(std::string_view cell);

}  // namespace kernelpro::profile
