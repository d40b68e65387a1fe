"""kernelpro_client against a fake `kernelpro serve` (http.server on 127.0.0.1, port 0), and the
package's pip install. Fast and offline: no GPU, no torch, no network beyond loopback."""

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

CLIENT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, CLIENT_DIR)
import kernelpro_client  # noqa: E402
from kernelpro_client import Client, JobError, ServerError  # noqa: E402

PYTHON = "/usr/bin/python3"
PROBLEM = "import torch\n\nclass Model(torch.nn.Module):\n    pass\n"
CANDIDATE = "import torch\n\nclass ModelNew(torch.nn.Module):\n    pass\n"
BROKEN_PROBLEM = "class Model(nn.Module):\n    pass\n"
VERDICT = {"status": "correct", "speedup": 2.5, "message": ""}


class FakeServer:
    """Enough of kernelpro serve's API for the client: it records every request (method, path,
    headers, parsed JSON body) and answers as the real server does. A job steps through the
    states listed for it in `jobs`, one per poll, and then stays in the last."""

    def __init__(self, token=None, max_body=1 << 20):
        self.token = token
        self.max_body = max_body
        self.draining = False
        self.forced_answer = None   # (status, text): the next answers, whatever was asked
        self.delay_s = 0            # before each answer
        self.requests = []
        self.jobs = {}
        self.httpd = QuietServer(("127.0.0.1", 0), FakeHandler)
        self.httpd.fake = self
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        # A short poll, so that close() returns at once.
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.01,), daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()

    def answer(self, handler):
        body = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
        request = {"method": handler.command, "path": handler.path,
                   "headers": dict(handler.headers), "body": json.loads(body) if body else None}
        self.requests.append(request)
        time.sleep(self.delay_s)
        if self.forced_answer:
            return reply(handler, self.forced_answer[0], text=self.forced_answer[1])
        if self.token and handler.headers.get("Authorization") != "Bearer " + self.token:
            return reply(handler, 401, {"error": "missing or wrong bearer token"})
        if len(body) > self.max_body:
            return reply(handler, 413, {"error": "body over %d bytes" % self.max_body})
        if self.draining and request["path"] == "/v1/health":  # as kernelpro serve answers
            return reply(handler, 503, {"status": "draining", "version": "test", "device": "cpu",
                                        "gpus": [], "queue_depth": 0, "running": 1,
                                        "draining": True})
        if self.draining:
            return reply(handler, 503, {"error": "server is draining"})
        return self.route(handler, request)

    def route(self, handler, request):
        method, path = request["method"], request["path"]
        if (method, path) == ("GET", "/v1/health"):
            return reply(handler, 200, {"status": "ok", "version": "test", "device": "cpu",
                                        "gpus": [], "queue_depth": 0, "running": 0,
                                        "draining": False})
        if (method, path) == ("GET", "/v1/metrics"):
            return reply(handler, 200, text="kernelpro_jobs_total 3\n")
        if (method, path) == ("POST", "/v1/eval"):
            return self.evaluate(handler, request["body"])
        job_id = path[len("/v1/jobs/"):]
        if method == "GET" and path.startswith("/v1/jobs/") and job_id in self.jobs:
            states = self.jobs[job_id]
            state = states.pop(0) if len(states) > 1 else states[0]
            return reply(handler, 200, dict(state, job=job_id))
        return reply(handler, 404, {"error": "no such job or endpoint: %s" % path})

    def evaluate(self, handler, body):
        if body["problem_source"] == BROKEN_PROBLEM:
            return reply(handler, 422, {"error": "problem does not load: name 'nn' is not defined"})
        job_id = "job-%d" % len(self.requests)
        if body["async"]:
            self.jobs[job_id] = [{"state": "queued"}, {"state": "running"},
                                 {"state": "done", "result": VERDICT}]
            return reply(handler, 202, {"job": job_id, "state": "queued"})
        return reply(handler, 200, VERDICT, headers={"X-Kernelpro-Job": job_id})


class QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # A client that gave up (the timeout test) breaks the pipe: nothing to report.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class FakeHandler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.server.fake.answer(self)

    do_POST = do_GET

    def log_message(self, *args):
        pass   # keeps pytest's output to the failures


