#include "eval/gpu_pool.h"

#include <utility>

namespace kernelpro::eval {

GpuPool::Lease::Lease(Lease&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)), slot_(other.slot_), gpu_(std::move(other.gpu_)) {}

GpuPool::Lease& GpuPool::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    Release();
    pool_ = std::exchange(other.pool_, nullptr);
    slot_ = other.slot_;
    gpu_ = std::move(other.gpu_);
  }
  return *this;
}

std::map<std::string, std::string> GpuPool::EnvFor(const std::string& gpu) {
  if (gpu.empty()) return {};
  return {{"CUDA_VISIBLE_DEVICES", gpu}};
}

std::map<std::string, std::string> GpuPool::Lease::Env() const { return EnvFor(gpu_); }

void GpuPool::Lease::Release() {
  if (GpuPool* pool = std::exchange(pool_, nullptr)) pool->Return(slot_);
}

GpuPool::GpuPool(std::vector<std::string> gpus)
    : gpus_(gpus.empty() ? std::vector<std::string>{""} : std::move(gpus)),
      busy_(gpus_.size(), false) {}

std::optional<std::size_t> GpuPool::TakeLocked() {
  for (std::size_t i = 0; i < busy_.size(); ++i) {
    if (!busy_[i]) {
      busy_[i] = true;
      return i;
    }
  }
  return std::nullopt;
}

GpuPool::Lease GpuPool::Acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  std::optional<std::size_t> slot;
  freed_.wait(lock, [&] { return (slot = TakeLocked()).has_value(); });
  return Lease(this, *slot, gpus_[*slot]);
}

std::optional<GpuPool::Lease> GpuPool::TryAcquire() {
  std::lock_guard<std::mutex> lock(mu_);
  auto slot = TakeLocked();
  if (!slot) return std::nullopt;
  return Lease(this, *slot, gpus_[*slot]);
}

std::size_t GpuPool::free_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::size_t n = 0;
  for (bool b : busy_) n += b ? 0 : 1;
  return n;
}

void GpuPool::Return(std::size_t slot) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    busy_[slot] = false;
  }
  freed_.notify_one();
}

}  // namespace kernelpro::eval
