#include "core/enum_names.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <utility>

namespace kernelpro {
namespace core_enum_names_test {

enum class Fruit { kApple, kPear, kPlum };

constexpr std::array<std::pair<Fruit, const char*>, 2> kFruitNames = {
    {{Fruit::kApple, "apple"}, {Fruit::kPear, "pear"}}};

TEST(EnumNamesTest, NamesAValueAndReadsItBack) {
  EXPECT_STREQ(NameOf(kFruitNames, Fruit::kPear), "pear");
  EXPECT_EQ(ValueOf(kFruitNames, "apple"), Fruit::kApple);
  EXPECT_EQ(ValueOf(kFruitNames, std::string("pear")), Fruit::kPear);
}

TEST(EnumNamesTest, UnknownValuesAndNamesAreNotGuessed) {
  EXPECT_STREQ(NameOf(kFruitNames, Fruit::kPlum), "?");
  EXPECT_EQ(ValueOf(kFruitNames, "Apple"), std::nullopt);  // case matters
  EXPECT_EQ(ValueOf(kFruitNames, ""), std::nullopt);
}

TEST(EnumNamesTest, ListsTheNamesInTableOrder) { EXPECT_EQ(NameList(kFruitNames), "apple, pear"); }

}  // namespace core_enum_names_test
}  // namespace kernelpro