def reply(handler, status, obj=None, text=None, headers=None):
    data = (json.dumps(obj) if text is None else text).encode("utf-8")
    handler.send_response(status)
    handler.send_header("Content-Type", "text/plain" if obj is None else "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(data)


@pytest.fixture
def fake():
    server = FakeServer()
    yield server
    server.close()


@pytest.fixture
def no_proxy(monkeypatch):
    # urllib honours $http_proxy; a proxy set on the test machine must not see 127.0.0.1.
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)


pytestmark = pytest.mark.usefixtures("no_proxy")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_evaluate_returns_the_verdict_and_sends_the_options_under_options(fake):
    verdict = Client(fake.url).evaluate(PROBLEM, CANDIDATE, timing_trials=50,
                                        correctness="kernelbench", atol=1e-2, timeout=30)
    assert verdict == VERDICT
    sent = fake.requests[-1]
    assert (sent["method"], sent["path"]) == ("POST", "/v1/eval")
    assert sent["headers"]["Content-Type"] == "application/json"
    assert sent["body"] == {"problem_source": PROBLEM, "candidate_source": CANDIDATE,
                            "options": {"timing_trials": 50, "correctness": "kernelbench",
                                        "atol": 0.01, "timeout": 30},
                            "async": False}


def test_submit_then_wait_polls_until_done(fake):
    client = Client(fake.url + "/")   # a trailing slash is dropped
    job_id = client.submit(PROBLEM, CANDIDATE, timing_trials=5)
    assert fake.requests[-1]["body"]["async"] is True
    assert fake.requests[-1]["body"]["options"] == {"timing_trials": 5}
    assert client.job(job_id)["state"] == "queued"
    assert client.wait(job_id, poll_s=0.01, timeout=5) == VERDICT
    assert [r["path"] for r in fake.requests[1:]] == ["/v1/jobs/" + job_id] * 3


def test_wait_raises_job_error_for_a_job_that_ended_without_a_verdict(fake):
    fake.jobs["j-failed"] = [{"state": "failed", "error": "worker crashed"}]
    with pytest.raises(JobError) as caught:
        Client(fake.url).wait("j-failed", poll_s=0.01)
    assert (caught.value.state, caught.value.error) == ("failed", "worker crashed")


def test_wait_raises_timeout_error_for_a_job_still_running(fake):
    fake.jobs["j-slow"] = [{"state": "running"}]
    with pytest.raises(TimeoutError, match="j-slow still running"):
        Client(fake.url).wait("j-slow", poll_s=0.01, timeout=0.05)


def test_the_token_is_sent_as_a_bearer_header():
    server = FakeServer(token="s3cret")
    try:
        assert Client(server.url, token="s3cret").health()["status"] == "ok"
        assert server.requests[-1]["headers"]["Authorization"] == "Bearer s3cret"
        with pytest.raises(ServerError) as caught:
            Client(server.url, token="wrong").health()
        assert caught.value.status == 401
        assert caught.value.error == "missing or wrong bearer token"
        with pytest.raises(ServerError):
            Client(server.url).health()
        assert "Authorization" not in server.requests[-1]["headers"]
    finally:
        server.close()


@pytest.mark.parametrize("status, message", [
    (413, "body over 100 bytes"),
    (422, "problem does not load: name 'nn' is not defined"),
    (503, "server is draining"),
])
def test_an_error_answer_raises_server_error_with_its_status_and_message(fake, status, message):
    fake.max_body = 100 if status == 413 else fake.max_body
    fake.draining = status == 503
    problem = {413: "#" * 200, 422: BROKEN_PROBLEM, 503: PROBLEM}[status]
    with pytest.raises(ServerError) as caught:
        Client(fake.url).evaluate(problem, CANDIDATE)
    assert (caught.value.status, caught.value.error) == (status, message)
    assert str(caught.value) == "HTTP %d: %s" % (status, message)


