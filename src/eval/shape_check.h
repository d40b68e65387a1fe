// Shape generality: whether a candidate that is correct on the benchmark's inputs is also correct
// on input shapes the benchmark never showed (python/kernelpro_worker/shapes.py makes them: the
// problem's get_input_variants(), or variants derived from its size constants). Each variant is
// checked like a trial, never timed: the referee computes its reference outputs in the reference
// step, the candidate's process runs a ModelNew built for it, the referee compares. A failure on
// a variant is recorded here, never an error of the evaluation.
//
// Without --require-shape-generality a candidate that fails a variant keeps its benchmark verdict
// (searched and timed as before) and the reports call it fixed-shape; with it, the verdict is
// incorrect with ShapeFailureText's message.
//
// Threading: plain values and functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"

namespace kernelpro::eval {

struct ShapeInputSpec {
  std::vector<long long> shape;
  std::string dtype;  // "float32"
};

// One variant's check.
struct ShapeVariantCheck {
  std::string label;  // "batch_size=8, dim=8193", or the problem's own label
  std::vector<std::optional<ShapeInputSpec>> inputs;  // none for an input that is not a tensor
  std::string status = "runtime_error";               // "correct", "incorrect", "runtime_error"
  std::string message;                                // why it failed; "" when correct
};

struct ShapeChecks {
  // "given", "derived" or "off": where the variants came from, as the reference step resolved
  // --shapes (auto: given when the problem has get_input_variants, derived otherwise).
  std::string mode = "off";
  std::vector<ShapeVariantCheck> checked;  // in the reference's order; empty: none checked

  bool AllCorrect() const;
  // The first variant that failed; none when all passed.
  std::optional<std::size_t> FirstFailure() const;
};

// {"mode", "all_correct", "checked": [{"label", "inputs": [{"shape", "dtype"} | null], "status",
// "message"}]}: the verdict JSON's "shapes" (another tool reads exactly this form).
Json ToJson(const ShapeChecks& shapes);
// ToJson's form back, forgivingly (missing fields keep their defaults).
ShapeChecks ShapeChecksFromJson(const Json& json);

// What `kernelpro eval` prints after a correct verdict's status when variants were checked,
// counting the benchmark as shape 1: "(all 3 shapes)", or "on the benchmark shape; fails shape 2
// of 3 (N=2048): max abs error 0.5". "" when none were checked.
std::string ShapeStatusText(const ShapeChecks& shapes);
// The message of a verdict made incorrect by --require-shape-generality: "correct on the
// benchmark shape; fails shape 2 of 3 (N=2048): ...". "" when every variant passed.
std::string ShapeFailureText(const ShapeChecks& shapes);
// For run and suite reports, from a stored verdict's "shapes" JSON: "shapes: 3/3" when every
// variant passed, "fixed-shape" when one failed, "" when none were checked (or not recorded).
std::string ShapeGeneralityText(const Json& shapes);

}  // namespace kernelpro::eval
