// The check trials in batches, for outputs too large to cross to the referee all at once.
//
// A candidate's check outputs reach the referee as files (the referee never runs candidate code,
// the candidate's process never sees the expected outputs). For a KernelBench task whose output
// is 6 GiB, eight trials' files were 51 GB written and read back: past the kernel's dirty-page
// limit they went at disk speed, and they were most of the evaluation's time. In batches whose
// outputs stay under a bound, each batch is checked, compared and its files deleted before the
// next is made, so the files live in the page cache only. A problem whose outputs fit the bound
// together keeps one batch: one check request, one compare, as before.
//
// Threading: plain values and functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/json_io.h"

namespace kernelpro::eval {

// One call's outputs in bytes, from their metadata (the reference step's `outputs`: a list of
// {"shape": [...], "dtype": "torch.float32"}); a dtype torch does not have counts 8 bytes. The
// check's batches and the share of timed calls the referee verifies (timing_stats.h) both use it.
std::int64_t OutputBytes(const Json& outputs);

// `names` in order, cut into batches whose outputs (the refill's included, in the last batch)
// stay under `max_bytes`; every batch holds one trial at least. No names: one empty batch (the
// check request still runs, for the refill and the findings).
std::vector<std::vector<std::string>> CheckBatches(const Json& reference,
                                                   const std::vector<std::string>& names,
                                                   std::int64_t max_bytes);

}  // namespace kernelpro::eval
