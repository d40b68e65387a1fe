import json
import os
import re
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import serve_load

HERE = os.path.dirname(os.path.abspath(__file__))
CLIENTS = 4
REQUESTS = 8
WARMUP = 2


class FakeServer:
    """Health and synchronous POST /v1/eval only. The counted requests (those after the warm-up)
    wait at a barrier of CLIENTS, so they are answered only if the bench really sends CLIENTS at
    once. Every 4th request overall is "incorrect"; those numbered in `reject` get a 429."""

    def __init__(self, token=None, reject=()):
        self.token = token
        self.reject = set(reject)
        self.options = []
        self.served = 0
        self.lock = threading.Lock()
        self.barrier = threading.Barrier(CLIENTS)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakeHandler)
        self.httpd.fake = self
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        # A short poll, so that close() returns at once.
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.01,), daemon=True)
        self.thread.start()

    def close(self):
        self.barrier.abort()   # frees a handler left waiting by a failed test
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()

    def answer(self, handler):
        body = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
        if self.token and handler.headers.get("Authorization") != "Bearer " + self.token:
            return reply(handler, 401, {"error": "missing or wrong bearer token"})
        if handler.path == "/v1/health":
            return reply(handler, 200, {"status": "ok", "draining": False})
        with self.lock:
            self.served += 1
            number = self.served
            self.options.append(json.loads(body)["options"])
        if number > WARMUP:
            try:
                self.barrier.wait(timeout=2)
            except threading.BrokenBarrierError:
                return reply(handler, 500, {"error": "fewer than %d requests at once" % CLIENTS})
        if number in self.reject:
            return reply(handler, 429, {"error": "queue full"})
        return reply(handler, 200, {"status": "incorrect" if number % 4 == 0 else "correct"})


class FakeHandler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.server.fake.answer(self)

    do_POST = do_GET

    def log_message(self, *args):
        pass   # keeps pytest's output to the failures


def reply(handler, status, obj):
    data = json.dumps(obj).encode("utf-8")
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


@pytest.fixture
def sources(tmp_path, monkeypatch):
    # urllib honours $http_proxy; a proxy set on the test machine must not see 127.0.0.1.
    for name in ("http_proxy", "HTTP_PROXY"):
        monkeypatch.delenv(name, raising=False)
    problem, candidate = tmp_path / "problem.py", tmp_path / "candidate.py"
    problem.write_text("class Model: pass\n")
    candidate.write_text("class ModelNew: pass\n")
    return ["--problem", str(problem), "--candidate", str(candidate)]


def bench_args(url, sources, *extra):
    return ["--url", url, "--clients", str(CLIENTS), "--requests", str(REQUESTS),
            "--warmup", str(WARMUP)] + sources + list(extra)


def table_value(table, label):
    match = re.search(r"^%s +(\S+)$" % re.escape(label), table, re.MULTILINE)
    assert match, "no %r row in:\n%s" % (label, table)
    return match.group(1)


def test_the_table_counts_the_requests_and_verdicts(sources, tmp_path, capsys):
    server = FakeServer()
    out = tmp_path / "load.json"
    try:
        status = serve_load.main(bench_args(
            server.url, sources, "--option", "timing_trials=5", "--option", "atol=1e-2",
            "--option", "correctness=kernelbench", "--option", "compile-baseline=true",
            "--json", str(out)))
    finally:
        server.close()
    table = capsys.readouterr().out
    assert status == 0, table
    # Requests 3..10 are counted; 4 and 8 of them are incorrect.
    for label, value in [("clients", "4"), ("requests", "8"), ("ok", "8"),
                         ("verdict correct", "6"), ("verdict incorrect", "2")]:
        assert table_value(table, label) == value
    for label in ("p50 latency (s)", "p95 latency (s)", "max latency (s)", "evaluations/min",
                  "wall (s)"):
        float(table_value(table, label))
    # The values' column is right-aligned: every line is as long as the longest.
    assert len(set(len(line) for line in table.splitlines())) == 1
    assert server.options == [{"timing_trials": 5, "atol": 0.01, "correctness": "kernelbench",
                               "compile_baseline": True}] * (WARMUP + REQUESTS)
    numbers = json.loads(out.read_text())
    assert (numbers["ok"], numbers["verdicts"]) == (8, {"correct": 6, "incorrect": 2})
    latency = numbers["latency_s"]
    assert 0 < latency["p50"] <= latency["p95"] <= latency["max"] <= numbers["wall_s"]


def test_error_answers_are_counted_by_status_and_fail_the_run(sources, tmp_path, capsys):
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    server = FakeServer(token="s3cret", reject={5, 6})
    try:
        status = serve_load.main(bench_args(server.url, sources, "--token-file", str(token)))
    finally:
        server.close()
    captured = capsys.readouterr()
    assert status == 1
    assert table_value(captured.out, "ok") == "6"
    assert table_value(captured.out, "error HTTP 429") == "2"
    assert "serve_load: HTTP 429: queue full" in captured.err


def test_a_wrong_token_stops_the_run_before_it_starts(sources, capsys):
    server = FakeServer(token="s3cret")
    try:
        status = serve_load.main(bench_args(server.url, sources))
    finally:
        server.close()
    assert status == 2
    assert "HTTP 401: missing or wrong bearer token" in capsys.readouterr().err
    assert server.served == 0


def test_an_unreachable_server_exits_2_naming_it(sources, capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = "http://127.0.0.1:%d" % s.getsockname()[1]
    assert serve_load.main(bench_args(url, sources)) == 2
    err = capsys.readouterr().err
    assert "no answer from the kernelpro server at %s" % url in err


@pytest.mark.parametrize("values, p, expected", [
    (list(range(1, 11)), 50, 5),      # rank ceil(5.0) = 5
    (list(range(1, 11)), 95, 10),     # rank ceil(9.5) = 10
    (list(range(1, 21)), 95, 19),     # rank ceil(19.0) = 19, exactly
    (list(range(1, 21)), 50, 10),
    ([0.3, 0.1, 0.2], 50, 0.2),       # unsorted input
    ([7.0], 95, 7.0),
    ([1, 2, 3, 4], 0, 1),
    ([1, 2, 3, 4], 100, 4),
    ([], 50, None),
])
def test_percentile_is_nearest_rank(values, p, expected):
    assert serve_load.percentile(values, p) == expected


def test_percentile_out_of_range_is_refused():
    with pytest.raises(ValueError):
        serve_load.percentile([1], 101)


@pytest.mark.parametrize("text, expected", [
    ("timing_trials=50", ("timing_trials", 50)),
    ("atol=1e-2", ("atol", 0.01)),
    ("compile-baseline=True", ("compile_baseline", True)),
    ("quiet=false", ("quiet", False)),
    ("correctness=kernelbench", ("correctness", "kernelbench")),
    ("work_dir=/tmp/a=b", ("work_dir", "/tmp/a=b")),
])
def test_option_values_are_typed(text, expected):
    assert serve_load.parse_option(text) == expected


def test_the_bench_imports_only_the_standard_library_and_the_client():
    if sys.version_info < (3, 10):
        pytest.skip("needs sys.stdlib_module_names (Python 3.10)")
    # A fresh interpreter without site (-S), so that only what serve_load imports is loaded.
    check = ("import sys; sys.path.insert(0, sys.argv[1]); import serve_load; "
             "print(sorted({m.split('.')[0] for m in sys.modules}"
             " - set(sys.stdlib_module_names) - {'__main__'}))")
    imported = subprocess.run([sys.executable, "-I", "-S", "-c", check, HERE],
                              capture_output=True, text=True)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.strip() == "['kernelpro_client', 'serve_load']"
