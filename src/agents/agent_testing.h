// What the agent tests share: a backend that passes requests on and keeps a copy (to check what an
// agent sent), and replay of the hand-written cassettes in tests/fixtures/cassettes. Test-only.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "llm/backend.h"
#include "llm/cassette.h"

namespace kernelpro::agents::testing {

class SpyBackend : public llm::Backend {
 public:
  explicit SpyBackend(std::unique_ptr<llm::Backend> inner) : inner_(std::move(inner)) {}
  std::string provider() const override { return inner_->provider(); }
  std::string model() const override { return inner_->model(); }
  llm::Outcome Complete(const llm::Request& request) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(request);
    }
    return inner_->Complete(request);
  }
  std::vector<llm::Request> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  std::unique_ptr<llm::Backend> inner_;
  mutable std::mutex mu_;
  std::vector<llm::Request> requests_;
};

// tests/fixtures/cassettes/<name>, served in file order (their requests are abbreviated).
inline std::unique_ptr<SpyBackend> ReplayCassette(const std::string& name) {
  auto replay = llm::MakeReplayBackend(
      std::string(KERNELPRO_SOURCE_DIR) + "/tests/fixtures/cassettes/" + name,
      llm::ReplayMode::kSequential);
  EXPECT_TRUE(replay.ok()) << replay.status().ToString();
  return std::make_unique<SpyBackend>(std::move(*replay));
}

}  // namespace kernelpro::agents::testing
