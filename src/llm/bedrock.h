// The Amazon Bedrock backend: llm::Request over Bedrock's Converse API, signed with SigV4.
//
// One Complete() is one POST to {base}/model/{model id}/converse with the request translated to
// Converse's shape (system blocks, alternating user/assistant messages with text, toolUse and
// toolResult blocks, inferenceConfig, toolConfig) and the reply translated back (text, tool
// calls, stop reason, token counts). Converse has no server-side structured output for every
// model, so a response schema is asked for in the system prompt and the JSON is extracted from
// the reply. The request is signed at send time with the clock given to the factory, so tests fix
// the time. The backend holds no mutable state: safe to call from several threads at once when
// the transport is.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "llm/aws_credentials.h"
#include "llm/backend.h"
#include "llm/http.h"

namespace kernelpro::llm {

struct BedrockOptions {
  std::string region = "us-east-1";  // the AWS region the model is served from; also signed
  // A model id ("anthropic.claude-3-5-sonnet-20240620-v1:0"), an inference profile id
  // ("us.anthropic.claude-3-5-sonnet-20240620-v1:0") or an ARN. Required.
  std::string model;
  // Empty: https://bedrock-runtime.{region}.amazonaws.com. Set for a VPC endpoint or for tests.
  std::string base_url;
  AwsCredentials credentials;                         // see LoadAwsCredentials
  std::chrono::milliseconds connect_timeout{10'000};  // to establish the connection
  std::chrono::milliseconds total_timeout{
      600'000};  // for the whole exchange; long answers are slow
};

using SystemClockFunction = std::function<std::chrono::system_clock::time_point()>;

// Never null. Missing model, region or credentials surface as kConfig / kAuth errors from
// Complete(), where the caller already handles errors.
std::unique_ptr<Backend> MakeBedrockBackend(
    const BedrockOptions& options, std::shared_ptr<HttpTransport> transport,
    SystemClockFunction now = std::chrono::system_clock::now);

// The Converse request body for `request` (the model id goes in the URL, not here). Pure, for
// golden tests.
Json BedrockRequestBody(const Request& request);

// A Converse reply as an Outcome: non-2xx through HttpStatusError; an empty, non-JSON or
// wrong-shaped body is kMalformed. Does not fill model, latency or structured output, which need
// the request. Pure, for tests.
Outcome ParseBedrockResponse(const HttpResponse& response);

}  // namespace kernelpro::llm
