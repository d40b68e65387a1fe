#!/usr/bin/env bash
# kernelpro's LLM layer against a real model server: llama.cpp's OpenAI-compatible server
# (llama-cpp-python) serving Gemma 3 270M on the CPU (scripts/setup --with-llm installs both).
# `llm ping` must answer with tokens and latency, a tool-calling round trip must run the tool and
# send its result back, and a cassette recorded on the way must replay the same conversation with
# the server gone. Skips (exit 77) where the server or the model is not installed.
#   usage: tests/llm/llama_server_test.sh KERNELPRO_BINARY
set -uo pipefail
kp=${1:?usage: llama_server_test.sh KERNELPRO_BINARY}
root=$(cd "$(dirname "$0")/../.." && pwd)
python=${KERNELPRO_LLAMA_PYTHON:-$root/.tools/llm-venv/bin/python}
model=${KERNELPRO_LLAMA_MODEL:-$root/.tools/models/gemma-3-270m-q4_k_m.gguf}
if [ ! -x "$python" ] || ! "$python" -c "import llama_cpp.server" 2> /dev/null || [ ! -f "$model" ]; then
  echo "SKIP: no llama-cpp-python server or Gemma 3 270M model (run scripts/setup --with-llm)"
  exit 77
fi
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$root/scripts/llama_server" "$port" > "$work/server.log" 2>&1 &
server=$!
cleanup() { kill "$server" 2> /dev/null; wait "$server" 2> /dev/null; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- server log (tail)"; tail -20 "$work/server.log"; exit 1; }
for _ in $(seq 120); do
  curl -sf "http://127.0.0.1:$port/v1/models" > /dev/null && break
  sleep 0.5
done
curl -sf "http://127.0.0.1:$port/v1/models" > /dev/null || fail "server did not start on port $port"
url="http://127.0.0.1:$port/v1"

"$kp" llm ping --llm "openai:gemma-3-270m@$url" --json > "$work/ping.json" || fail "llm ping exited $?: $(cat "$work/ping.json")"
python3 - "$work/ping.json" <<'PY' || fail "llm ping --json"
import json, sys
d = json.load(open(sys.argv[1]))
for key in ("text", "latency_ms", "input_tokens", "output_tokens", "attempts"):
    assert key in d, f"no {key} in {d}"
assert d["input_tokens"] > 0 and d["output_tokens"] > 0, d
assert d["latency_ms"] > 0 and d["attempts"] >= 1, d
assert d["text"].strip(), "empty reply"
print(f"ping: {d['output_tokens']} tokens in {d['latency_ms']:.0f} ms: {d['text'][:60]!r}")
PY

cassette="$work/tools.cassette.jsonl"
"$kp" llm ping --llm "openai:gemma-3-270m-tools@$url" --tool-call --json --llm-record "$cassette" \
  > "$work/tools.json" || fail "llm ping --tool-call exited $?: $(cat "$work/tools.json")"
python3 - "$work/tools.json" <<'PY' || fail "tool-calling round trip"
import json, sys
d = json.load(open(sys.argv[1]))
calls = d["tool_calls"]
assert calls and calls[0]["name"] == "add", d
a, b = calls[0]["arguments"]["a"], calls[0]["arguments"]["b"]
assert calls[0]["is_error"] is False and float(calls[0]["result"]) == float(a) + float(b), calls
assert d["turns"] >= 2 and d["exchanges"] == d["turns"], d
print(f"tool call: add({a}, {b}) -> {calls[0]['result']}, {d['turns']} model calls")
PY

# The server goes away; the cassette alone replays the conversation.
kill "$server"; wait "$server" 2> /dev/null
"$kp" llm ping --llm "replay:$cassette" --tool-call --json > "$work/replay.json" || fail "replay exited $?: $(cat "$work/replay.json")"
python3 - "$work/tools.json" "$work/replay.json" <<'PY' || fail "replay differs"
import json, sys
live, replay = (json.load(open(p)) for p in sys.argv[1:3])
for key in ("tool_calls", "text", "turns", "input_tokens", "output_tokens"):
    assert live[key] == replay[key], (key, live[key], replay[key])
print("replay: same tool calls, tokens and answer without the server")
PY
echo "PASS"
