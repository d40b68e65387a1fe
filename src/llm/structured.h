// What the provider backends share at the wire edge: reading a reply body as JSON, merging turns
// into the strictly alternating form Anthropic and Bedrock require, and prompt-enforced
// structured output.
//
// Not every server can constrain its output to a JSON Schema (Anthropic has no response_format;
// some OpenAI-compatible servers reject it), so the schema then goes into the system prompt and
// the JSON is extracted from the free-text reply. Both backends use these functions so the
// instruction a model reads, and the rule for when a reply without JSON is an error, are the same
// for every provider. All functions are pure and safe to call from any thread.
#pragma once

#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "llm/http.h"
#include "llm/types.h"

namespace kernelpro::llm {

// The instruction appended to the system prompt when the server cannot enforce `schema` itself:
// the schema, and a request for only one JSON value that validates against it.
std::string SchemaInstruction(const ResponseSchema& schema);

// `system` with SchemaInstruction appended after a blank line (or the instruction alone when
// `system` is empty).
std::string SystemWithSchemaInstruction(const std::string& system, const ResponseSchema& schema);

// Fills `response.structured` with ExtractJson(response.text). A final answer (kEnd) without a
// JSON value is a kMalformed error whose message shows the start of the reply. A reply cut off
// at the token limit (kLength) is returned without `structured` when its JSON is incomplete, so
// truncation recovery can continue it; tool-use turns and refusals are returned untouched, since
// they are not the answer yet.
Outcome AttachStructured(Response response, const std::string& provider);

// The body of a 2xx reply as a JSON object, or a kMalformed error that says what was wrong (empty,
// not JSON, not an object) and shows the start of the body.
std::variant<Json, Error> ParseJsonBody(const HttpResponse& response, const std::string& provider);

// Parses a reply: a non-2xx status is HttpStatusError's error (a provider with its own error
// shapes checks the status first); otherwise ParseJsonBody, then `parse_body` on the object. A
// field of an unexpected type (a Json exception that the forgiving reads in `parse_body` did not
// cover) becomes a kMalformed error naming the provider, never an exception.
Outcome ParseJsonReply(const HttpResponse& response, const std::string& provider,
                       const std::function<Outcome(const Json& body)>& parse_body);

// Messages as wire turns {"role": "user"|"assistant", "content": [blocks...]} where a turn whose
// role repeats the previous one joins it: tool results (sent in user turns) merge with each other
// and with the user text that follows, so any sequence of Messages is a valid alternation.
Json AlternatingTurns(const std::vector<Message>& messages,
                      const std::function<Json(const Message&)>& content_blocks);

// The first `max_chars` characters of `text` on one line, with "..." when cut: for error messages.
std::string Snippet(const std::string& text, size_t max_chars = 200);

}  // namespace kernelpro::llm
