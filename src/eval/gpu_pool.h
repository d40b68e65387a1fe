// GpuPool: which GPU a device step runs on, handed out one holder at a time.
//
// The pool holds the GPUs given with --gpus, as device ordinals ("0", "1"); an empty list is one
// anonymous slot, the process's default device, so code that leases a GPU works unchanged without
// --gpus. Acquire() blocks until a GPU is free and returns a Lease; the GPU is free again when the
// Lease is destroyed (or moved from and then destroyed). A holder passes Lease::Env() to the worker
// process it starts (CUDA_VISIBLE_DEVICES=<ordinal>; nothing for the default slot), so each GPU
// runs the steps of one holder at a time: an evaluation and a profile never share a GPU.
//
// Thread-safe. A thread must not acquire a second lease while it holds one from the same pool
// (with one GPU that would wait for itself).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kernelpro::eval {

class GpuPool {
 public:
  class Lease {
   public:
    Lease() = default;  // holds nothing
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { Release(); }

    // The ordinal held ("1"), or "" for the default device.
    const std::string& gpu() const { return gpu_; }
    // The environment of a worker process that must run on this GPU.
    std::map<std::string, std::string> Env() const;
    bool held() const { return pool_ != nullptr; }
    // Gives the GPU back now (idempotent).
    void Release();

   private:
    friend class GpuPool;
    Lease(GpuPool* pool, std::size_t slot, std::string gpu)
        : pool_(pool), slot_(slot), gpu_(std::move(gpu)) {}
    GpuPool* pool_ = nullptr;
    std::size_t slot_ = 0;
    std::string gpu_;
  };

  // `gpus`: device ordinals, each at most once; empty: one slot for the default device.
  explicit GpuPool(std::vector<std::string> gpus = {});
  GpuPool(const GpuPool&) = delete;
  GpuPool& operator=(const GpuPool&) = delete;
  // Every lease must have been released.
  ~GpuPool() = default;

  // Waits for a free GPU and leases it; of several free ones, the first in list order.
  Lease Acquire();
  // A free GPU, or nothing when every one is leased.
  std::optional<Lease> TryAcquire();

  std::size_t size() const { return gpus_.size(); }
  // The environment of a worker process that must run on `gpu` ("" for the default device).
  static std::map<std::string, std::string> EnvFor(const std::string& gpu);
  // The only GPU of a one-GPU pool ("" for the default device).
  const std::string& only_gpu() const { return gpus_.front(); }
  std::size_t free_count() const;

 private:
  void Return(std::size_t slot);
  std::optional<std::size_t> TakeLocked();

  const std::vector<std::string> gpus_;
  mutable std::mutex mu_;
  std::condition_variable freed_;
  std::vector<bool> busy_;
};

}  // namespace kernelpro::eval
