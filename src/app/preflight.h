// What a run checks before it creates or touches its directory (app/new_run.h: CheckNewRun, and
// `kernelpro resume`), so that a run that cannot work stops at once, with one line naming the fix,
// and leaves nothing behind that a retry would trip over (a half-made run.db, a directory that
// "already holds a run"):
//   - the cost limit: a --max-cost the model's price can ever reach;
//   - the LLM: the API key or credentials the provider needs are set (their values are never
//     printed), a replay cassette can be read, and a live server answers at all;
//   - the device: with --device cuda, the worker sees a CUDA GPU (the first of --gpus).
// Each check is quick (a GET with a short timeout; one worker step importing torch) and touches
// no run directory.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "llm/config.h"

namespace kernelpro::app {

// Whether a cost limit (--max-cost) can ever be reached with `config`: only when the model has a
// price. A replayed model costs nothing, and a model without a price is counted at $0, so the
// limit would silently never stop the run; InvalidArgument then says why and what to give.
Status CheckCostLimitReachable(const llm::LlmConfig& config);

// InvalidArgument for a missing key, credentials or an unreadable cassette (the factory's own
// message, "anthropic: set ANTHROPIC_API_KEY"); Unavailable when the server does not answer.
Status CheckLlmReady(const llm::LlmConfig& config);

// OK on cpu. On cuda: Unavailable "no CUDA GPU found: use --device cpu, or run on a machine with a
// GPU" when the worker (`python`, "" = the default interpreter) sees none, or the worker's own
// reason when it cannot start (no torch). `gpus`: --gpus as given; the first is the one checked.
Status CheckDeviceReady(const std::string& device, const std::string& python,
                        const std::vector<std::string>& gpus);

}  // namespace kernelpro::app
