// Runs fn(0) ... fn(count - 1) on up to `threads` threads at once and returns when all are done:
// the plain way to overlap a few slow, independent calls (profiles on several GPUs). Items are
// taken in index order as threads free up. fn must not throw; it is called concurrently, so what
// it touches must allow that (write each result into its own slot).
#pragma once

#include <cstddef>
#include <functional>

namespace kernelpro {

void ParallelFor(std::size_t count, std::size_t threads,
                 const std::function<void(std::size_t)>& fn);

}  // namespace kernelpro
