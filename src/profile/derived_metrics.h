// Metrics ncu derives from others, computed from those others when a profile has them but not the
// derived one: an ncu run given raw `--metrics` sums instead of a section's ratios, or an older
// recording. Eq. 4's r is exactly sectors / requests, so a profile with both sums has an energy
// proxy whether or not ncu printed the ratio. Only exact identities are derived:
//
//   l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_{ld,st}.ratio
//       = l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st}.sum / l1tex__t_requests_..._{ld,st}.sum
//   smsp__thread_inst_executed_per_inst_executed.ratio
//       = smsp__thread_inst_executed.sum / smsp__inst_executed.sum
//
// A value ncu reported is never replaced. Pure functions; safe from any thread.
#pragma once

#include <string>
#include <vector>

#include "profile/metrics.h"

namespace kernelpro::profile {

// Adds to `kernel` every metric above it lacks and can be derived from what it has; returns the
// names added.
std::vector<std::string> DeriveMissingMetrics(NcuKernel& kernel);

// The same over a view's kernels and its aggregate, with one note in view.notes per metric
// derived ("derived X from Y / Z: ncu did not report it").
void DeriveMissingMetrics(NcuView& view);

}  // namespace kernelpro::profile
