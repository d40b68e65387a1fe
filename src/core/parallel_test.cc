// ParallelFor: every index exactly once, and no more threads at once than asked for.
#include "core/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace kernelpro {
namespace core_parallel_test {

TEST(ParallelForTest, CallsEveryIndexOnce) {
  std::vector<std::atomic<int>> calls(37);
  ParallelFor(calls.size(), 4, [&](std::size_t i) { ++calls[i]; });
  for (const auto& c : calls) EXPECT_EQ(c.load(), 1);
}

TEST(ParallelForTest, NeverRunsMoreThanTheThreadsAskedFor) {
  std::atomic<int> running{0}, most{0};
  ParallelFor(12, 3, [&](std::size_t) {
    const int now = ++running;
    int seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    --running;
  });
  EXPECT_LE(most.load(), 3);
  EXPECT_GE(most.load(), 1);
}

TEST(ParallelForTest, NothingToDoReturnsAtOnce) {
  int calls = 0;
  ParallelFor(0, 8, [&](std::size_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

}  // namespace core_parallel_test
}  // namespace kernelpro
