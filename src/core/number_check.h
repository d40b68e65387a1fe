// CheckNumber: whether a number given as text is a finite number within a range, and if not, why,
// in one phrase a message can carry ("'nan' is not accepted: give a finite number >= 0"). CLI11
// lets "nan" through its ranges (every comparison with NaN is false) and "inf" makes a timeout
// never fire; the command line's numeric options (cli/common.h) and the tools' --threshold values
// (tools/tool_config.h) are checked by it.
#pragma once

#include <limits>
#include <string>

namespace kernelpro {

struct NumberRange {
  double min = std::numeric_limits<double>::lowest();
  double max = std::numeric_limits<double>::max();
  bool min_exclusive = false;  // (min, max]: a duration or a budget must be more than 0
  bool whole = false;          // counts: whole numbers only
};

// "" when `text` is a number within `range`; otherwise why not, naming the value and the range.
std::string CheckNumber(const std::string& text, const NumberRange& range);

// ">= 0", "from 1 to 1000", "> 0 and <= 86400": the accepted values, for messages and --help;
// "" for no bounds.
std::string BoundsText(const NumberRange& range);

}  // namespace kernelpro
