// The journal's step life-cycle: a done step is never worked again, a failed step leaves no rows,
// and a fresh run continues from the same decoded payload a resumed one would.
#include "search/journal.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "llm/scripted_backend_testing.h"
#include "search/exchange_sink.h"

namespace kernelpro::search {
namespace search_journal_test {

namespace fs = std::filesystem;

class JournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/journal_test_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    auto store = store::RunStore::Open(dir_ + "/run");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
    store::RunRecord run;
    run.problem_path = "p.py";
    run.problem_hash = store::RunStore::Sha256Hex("p");
    run.kernelpro_version = "test";
    auto id = store_->CreateRun(run);
    ASSERT_TRUE(id.ok());
    run_id_ = *id;
  }
  void TearDown() override {
    store_.reset();
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  // A step that stores one candidate row and hands on its id.
  Result<std::int64_t> AddOne(Journal& journal, int iteration, int& work_calls,
                              Status fail_work = Status::Ok()) {
    return journal.RunStep(
        journal.Key(iteration, "generate"),
        [&]() -> Result<std::string> {
          ++work_calls;
          if (!fail_work.ok()) return fail_work;
          return std::string("source " + std::to_string(iteration));
        },
        [&](std::string& code) -> Result<Json> {
          auto added = store_->AddCandidate(run_id_, iteration, "s", code);
          if (!added.ok()) return added.status();
          return Json{{"candidate_id", added->id}};
        },
        [](const Json& payload) -> Result<std::int64_t> {
          return JsonGet<std::int64_t>(payload, "candidate_id", -1);
        });
  }

  bool Stored(const std::string& source) {
    auto found = store_->FindCandidateByHash(run_id_, store::RunStore::Sha256Hex(source));
    EXPECT_TRUE(found.ok());
    return found.ok() && found->has_value();
  }

  std::string dir_;
  std::unique_ptr<store::RunStore> store_;
  std::int64_t run_id_ = 0;
};

TEST_F(JournalTest, ADoneStepIsDecodedAndNeverWorkedAgain) {
  std::vector<std::string> done;
  Journal journal(*store_, run_id_, [&](const store::StepKey& k) { done.push_back(k.step); });
  int work_calls = 0;
  auto first = AddOne(journal, 1, work_calls);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_GT(*first, 0);
  EXPECT_EQ(done, std::vector<std::string>{"generate"});

  auto again = AddOne(journal, 1, work_calls);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *first) << "a resumed step hands on what the first one stored";
  EXPECT_EQ(work_calls, 1) << "a done step must not be worked again";
  auto step = store_->GetStep(journal.Key(1, "generate"));
  ASSERT_TRUE(step.ok() && *step);
  EXPECT_EQ((*step)->state, store::StepState::kDone);
  EXPECT_EQ((*step)->attempts, 1);
}

TEST_F(JournalTest, AFailedWorkLeavesTheStepStartedAndNoRows) {
  Journal journal(*store_, run_id_);
  int work_calls = 0;
  auto failed = AddOne(journal, 2, work_calls, Status::Unavailable("the model is down"));
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("the model is down"), std::string::npos);
  auto step = store_->GetStep(journal.Key(2, "generate"));
  ASSERT_TRUE(step.ok() && *step);
  EXPECT_EQ((*step)->state, store::StepState::kStarted);
  EXPECT_FALSE(Stored("source 2"));

  auto redone = AddOne(journal, 2, work_calls);
  ASSERT_TRUE(redone.ok());
  step = store_->GetStep(journal.Key(2, "generate"));
  EXPECT_EQ((*step)->state, store::StepState::kDone);
  EXPECT_EQ((*step)->attempts, 2) << "the redo counts as a second attempt";
}

TEST_F(JournalTest, AFailingEncodeRollsBackItsRowsAndReportsWhy) {
  Journal journal(*store_, run_id_);
  auto result = journal.RunStep(
      journal.Key(3, "record"), []() -> Result<int> { return 1; },
      [&](int&) -> Result<Json> {
        auto added = store_->AddCandidate(run_id_, 3, "s", "half written");
        if (!added.ok()) return added.status();
        return Status::IoError("disk full");
      },
      [](const Json&) -> Result<int> { return 0; });
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(), "disk full");
  EXPECT_FALSE(Stored("half written")) << "a failed step must leave none of its rows";
  auto step = store_->GetStep(journal.Key(3, "record"));
  ASSERT_TRUE(step.ok());
  EXPECT_FALSE(*step && (*step)->state == store::StepState::kDone);
}

TEST_F(JournalTest, TheStepsBackendServesStoredRepliesAndTagsNewOnes) {
  ExchangeSink sink;
  sink.Attach(store_.get(), run_id_);
  Journal journal(*store_, run_id_);
  const store::StepKey key = journal.Key(4, "generate");
  llm::testing::ScriptedBackend model;
  model.Push(llm::testing::TextResponse("paid once"));
  auto hook = sink.Hook();
  // The model's reply arrives and is stored under the step (as the client's hook does).
  {
    auto backend = journal.Backend(key, "programmer", model);
    ASSERT_TRUE(backend.ok());
    llm::Request request;
    llm::Outcome reply = (*backend)->Complete(request);
    ASSERT_TRUE(reply.ok());
    llm::Exchange exchange;
    exchange.request = request;
    exchange.response = reply.response();
    ScopedExchangeTag tag(ExchangeTag{"programmer", 4, store::StepKeyText(key)});
    hook(exchange);
  }
  auto stored = store_->ListLlmExchangesForStep(key);
  ASSERT_TRUE(stored.ok());
  ASSERT_EQ(stored->size(), 1u);
  EXPECT_EQ((*stored)[0].purpose, "programmer");
  // The step is redone: its reply is served again without asking the model.
  auto backend = journal.Backend(key, "programmer", model);
  ASSERT_TRUE(backend.ok());
  llm::Outcome again = (*backend)->Complete(llm::Request{});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.response().text, "paid once");
  EXPECT_EQ(model.calls(), 1);
}

}  // namespace search_journal_test
}  // namespace kernelpro::search