def test_an_error_answer_that_is_not_json_keeps_its_text(fake):
    fake.forced_answer = (502, "Bad Gateway from a proxy")
    with pytest.raises(ServerError) as caught:
        Client(fake.url).health()
    assert (caught.value.status, caught.value.error) == (502, "Bad Gateway from a proxy")


def test_an_unknown_job_is_404(fake):
    with pytest.raises(ServerError) as caught:
        Client(fake.url).job("no-such-job")
    assert caught.value.status == 404
    assert "no-such-job" in caught.value.error


def test_a_refused_connection_is_status_0_and_names_the_url():
    url = "http://127.0.0.1:%d" % free_port()
    with pytest.raises(ServerError) as caught:
        Client(url).health()
    assert caught.value.status == 0
    assert url in caught.value.error and "refused" in caught.value.error.lower()


def test_a_server_slower_than_the_timeout_is_status_0(fake):
    fake.delay_s = 0.5
    with pytest.raises(ServerError) as caught:
        Client(fake.url, timeout=0.1).health()
    assert caught.value.status == 0
    assert caught.value.error == ("no answer from the kernelpro server at %s (GET /v1/health): "
                                  "timed out after 0.1 s" % fake.url)


def test_health_and_metrics(fake):
    client = Client(fake.url)
    assert client.health()["device"] == "cpu"
    assert client.metrics() == "kernelpro_jobs_total 3\n"


def test_a_url_without_a_scheme_is_refused_at_once():
    with pytest.raises(ValueError, match="http://"):
        Client("127.0.0.1:8000")


def test_module_evaluate_reads_the_url_and_token_from_the_environment(monkeypatch):
    server = FakeServer(token="env-token")
    try:
        monkeypatch.setenv("KERNELPRO_URL", server.url)
        monkeypatch.setenv("KERNELPRO_TOKEN", "env-token")
        assert kernelpro_client.evaluate(PROBLEM, CANDIDATE, timing_trials=3) == VERDICT
        assert server.requests[-1]["body"]["options"] == {"timing_trials": 3}
        # An explicit url wins over the environment's.
        monkeypatch.setenv("KERNELPRO_URL", "http://127.0.0.1:%d" % free_port())
        assert kernelpro_client.evaluate(PROBLEM, CANDIDATE, url=server.url) == VERDICT
    finally:
        server.close()


def test_pip_installs_the_package_and_it_imports_without_torch(tmp_path):
    # Offline (--no-index, --no-build-isolation), so the build needs the interpreter's own
    # setuptools next to pip.
    # (find_spec, not import: setuptools refuses to import after pip has imported distutils.)
    probe = "import importlib.util as u; assert u.find_spec('pip') and u.find_spec('setuptools')"
    if not os.path.exists(PYTHON) or subprocess.run([PYTHON, "-c", probe]).returncode != 0:
        pytest.skip("%s has no pip or no setuptools to install the package offline" % PYTHON)
    # pip builds in the source folder (build/, *.egg-info): a copy keeps the checkout clean.
    source = tmp_path / "source"
    shutil.copytree(CLIENT_DIR, str(source), ignore=shutil.ignore_patterns(
        "tests", "build", "*.egg-info", "__pycache__"))
    target = tmp_path / "site"
    install = subprocess.run(
        [PYTHON, "-m", "pip", "install", "--no-deps", "--no-index", "--no-build-isolation",
         "--disable-pip-version-check", "--target", str(target), str(source)],
        capture_output=True, text=True)
    assert install.returncode == 0, install.stdout + install.stderr
    # torch is made unimportable, so that an import of it anywhere in the package fails here.
    check = ("import sys; sys.path.insert(0, sys.argv[1]); sys.modules['torch'] = None; "
             "import kernelpro_client; print(kernelpro_client.__file__)")
    imported = subprocess.run([PYTHON, "-I", "-c", check, str(target)],
                              capture_output=True, text=True)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.strip().startswith(str(target))
    metadata = next(target.glob("kernelpro_client-*.dist-info")) / "METADATA"
    assert "Requires-Dist" not in metadata.read_text()


def test_a_draining_servers_health_is_its_object_not_an_error(fake):
    fake.draining = True
    health = Client(fake.url).health()
    assert (health["status"], health["draining"]) == ("draining", True)
