// What `kernelpro eval --json` prints for one candidate: its verdict (eval::ToJson) with the
// problem, the reference's facts, its program's files and, given a Stage-1 analysis, both timings'
// places on the roofline. One function, so that every caller that answers for `eval` (the
// command line, the evaluation server) answers with the same object.
#pragma once

#include <optional>

#include "core/json_io.h"
#include "eval/executor.h"
#include "roofline/reference_analysis.h"

namespace kernelpro::app {

// `result` is one of `report.results`; `build_only` marks a candidate that built "built" (no
// device step ran). `stage1`: the reference's analysis (`--analysis`), or none.
Json EvalResultJson(const eval::EvalReport& report, const eval::EvalResult& result,
                    const std::optional<roofline::ReferenceAnalysis>& stage1, bool build_only);

// "reaches 71 % of the attainable bound (...)" for a timing's median, when there is an analysis.
std::optional<roofline::RooflinePosition> RooflinePlace(
    const std::optional<roofline::ReferenceAnalysis>& stage1,
    const std::optional<eval::TimingSummary>& time);

}  // namespace kernelpro::app
