// Truncation recovery (paper §3.2.2): what to do when a model runs out of output tokens.
//
// A reply cut off at the token limit (FinishReason::kLength) is usually useless to an agent: a
// half-written kernel or an unterminated JSON object. The decorator escalates in two steps. First
// it asks again with twice the max_tokens (capped), because the answer may simply need the room.
// If that is still cut off, it asks once more at that budget with a user directive to start over
// and answer concisely, because a model that keeps running out is usually rambling. If the third
// reply is still cut off, the result is a kTruncated error naming the budgets tried. Any other
// outcome (an answer, an error) is returned as soon as it arrives. The returned Response's usage,
// latency and attempts are summed over every attempt, so the tokens of discarded replies are
// still counted.
//
// Put this decorator outside the reliable client (client.h): each escalation is then retried on
// its own and reported to the exchange hook with its own tokens, including those of a final
// kTruncated failure, which carries no usage. Safe to call from several threads at once if the
// wrapped backend is.
#pragma once

#include <memory>
#include <string>

#include "llm/backend.h"

namespace kernelpro::llm {

// The directive of the last step. It asks for a restart rather than a continuation: the cut-off
// reply is not sent back (it would cost as many input tokens as it took to write), and a complete
// short answer is worth more to an agent than the tail of a long one.
inline constexpr char kConciseDirective[] =
    "Your previous answer was cut off at the token limit. Start over and answer concisely: give "
    "only what was asked for, skip restating the task and long explanations, and make sure any "
    "code or JSON you write is complete.";

struct RecoveryOptions {
  // The doubled max_tokens never exceeds this. A request already at or above it is not doubled;
  // recovery goes straight to the concise directive at the request's own budget.
  int max_tokens_cap = 32768;
  // Appended to the last user message of the last step (or sent as a new user message when the
  // conversation ends with tool results or an assistant turn).
  std::string concise_directive = kConciseDirective;
};

std::unique_ptr<Backend> MakeTruncationRecoveringBackend(std::unique_ptr<Backend> inner,
                                                         RecoveryOptions options = {});

}  // namespace kernelpro::llm
