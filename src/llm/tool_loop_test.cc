// The tool loop: calls run and their results go back to the model, and every failure the model
// can act on (handler error, unknown tool, spent budget) is told to it in plain words.
#include "llm/tool_loop.h"

#include <gtest/gtest.h>

#include "llm/scripted_backend_testing.h"

namespace kernelpro::llm {
namespace llm_tool_loop_test {

using testing::ScriptedBackend;
using testing::TextResponse;
using testing::ToolUseResponse;

Request Ask() {
  Request r;
  r.system = "You optimise kernels.";
  r.messages.push_back(Message::User("Why is k1 slow?"));
  r.tools.push_back({"ncu", "profile a kernel", Json{{"type", "object"}}});
  return r;
}

ToolCall Call(const std::string& id, const std::string& name, Json arguments = Json::object()) {
  return {id, name, std::move(arguments)};
}

TEST(ToolLoopTest, RunsCallsSendsResultsBackAndReturnsTheFinalAnswer) {
  ScriptedBackend backend;
  backend.Push(ToolUseResponse(
      {Call("c1", "ncu", {{"kernel", "k1"}}), Call("c2", "sass", {{"kernel", "k1"}})}, {100, 10}));
  backend.Push(TextResponse("k1 is memory bound.", {200, 20}));
  std::vector<Json> ncu_args;
  std::map<std::string, ToolHandler> handlers = {
      {"ncu",
       [&](const Json& args) -> Result<std::string> {
         ncu_args.push_back(args);
         return std::string("dram throughput 91%");
       }},
      {"sass", [](const Json&) -> Result<std::string> { return std::string("LDG.E.128 x 40"); }},
  };
  ToolConversation c = RunToolConversation(backend, Ask(), handlers);
  ASSERT_TRUE(c.ok()) << c.error->ToString();
  EXPECT_EQ(c.response->text, "k1 is memory bound.");
  EXPECT_EQ(c.turns, 2);
  EXPECT_EQ(c.usage.input_tokens, 300);
  EXPECT_EQ(c.usage.output_tokens, 30);
  EXPECT_EQ(c.calls, (std::map<std::string, int>{{"ncu", 1}, {"sass", 1}}));
  ASSERT_EQ(ncu_args.size(), 1u);
  EXPECT_EQ(ncu_args[0], (Json{{"kernel", "k1"}}));

  // The second request carries the assistant turn and one tool message per call, in order.
  auto requests = backend.Requests();
  ASSERT_EQ(requests.size(), 2u);
  const std::vector<Message>& m = requests[1].messages;
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[1].role, Role::kAssistant);
  ASSERT_EQ(m[1].tool_calls.size(), 2u);
  EXPECT_EQ(m[2].role, Role::kTool);
  EXPECT_EQ(m[2].tool_result->tool_call_id, "c1");
  EXPECT_EQ(m[2].tool_result->name, "ncu");
  EXPECT_EQ(m[2].tool_result->content, "dram throughput 91%");
  EXPECT_FALSE(m[2].tool_result->is_error);
  EXPECT_EQ(m[3].tool_result->tool_call_id, "c2");
  EXPECT_EQ(m[3].tool_result->content, "LDG.E.128 x 40");
  EXPECT_EQ(requests[1].system, "You optimise kernels.");
  EXPECT_EQ(requests[1].tools.size(), 1u);

