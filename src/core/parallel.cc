#include "core/parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace kernelpro {

void ParallelFor(std::size_t count, std::size_t threads,
                 const std::function<void(std::size_t)>& fn) {
  threads = std::clamp<std::size_t>(threads, 1, std::max<std::size_t>(count, 1));
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i; (i = next++) < count;) fn(i);
  };
  if (threads == 1) {
    work();
    return;
  }
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(work);
  for (std::thread& t : pool) t.join();
}

}  // namespace kernelpro
