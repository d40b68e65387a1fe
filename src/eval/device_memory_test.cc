#include "eval/device_memory.h"

#include <gtest/gtest.h>

namespace kernelpro::eval {
namespace {

constexpr long long kGiB = 1LL << 30;

Json Reply(double peak_gib, double free_gib, double total_gib = 79.18) {
  return Json{{"peak_reserved_bytes", static_cast<long long>(peak_gib * kGiB)},
              {"peak_allocated_bytes", static_cast<long long>(peak_gib * kGiB)},
              {"free_bytes", static_cast<long long>(free_gib * kGiB)},
              {"total_bytes", static_cast<long long>(total_gib * kGiB)}};
}

TEST(DeviceMemoryTest, EachProcessAndStepKeepsItsLargestPeakAndTheLeastFreeMemory) {
  DeviceMemory memory;
  memory.Add("referee", "reference", Reply(4.2, 60));
  memory.Add("candidate", "check", Reply(5.1, 1.37));
  memory.Add("candidate", "check", Reply(3.0, 20));  // a second check: the peak stays
  memory.Add("candidate", "time", Reply(2.0, 30));
  memory.Add("candidate", "load", nullptr);  // nothing ran on the GPU
  Json j = DeviceMemoryJson(memory);
  EXPECT_EQ(j["referee"]["reference"], static_cast<long long>(4.2 * kGiB));
  EXPECT_EQ(j["candidate"]["check"], static_cast<long long>(5.1 * kGiB));
  EXPECT_EQ(j["candidate"]["time"], 2 * kGiB);
  EXPECT_FALSE(j["candidate"].contains("load"));
  EXPECT_EQ(j["min_free_bytes"], static_cast<long long>(1.37 * kGiB));
  EXPECT_EQ(memory.PeakOf("candidate"), static_cast<long long>(5.1 * kGiB));
  EXPECT_EQ(DeviceMemoryLine(memory),
            "memory      peak on the device: referee 4.20 GiB (reference), candidate 5.10 GiB "
            "(check); 1.37 GiB of 79.18 GiB free at the least\n");
}

TEST(DeviceMemoryTest, SmallOrNoUseSaysNothingInTheTextAndNullInJson) {
  DeviceMemory cpu;
  cpu.Add("candidate", "check", Json(nullptr));
  EXPECT_TRUE(DeviceMemoryJson(cpu).is_null());
  EXPECT_EQ(DeviceMemoryLine(cpu), "");
  DeviceMemory small;
  small.Add("referee", "reference", Reply(0.2, 70));
  small.Add("candidate", "time", Reply(0.3, 70));
  EXPECT_EQ(DeviceMemoryLine(small), "");
  EXPECT_FALSE(DeviceMemoryJson(small).is_null());
}

}  // namespace
}  // namespace kernelpro::eval