  // The transcript is the whole conversation, the final answer included.
  ASSERT_EQ(c.transcript.size(), 5u);
  EXPECT_EQ(c.transcript[4].role, Role::kAssistant);
  EXPECT_EQ(c.transcript[4].text, "k1 is memory bound.");
}

TEST(ToolLoopTest, ASpentBudgetIsToldToTheModel) {
  ScriptedBackend backend;
  backend.Push(ToolUseResponse({Call("c1", "ncu")}));
  backend.Push(ToolUseResponse({Call("c2", "ncu"), Call("c3", "ncu")}));
  backend.Push(TextResponse("done"));
  int runs = 0;
  std::map<std::string, ToolHandler> handlers = {
      {"ncu", [&](const Json&) -> Result<std::string> { return "run " + std::to_string(++runs); }}};
  ToolLoopOptions options;
  options.default_budget = 100;
  options.budgets = {{"ncu", 2}};
  ToolConversation c = RunToolConversation(backend, Ask(), handlers, options);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(c.calls.at("ncu"), 2);
  EXPECT_EQ(c.refused.at("ncu"), 1);
  auto requests = backend.Requests();
  const Message& refused = requests.at(2).messages.back();
  ASSERT_TRUE(refused.tool_result.has_value());
  EXPECT_EQ(refused.tool_result->tool_call_id, "c3");
  EXPECT_TRUE(refused.tool_result->is_error);
  EXPECT_EQ(refused.tool_result->content,
            "budget for tool ncu exhausted (2 calls); answer with what you have");
  // While a call is left the model may choose; once every budget is spent it is told not to call.
  EXPECT_EQ(requests.at(1).tool_choice, ToolChoice::kAuto);
  EXPECT_EQ(requests.at(2).tool_choice, ToolChoice::kNone);
}

TEST(ToolLoopTest, AForcedFirstCallIsForcedOnlyOnce) {
  ScriptedBackend backend;
  backend.Push(ToolUseResponse({Call("c1", "ncu")}));
  backend.Push(TextResponse("done"));
  std::map<std::string, ToolHandler> handlers = {
      {"ncu", [](const Json&) -> Result<std::string> { return std::string("ok"); }}};
  Request ask = Ask();
  ask.tool_choice = ToolChoice::kNamed;
  ask.tool_choice_name = "ncu";
  ToolConversation c = RunToolConversation(backend, ask, handlers);
  ASSERT_TRUE(c.ok());
  auto requests = backend.Requests();
  EXPECT_EQ(requests.at(0).tool_choice, ToolChoice::kNamed);
  EXPECT_EQ(requests.at(1).tool_choice, ToolChoice::kAuto);
}

TEST(ToolLoopTest, UnknownToolAndHandlerFailuresBecomeErrorResults) {
  ScriptedBackend backend;
  backend.Push(ToolUseResponse({Call("c1", "nsys"), Call("c2", "ncu"), Call("c3", "sass")}));
  backend.Push(TextResponse("I will answer without them."));
  std::map<std::string, ToolHandler> handlers = {
      {"ncu",
       [](const Json&) -> Result<std::string> {
         return Status::Unavailable("ncu: no GPU visible");
       }},
      {"sass", [](const Json&) -> Result<std::string> { throw std::runtime_error("segfault"); }},
  };
  ToolConversation c = RunToolConversation(backend, Ask(), handlers);
  ASSERT_TRUE(c.ok());
  auto requests = backend.Requests();
  const std::vector<Message>& m = requests.at(1).messages;
  ASSERT_EQ(m.size(), 5u);
  EXPECT_TRUE(m[2].tool_result->is_error);
  EXPECT_EQ(m[2].tool_result->content, "no such tool: \"nsys\"; the tools are: ncu, sass");
  EXPECT_TRUE(m[3].tool_result->is_error);
  EXPECT_EQ(m[3].tool_result->content, "ncu: no GPU visible");
  EXPECT_TRUE(m[4].tool_result->is_error);
  EXPECT_EQ(m[4].tool_result->content, "the tool crashed: segfault");
  EXPECT_EQ(c.refused.at("nsys"), 1);
  EXPECT_EQ(c.calls.at("ncu"), 1);  // a failed run still counts against the budget
}

TEST(ToolLoopTest, MaxTurnsWithoutAFinalAnswerIsABudgetErrorWithTheTranscript) {
  ScriptedBackend backend;
  for (int i = 0; i < 5; ++i) backend.Push(ToolUseResponse({Call("c" + std::to_string(i), "ncu")}));
  std::map<std::string, ToolHandler> handlers = {
      {"ncu", [](const Json&) -> Result<std::string> { return std::string("same as before"); }}};
  ToolLoopOptions options;
  options.max_turns = 3;
  ToolConversation c = RunToolConversation(backend, Ask(), handlers, options);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error->kind, ErrorKind::kBudget);
  EXPECT_EQ(c.error->message, "no final answer after 3 model calls (max_turns 3)");
  EXPECT_EQ(backend.calls(), 3);
  EXPECT_EQ(c.turns, 3);
  EXPECT_EQ(c.transcript.size(), 1u + 3 * 2);  // the question, then 3 x (assistant, tool)
}

TEST(ToolLoopTest, AnswerOnLastTurnAsksTheLastTurnWithoutTools) {
  ScriptedBackend backend;
  backend.Push(ToolUseResponse({Call("c1", "ncu")}));
  backend.Push(ToolUseResponse({Call("c2", "ncu")}));
  backend.Push(TextResponse("done"));
  std::map<std::string, ToolHandler> handlers = {
      {"ncu", [](const Json&) -> Result<std::string> { return std::string("91%"); }}};
  ToolLoopOptions options;
  options.max_turns = 3;
  options.answer_on_last_turn = true;
  ToolConversation c = RunToolConversation(backend, Ask(), handlers, options);
  ASSERT_TRUE(c.ok()) << c.error->ToString();
  EXPECT_EQ(c.response->text, "done");
  auto requests = backend.Requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[1].tool_choice, ToolChoice::kAuto);
  EXPECT_EQ(requests[2].tool_choice, ToolChoice::kNone);  // the last turn must answer
}

TEST(ToolLoopTest, BackendErrorsAndEmptyToolUseEndTheConversation) {
  ScriptedBackend failing;
  failing.Push(ToolUseResponse({Call("c1", "ncu")}));
  failing.Push(MakeError(ErrorKind::kAuth, "bad key", 401));
  std::map<std::string, ToolHandler> handlers = {
      {"ncu", [](const Json&) -> Result<std::string> { return std::string("ok"); }}};
  ToolConversation c = RunToolConversation(failing, Ask(), handlers);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error->kind, ErrorKind::kAuth);
  EXPECT_EQ(c.transcript.size(), 3u);  // kept for the caller to inspect

  ScriptedBackend confused;
  Response empty_tool_use = ToolUseResponse({});
  confused.Push(empty_tool_use);
  ToolConversation d = RunToolConversation(confused, Ask(), handlers);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error->kind, ErrorKind::kMalformed);
  EXPECT_EQ(confused.calls(), 1);
}

}  // namespace llm_tool_loop_test
}  // namespace kernelpro::llm
