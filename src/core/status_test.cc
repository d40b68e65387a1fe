#include "core/status.h"

#include <gtest/gtest.h>

namespace kernelpro {
namespace core_status_test {

TEST(StatusTest, OkByDefaultAndNamedErrorsCarryTheirMessage) {
  EXPECT_TRUE(Status().ok());
  Status s = Status::NotFound("problem file missing: p.py");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_EQ(s.ToString(), "NotFound: problem file missing: p.py");
}

TEST(StatusTest, ResultHoldsValueOrError) {
  Result<int> good = 7;
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 7);
  Result<int> bad = Status::Timeout("worker exceeded 60 s");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Status::Code::kTimeout);
}

}  // namespace core_status_test
}  // namespace kernelpro

#include "core/json_io.h"

namespace kernelpro {
namespace core_status_test {

TEST(JsonIoTest, DumpNeverThrowsOnInvalidUtf8) {
  Json j{{"name", std::string("kernel\xff\xfe")}};
  EXPECT_NO_THROW({
    std::string text = DumpJson(j);
    EXPECT_NE(text.find("kernel"), std::string::npos);
  });
}

}  // namespace core_status_test
}  // namespace kernelpro
