// What the provider backend tests share: the requests whose wire bodies are kept as golden files,
// the golden comparison itself, and recorded server replies (tests/fixtures/llm).
//
// Golden bodies live in tests/golden/llm/. Regenerate them after an intended change with
//   KERNELPRO_UPDATE_GOLDEN=1 build/kernelpro_tests --gtest_filter='*Golden*'
// and read the diff before committing it. Test-only; not thread-safe (no test needs it).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/json_io.h"
#include "llm/types.h"

namespace kernelpro::llm::testing {

inline std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Compares `body` rendered with two-space indents to tests/golden/llm/<name>; with
// KERNELPRO_UPDATE_GOLDEN set, rewrites the file instead.
inline void ExpectGoldenBody(const std::string& name, const Json& body) {
  const std::string path = std::string(KERNELPRO_SOURCE_DIR) + "/tests/golden/llm/" + name;
  const std::string text = body.dump(2) + "\n";
  if (std::getenv("KERNELPRO_UPDATE_GOLDEN") != nullptr) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << text;
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(path))
      << path << " missing: run with KERNELPRO_UPDATE_GOLDEN=1";
  EXPECT_EQ(text, ReadTextFile(path))
      << "request body " << name << " changed; review, then regenerate";
}

// A recorded reply from tests/fixtures/llm/<name>, as the server sent it.
inline std::string Fixture(const std::string& name) {
  return ReadTextFile(std::string(KERNELPRO_SOURCE_DIR) + "/tests/fixtures/llm/" + name);
}

inline ToolDefinition ReadFileTool() {
  return {"read_file", "Reads a file of the candidate kernel's source tree.",
          Json::parse(R"({"type": "object",
                          "properties": {"path": {"type": "string",
                                                  "description": "relative path"}},
                          "required": ["path"]})")};
}

inline ToolDefinition RunBenchmarkTool() {
  return {"run_benchmark", "Compiles and times a kernel variant on the GPU.",
          Json::parse(R"({"type": "object",
                          "properties": {"variant": {"type": "string"},
                                         "repeats": {"type": "integer", "minimum": 1}},
                          "required": ["variant"]})")};
}

inline Request PlainRequest() {
  Request r;
  r.system = "You optimise CUDA kernels for an H200.";
  r.messages.push_back(Message::User("Why is this kernel memory bound?"));
  r.max_tokens = 1024;
  return r;
}

// Two rounds of tool use: one call, then two in one turn (one of them failing), then the user
// speaking again right after the results.
inline Request ToolRequest() {
  Request r;
  r.system = "You optimise CUDA kernels for an H200.";
  r.messages.push_back(Message::User("Make swish faster."));
  r.messages.push_back(Message::Assistant("Let me read the kernel first.",
                                          {{"call_1", "read_file", Json{{"path", "swish.cu"}}}}));
  r.messages.push_back(Message::Tool(
      {"call_1", "read_file", "__global__ void swish(float* x) { /* ... */ }", false}));
  r.messages.push_back(Message::Assistant(
      "", {{"call_2", "run_benchmark", Json{{"variant", "vec4"}, {"repeats", 20}}},
           {"call_3", "read_file", Json{{"path", "missing.cu"}}}}));
  r.messages.push_back(Message::Tool({"call_2", "run_benchmark", "vec4: 41.2 us (1.8x)", false}));
  r.messages.push_back(
      Message::Tool({"call_3", "read_file", "no such file: missing.cu", /*is_error=*/true}));
  r.messages.push_back(Message::User("Keep the vec4 variant and explain why it is faster."));
  r.tools = {ReadFileTool(), RunBenchmarkTool()};
  r.tool_choice = ToolChoice::kRequired;
  r.max_tokens = 2048;
  r.temperature = 0.2;
  r.stop = {"</answer>"};
  return r;
}

inline ResponseSchema CandidatesSchema() {
  return {"candidates", Json::parse(R"({
    "type": "object",
    "properties": {
      "plan": {"type": "string"},
      "candidates": {"type": "array", "items": {"type": "object",
        "properties": {"name": {"type": "string"}, "change": {"type": "string"}},
        "required": ["name", "change"]}}
    },
    "required": ["plan", "candidates"]})")};
}

inline Request StructuredRequest() {
  Request r;
  r.system = "You optimise CUDA kernels for an H200.";
  r.messages.push_back(Message::User("Propose two candidate rewrites of swish."));
  r.max_tokens = 1024;
  r.response_schema = CandidatesSchema();
  return r;
}

// A reply that satisfies CandidatesSchema.
inline Json CandidatesAnswer() {
  return Json::parse(R"({"plan": "vectorise, then fuse",
                         "candidates": [{"name": "vec4", "change": "float4 loads"},
                                        {"name": "fused", "change": "fuse the sigmoid"}]})");
}

}  // namespace kernelpro::llm::testing
