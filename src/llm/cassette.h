// Record and replay of LLM exchanges, so agent runs and tests can be repeated without a server.
//
// A cassette is a JSON Lines file; each line is one exchange:
//
//   {"fingerprint": "<sha-256 hex>", "model": "gpt-4o", "provider": "openai",
//    "recorded_at": "2025-01-31T12:00:00.123Z", "request": {...ToJson(Request)},
//    "response": {...ToJson(Response)}}          (or "error": {...ToJson(Error)})
//
// The recorder appends one whole line per exchange under a mutex, then fsyncs, so a crash loses
// nothing already recorded and concurrent calls never interleave lines. It records what the
// wrapped backend returned, errors included. Requests carry no credentials (providers hold them
// and add them on the wire), so cassettes contain none and can be committed as test fixtures.
//
// The replayer loads the whole cassette up front and rejects a malformed line by number. In
// kFingerprint mode it serves, for each request, the recording whose fingerprint matches:
// SHA-256 of a canonical JSON of the request and the model, so key order and whitespace never
// matter. Several recordings of one fingerprint are served in recorded order, once each; asking
// again after the last one is a miss (a loop that repeats a request more often than it did when
// recorded has changed behaviour, and should say so). kSequential ignores what the requests say
// and serves the recordings in file order within each stream: requests of one kind (the same
// response schema, or tools, or plain text; see ReplayStream) take their stream's recordings in
// turn. So a hand-written cassette for a whole search (the programmer's candidates, the profiling
// agent's analyses, the memory extractor's notes) replays the same whichever thread asks first. A
// miss is a kReplayMiss error naming the cassette, the fingerprint and the first difference from
// the nearest recorded request ("message 2 text differs at character 14: ..."); it never falls back
// to anything. Fingerprints are recomputed from the recorded requests at load, so a hand-edited
// request still matches; the stored fingerprint is for people grepping the file.
//
// Both backends are safe to call from several threads at once (kSequential order is then the
// order in which calls take the lock).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "core/status.h"
#include "llm/backend.h"

namespace kernelpro::llm {

enum class ReplayMode {
  kFingerprint,  // match requests by fingerprint, each recording served once, in recorded order
  kSequential,   // serve recordings in file order per stream, ignoring what requests say
};

// The stream a request belongs to in kSequential replay: "schema:NAME" for a request with a
// response schema, else "tools" when it offers tools, else "text".
std::string ReplayStream(const Request& request);

// SHA-256 (hex) of the canonical JSON {"model": model, "request": ToJson(request)}.
std::string Fingerprint(const Request& request, const std::string& model);

// Opens (creating or appending to) `cassette_path` now, so an unwritable path fails before any
// request is sent. If a later write fails, the exchange's outcome is replaced by a kConfig error
// saying the cassette could not be written: a recording session must not silently lose lines.
Result<std::unique_ptr<Backend>> MakeRecordingBackend(std::unique_ptr<Backend> inner,
                                                      std::string cassette_path);

// Loads `cassette_path`. The backend's provider() is "replay"; its model() is `model`, or when
// empty the model of the first recording. kFingerprint matches requests under that model.
// kSequential starts each stream after its first `skip[stream]` recordings: a resumed run skips
// what its earlier processes were served (and stored) so that it continues where they stopped.
Result<std::unique_ptr<Backend>> MakeReplayBackend(std::string cassette_path,
                                                   ReplayMode mode = ReplayMode::kFingerprint,
                                                   std::string model = "",
                                                   std::map<std::string, size_t> skip = {});

}  // namespace kernelpro::llm
