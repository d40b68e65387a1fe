// The programmer agent (paper §3.2.2): turns a prompt into N candidate kernels, and checks each
// one cheaply before it costs a build.
//
// One call sends the prompt (its system part, then one user message with a short paragraph that
// asks for N candidates in one JSON object) with a response schema
// {"candidates": [{"strategy", "code"}]}; the LLM layer enforces the schema natively where the
// server can and by prompt and extraction elsewhere. A reply that carries no usable JSON is read
// again for fenced ```python blocks, each named by the sentence before it. Every candidate then
// goes through CheckCandidateSource: it must parse as Python, define `class ModelNew` and carry
// kernel source for the target device. Broken candidates, duplicates (same code) and candidates
// beyond the N asked for are listed in `rejected` with a reason; a reply with fewer candidates, or
// none, is a result like any other. Nothing here throws or ends a search: an LLM failure is
// `error`, and the search counts the empty result and moves on.
//
// With tools (ProgrammerOptions::tools: the CUTLASS code search and the shared-memory probe of
// agents/cutlass_tools.h), the call becomes a conversation (llm::RunToolConversation): the model
// may call the tools, within budgets it is told in the user message, before it answers; every call
// and its result are kept in the result (`tool_calls`) for the run store and the report. A backend
// that refuses the tool-calling request itself (an HTTP 4xx, or a server error about tools, on
// the first turn) gets today's single call without tools, and the result says so in its notes.
//
// A caller's pre-build check (ProgrammerOptions::pre_build_check, the CUTLASS constraint
// validator) runs on every candidate that passed CheckCandidateSource; what it finds rejects the
// candidate with that text, which reaches the next debug prompt without a build being spent.
//
// RunProgrammer and CheckCandidateSource hold no state; they are safe to call from several threads
// at once as long as the backend and the tools' handlers are (llm::Backend implementations are).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agents/candidate.h"
#include "agents/prompt.h"
#include "llm/backend.h"
#include "llm/tool_loop.h"

namespace kernelpro::agents {

struct CheckOptions {
  // Interpreter for the syntax check (`ast.parse` of the code on stdin). When it cannot be
  // started the syntax check is skipped with a note, never held against the candidate.
  std::string python = "python3";
  // "cuda": the kernel source must be CUDA (a __global__ kernel, or load_inline with
  // cuda_sources); "cpu": C++ source through load_inline's cpp_sources.
  std::string device = "cuda";
  // Wall-clock limit of the syntax check.
  int timeout_ms = 10000;
};

// Why a candidate is not worth a build, or that it is.
struct CandidateCheck {
  bool ok = false;
  std::string reason;                    // empty when ok: "Python syntax error at line 12: ..."
  std::optional<int> syntax_error_line;  // set for a SyntaxError
  std::vector<std::string> notes;        // checks that could not run ("python3 not found: ...")
};

CandidateCheck CheckCandidateSource(const std::string& code, const CheckOptions& options = {});

// Tools the programmer may call before it answers. `instruction` names them and their budgets in
// words; it is appended to the user message, so the model knows what it may spend. The budgets
// themselves are `loop`'s (per programmer request: one per iteration unless several temperatures
// make one request per candidate).
struct ProgrammerTools {
  std::vector<llm::ToolDefinition> definitions;
  std::map<std::string, llm::ToolHandler> handlers;
  llm::ToolLoopOptions loop;
  std::string instruction;
};

// One tool call the programmer made, as the run store keeps it.
struct ProgrammerToolCall {
  std::string name;
  Json arguments;
  std::string result;     // what the model read (each tool bounds its own output)
  bool is_error = false;  // an error result: bad arguments, an unknown file, a spent budget, ...
};

struct ProgrammerOptions {
  int num_candidates = 2;  // N, the candidates asked for in the one reply
  int max_tokens = 16384;  // output budget of the reply (truncation recovery may raise it)
  std::optional<double> temperature;  // unset: the server's default
  // Sampling seed of the request; unset: none is sent. RunProgrammerAtTemperatures sends request
  // i with seed + i, so its requests differ from one another as their temperatures may not.
  std::optional<std::uint64_t> seed;
  std::string python = "python3";  // for the syntax check
  std::string device = "cuda";     // "cuda" or "cpu": which kernel source a candidate must carry
  // Null: one call without tools. Borrowed; must outlive the call.
  const ProgrammerTools* tools = nullptr;
  // Run on each candidate that passed CheckCandidateSource: "" to keep it, else why it is not
  // worth a build (the text the candidate is rejected with). Unset: no such check.
  std::function<std::string(const std::string& code)> pre_build_check;
};

struct RejectedCandidate {
  std::string strategy;
  std::string reason;  // what the check found, "duplicate of candidate 1", ...
  std::string code;
};

struct ProgrammerResult {
  std::vector<Candidate> candidates;  // checked, distinct, at most `asked`, in reply order
  std::vector<RejectedCandidate> rejected;
  int asked = 0;
  std::optional<llm::Error> error;  // the LLM failed, or the reply held no candidate at all
  llm::Usage usage;                 // tokens of the exchange, recovery attempts included
  std::string raw_text;             // the reply as the model wrote it
  bool from_fenced_blocks = false;  // candidates came from ```python blocks, not JSON
  std::vector<std::string> notes;   // checks that could not run, a reply cut off, ...
  std::vector<ProgrammerToolCall> tool_calls;  // in the order the model made them
  bool tools_offered = false;  // the request offered tools (false after a fallback, too)
  // The backend refused the request with tools and the programmer asked once without them: the
  // note saying so (also in `notes`); "" when it did not.
  std::string tools_refused;
};

// The programmer at several temperatures (the paper seeds its runs at several): one request per
// candidate, each asking for one, candidate i at temperatures[i % size], on the same prompt (which
// must ask for one candidate). Their candidates are merged in order, a repeat of an earlier one
// rejected as a duplicate; usage, notes and raw replies add up; the result has an error only when
// no request brought a candidate (the last error). With a seed, request i carries seed + i. With
// fewer than two temperatures it is RunProgrammer at that temperature (and seed).
ProgrammerResult RunProgrammerAtTemperatures(llm::Backend& backend, const Prompt& prompt,
                                             const ProgrammerOptions& options,
                                             const std::vector<double>& temperatures);

// The JSON Schema of the reply: {"candidates": [{"strategy": string, "code": string}]}.
Json CandidatesSchema();

// The paragraph appended to the prompt's user part: how many candidates, and in what form
// (`device` as in ProgrammerOptions).
std::string CandidatesInstruction(int num_candidates, const std::string& device = "cuda");

ProgrammerResult RunProgrammer(llm::Backend& backend, const Prompt& prompt,
                               const ProgrammerOptions& options = {});

}  // namespace kernelpro::agents
