// One check for every number a user types (core/number_check.h): finite, in range, and a refusal
// that names the value and the range.
#include "core/number_check.h"

#include <gtest/gtest.h>

#include <string>

namespace kernelpro {
namespace core_number_check_test {

TEST(CheckNumberTest, NaNAndInfinitiesAreRefusedWhateverTheRange) {
  const NumberRange any;
  for (const char* text : {"nan", "NaN", "-nan", "inf", "-inf", "infinity", "1e999"}) {
    EXPECT_EQ(CheckNumber(text, any),
              "'" + std::string(text) + "' is not accepted: give a " + "finite number")
        << text;
  }
  EXPECT_EQ(CheckNumber("-3.5", any), "");
  EXPECT_EQ(CheckNumber("+2e3", any), "");
}

TEST(CheckNumberTest, TheMessageNamesTheValueAndTheRange) {
  EXPECT_EQ(CheckNumber("-1", {.min = 0}), "'-1' is not accepted: give a finite number >= 0");
  EXPECT_EQ(CheckNumber("0", {.min = 0, .max = 86400, .min_exclusive = true}),
            "'0' is not accepted: give a finite number > 0 and <= 86400");
  EXPECT_EQ(CheckNumber("0.5", {.min = 0, .max = 86400, .min_exclusive = true}), "");
  EXPECT_EQ(CheckNumber("1001", {.min = 1, .max = 1000, .whole = true}),
            "'1001' is not accepted: give a whole number from 1 to 1000");
  EXPECT_EQ(CheckNumber("2.5", {.min = 1, .max = 1000, .whole = true}),
            "'2.5' is not accepted: give a whole number from 1 to 1000");
  EXPECT_EQ(CheckNumber("12x", {.min = 1, .max = 1000, .whole = true}),
            "'12x' is not accepted: give a whole number from 1 to 1000");
  EXPECT_EQ(CheckNumber("", {.min = 0}), "'' is not accepted: give a finite number >= 0");
  EXPECT_EQ(CheckNumber("1000", {.min = 1, .max = 1000, .whole = true}), "");
}

}  // namespace core_number_check_test
}  // namespace kernelpro
