#include "eval/gpu_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <set>
#include <thread>
#include <vector>

namespace kernelpro::eval {
namespace eval_gpu_pool_test {

using namespace std::chrono_literals;

TEST(GpuPoolTest, AnEmptyListIsOneDefaultSlotWithoutEnvironment) {
  GpuPool pool;
  ASSERT_EQ(pool.size(), 1u);
  GpuPool::Lease lease = pool.Acquire();
  EXPECT_TRUE(lease.held());
  EXPECT_EQ(lease.gpu(), "");
  EXPECT_TRUE(lease.Env().empty());
  EXPECT_FALSE(pool.TryAcquire().has_value());  // the one slot is taken
}

TEST(GpuPoolTest, LeasesAreExclusiveAndNameTheirDevice) {
  GpuPool pool({"0", "3"});
  GpuPool::Lease a = pool.Acquire();
  GpuPool::Lease b = pool.Acquire();
  EXPECT_EQ(a.gpu(), "0");  // free GPUs are handed out in list order
  EXPECT_EQ(b.gpu(), "3");
  EXPECT_EQ(b.Env().at("CUDA_VISIBLE_DEVICES"), "3");
  EXPECT_EQ(pool.free_count(), 0u);
  EXPECT_FALSE(pool.TryAcquire().has_value());
}

TEST(GpuPoolTest, ALeaseIsReleasedWhenDestroyedOrMovedOut) {
  GpuPool pool({"0"});
  {
    GpuPool::Lease lease = pool.Acquire();
    EXPECT_EQ(pool.free_count(), 0u);
  }
  EXPECT_EQ(pool.free_count(), 1u);
  GpuPool::Lease first = pool.Acquire();
  GpuPool::Lease moved = std::move(first);
  EXPECT_FALSE(first.held());  // NOLINT: testing the moved-from state
  EXPECT_TRUE(moved.held());
  EXPECT_EQ(pool.free_count(), 0u);
  moved.Release();
  moved.Release();  // idempotent
  EXPECT_EQ(pool.free_count(), 1u);
  auto again = pool.TryAcquire();
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->gpu(), "0");
}

TEST(GpuPoolTest, AFreedGpuIsHandedToAWaiter) {
  GpuPool pool({"0", "1"});
  GpuPool::Lease a = pool.Acquire();
  GpuPool::Lease b = pool.Acquire();
  auto waiter = std::async(std::launch::async, [&] { return pool.Acquire().gpu(); });
  EXPECT_EQ(waiter.wait_for(100ms), std::future_status::timeout);  // both are leased
  b.Release();
  ASSERT_EQ(waiter.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(waiter.get(), "1");
}

TEST(GpuPoolTest, NoTwoThreadsEverHoldTheSameGpu) {
  GpuPool pool({"0", "1", "2"});
  std::atomic<int> holders[3] = {0, 0, 0};
  std::atomic<int> overlaps{0}, concurrent{0}, most{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        GpuPool::Lease lease = pool.Acquire();
        int slot = std::stoi(lease.gpu());
        if (holders[slot].fetch_add(1) != 0) ++overlaps;
        int now = ++concurrent;
        for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
        }
        std::this_thread::sleep_for(100us);
        --concurrent;
        holders[slot].fetch_sub(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_LE(most.load(), 3);
  EXPECT_EQ(pool.free_count(), 3u);
}

}  // namespace eval_gpu_pool_test
}  // namespace kernelpro::eval
