#include "eval/step_costs.h"

#include <gtest/gtest.h>

namespace kernelpro::eval {
namespace eval_step_costs_test {

constexpr long long kGiB = 1LL << 30;

Json Reply(double peak_gib, double free_gib, double seconds = 0.5, double total_gib = 79.18) {
  return Json{{"status", "ok"},
              {"seconds", seconds},
              {"device_memory",
               {{"peak_reserved_bytes", static_cast<long long>(peak_gib * kGiB)},
                {"peak_allocated_bytes", static_cast<long long>(peak_gib * kGiB)},
                {"free_bytes", static_cast<long long>(free_gib * kGiB)},
                {"total_bytes", static_cast<long long>(total_gib * kGiB)}}}};
}

TEST(StepCostsTest, EachProcessAndStepKeepsItsLargestPeakItsSecondsAndTheLeastFreeMemory) {
  StepCosts costs;
  costs.Add("referee", "reference", Reply(4.2, 60, 6.7));
  costs.Add("candidate", "check", Reply(5.1, 1.37, 0.9));
  costs.Add("candidate", "check", Reply(3.0, 20, 0.3));  // a second check: the peak stays
  costs.Add("candidate", "time", Reply(2.0, 30, 1.2));
  costs.Add("candidate", "load", Json{{"status", "ok"}, {"seconds", 0.4}});  // not on the GPU
  Json peaks = PeakDeviceBytesJson(costs);
  EXPECT_EQ(peaks["referee"]["reference"], static_cast<long long>(4.2 * kGiB));
  EXPECT_EQ(peaks["candidate"]["check"], static_cast<long long>(5.1 * kGiB));
  EXPECT_EQ(peaks["candidate"]["time"], 2 * kGiB);
  EXPECT_FALSE(peaks["candidate"].contains("load"));
  EXPECT_EQ(peaks["min_free_bytes"], static_cast<long long>(1.37 * kGiB));
  EXPECT_EQ(costs.PeakOf("candidate"), static_cast<long long>(5.1 * kGiB));
  Json seconds = StepSecondsJson(costs);
  EXPECT_DOUBLE_EQ(seconds["candidate"]["check"].get<double>(), 1.2);
  EXPECT_DOUBLE_EQ(seconds["candidate"]["load"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(seconds["referee"]["reference"].get<double>(), 6.7);
  EXPECT_EQ(DeviceMemoryLine(costs),
            "memory      peak on the device: referee 4.20 GiB (reference), candidate 5.10 GiB "
            "(check); 1.37 GiB of 79.18 GiB free at the least\n");
}

TEST(StepCostsTest, SmallOrNoUseSaysNothingInTheTextAndNullInJson) {
  StepCosts cpu;
  cpu.Add("candidate", "check", Json{{"status", "ok"}, {"device_memory", nullptr}});
  EXPECT_TRUE(PeakDeviceBytesJson(cpu).is_null());
  EXPECT_EQ(DeviceMemoryLine(cpu), "");
  EXPECT_EQ(StepSecondsJson(cpu), Json::object());
  StepCosts small;
  small.Add("referee", "reference", Reply(0.2, 70));
  small.Add("candidate", "time", Reply(0.3, 70));
  EXPECT_EQ(DeviceMemoryLine(small), "");
  EXPECT_FALSE(PeakDeviceBytesJson(small).is_null());
}

}  // namespace eval_step_costs_test
}  // namespace kernelpro::eval
