// StoredReplyBackend: stored replies are served first and never reach the model; the calls after
// them do, wrapped by the caller's hook.
#include "llm/stored_reply_backend.h"

#include <gtest/gtest.h>

#include "llm/scripted_backend_testing.h"

namespace kernelpro::llm {
namespace llm_stored_reply_backend_test {

using testing::ScriptedBackend;
using testing::TextResponse;

std::string TextOf(const Outcome& o) { return o.ok() ? o.response().text : ""; }

TEST(StoredReplyBackendTest, ServesStoredRepliesBeforeAskingTheModel) {
  ScriptedBackend inner;
  inner.Push(TextResponse("fresh"));
  int wrapped = 0;
  StoredReplyBackend backend(inner, {TextResponse("first"), TextResponse("second")},
                             [&](const std::function<Outcome()>& call) {
                               ++wrapped;
                               return call();
                             });
  Request request;
  EXPECT_EQ(TextOf(backend.Complete(request)), "first");
  EXPECT_EQ(TextOf(backend.Complete(request)), "second");
  EXPECT_EQ(inner.calls(), 0) << "a stored reply must not be asked for again";
  EXPECT_EQ(wrapped, 0);
  EXPECT_EQ(TextOf(backend.Complete(request)), "fresh");
  EXPECT_EQ(inner.calls(), 1);
  EXPECT_EQ(wrapped, 1);
  EXPECT_EQ(backend.reused(), 2u);
}

TEST(StoredReplyBackendTest, StoredErrorsAreServedToo) {
  ScriptedBackend inner;
  Error malformed = MakeError(ErrorKind::kMalformed, "bad json");
  malformed.reply_text = "{oops";
  StoredReplyBackend backend(inner, {malformed});
  Outcome o = backend.Complete(Request{});
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().kind, ErrorKind::kMalformed);
  EXPECT_EQ(inner.calls(), 0);
}

}  // namespace llm_stored_reply_backend_test
}  // namespace kernelpro::llm
