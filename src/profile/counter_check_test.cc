// The rules that drop implausible counters, one test per rule, and the notes that name them.
#include "profile/counter_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kernelpro::profile {
namespace profile_counter_check_test {

constexpr char kDram[] = "dram__throughput.avg.pct_of_peak_sustained_elapsed";

TEST(CounterCheckTest, NaNAndInfinitiesAreNotMeasurements) {
  for (double value : {std::nan(""), std::numeric_limits<double>::infinity(),
                       -std::numeric_limits<double>::infinity()}) {
    EXPECT_EQ(ImplausibleCounterReason("dram__bytes_read.sum", "byte", value),
              "not a finite number")
        << value;
  }
  EXPECT_EQ(ImplausibleCounterReason("dram__bytes_read.sum", "byte", 1e12), std::nullopt);
}

TEST(CounterCheckTest, NegativeValuesAreDroppedButDevicePropertiesMayBeMinusOne) {
  EXPECT_EQ(ImplausibleCounterReason(kDram, "%", -5), "negative");
  EXPECT_EQ(ImplausibleCounterReason("gpu__time_duration.sum", "ns", -1), "negative");
  EXPECT_EQ(ImplausibleCounterReason("smsp__inst_executed.sum", "inst", -0.5), "negative");
  EXPECT_EQ(ImplausibleCounterReason(kDram, "%", 0), std::nullopt);
  // CUDA reports -1 for the NUMA id of a device on a host without NUMA.
  EXPECT_EQ(ImplausibleCounterReason("device__attribute_host_numa_id", "", -1), std::nullopt);
}

TEST(CounterCheckTest, PercentagesFarAbove100AreDroppedButPerUnitMaximaAreNot) {
  EXPECT_EQ(ImplausibleCounterReason("lts__t_sector_hit_rate.pct", "%", 102.13), std::nullopt)
      << "recorded on an H200: ncu's ratios overshoot 100 a little";
  EXPECT_EQ(ImplausibleCounterReason(kDram, "%", 110), std::nullopt);
  EXPECT_EQ(ImplausibleCounterReason(kDram, "%", 110.5), "above 110 %");
  EXPECT_EQ(ImplausibleCounterReason("lts__t_sector_hit_rate.pct", "%", 250), "above 110 %");
  EXPECT_EQ(
      ImplausibleCounterReason("sm__warps_active.max.pct_of_peak_sustained_active", "%", 298.42),
      std::nullopt)
      << "recorded on an H200: a per-unit maximum against the average unit's peak";
  // The same number in another unit is no percentage.
  EXPECT_EQ(ImplausibleCounterReason("launch__occupancy_limit_blocks", "block", 250), std::nullopt);
}

TEST(CounterCheckTest, ValuesOf2To63OrMoreAreWrappedAroundCounters) {
  // 2^64 - 5: an unsigned difference that went below zero.
  EXPECT_EQ(ImplausibleCounterReason("dram__bytes_read.sum", "byte", 18446744073709551611.0),
            "2^63 or more (a wrapped-around counter)");
  EXPECT_EQ(ImplausibleCounterReason("dram__bytes_read.sum", "byte", 9e18), std::nullopt);
}

TEST(CounterCheckTest, NotesNameEachDroppedMetricItsValueAndTheKernelsOnce) {
  DroppedCounters dropped;
  EXPECT_TRUE(dropped.empty());
  dropped.Add(kDram, "%", -5, "negative", "kernel 0 (copy)");
  dropped.Add(kDram, "%", -7, "negative", "kernel 1 (copy)");
  dropped.Add(kDram, "%", -9, "negative", "kernel 2 (copy)");
  dropped.Add("sm__warps_active.avg.pct_of_peak_sustained_active", "%", std::nan(""),
              "not a finite number", "kernel 1 (copy)");
  std::vector<std::string> notes = dropped.Notes();
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0],
            "dropped dram__throughput.avg.pct_of_peak_sustained_elapsed = -5 % (negative) in "
            "kernel 0 (copy) and 2 other kernel(s)");
  EXPECT_EQ(notes[1],
            "dropped sm__warps_active.avg.pct_of_peak_sustained_active = nan % (not a finite "
            "number) in kernel 1 (copy)");
  // Bounded: past the limit one note counts the rest.
  std::vector<std::string> few = dropped.Notes(1);
  ASSERT_EQ(few.size(), 2u);
  EXPECT_EQ(few[1], "dropped 1 more implausible metric(s)");
}

}  // namespace profile_counter_check_test
}  // namespace kernelpro::profile
