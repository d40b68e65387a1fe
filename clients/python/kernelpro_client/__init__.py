"""A client for the HTTP/JSON API of `kernelpro serve`, standard library only.

    from kernelpro_client import Client
    client = Client("http://gpu-box:8000", token="...")
    verdict = client.evaluate(problem_source, candidate_source, timing_trials=50)
    verdict["status"]   # correct, incorrect, runtime_error, timeout, compile_error or built

Errors: every answer other than 2xx raises ServerError (.status is the HTTP code, .error the
server's message); a request that gets no answer at all (connection refused or reset, unknown
host, nothing within the client's `timeout`) raises ServerError with status 0. Nothing is
retried, not even a 503 (draining), a 429 (queue full) or a refused connection: the caller
decides whether and when to try again. wait() raises JobError for a job that ended without a
verdict.
"""

import http.client
import json
import os
import socket
import time
import urllib.error
import urllib.parse
import urllib.request

__version__ = "0.1.0"
__all__ = ["Client", "ServerError", "JobError", "evaluate", "DEFAULT_URL"]

DEFAULT_URL = "http://127.0.0.1:8000"
PENDING_STATES = ("queued", "running")


class ServerError(Exception):
    """A request without a 2xx answer (or whose 2xx answer is not the promised JSON): `status` is
    the HTTP code (0 when no answer came) and `error` the server's message."""

    def __init__(self, status, error):
        super().__init__("HTTP %d: %s" % (status, error) if status else error)
        self.status = status
        self.error = error


class JobError(Exception):
    """A job that ended without a verdict: `state` is failed, cancelled or interrupted, and
    `error` the server's reason."""

    def __init__(self, job_id, state, error):
        super().__init__("job %s %s: %s" % (job_id, state, error))
        self.job_id = job_id
        self.state = state
        self.error = error


class Client:
    """One kernelpro server at `url`. A `token` is sent as `Authorization: Bearer <token>`.
    `timeout` bounds each HTTP request in seconds; None (the default) waits as long as the server
    takes, which for a synchronous evaluate() is the whole evaluation."""

    def __init__(self, url=DEFAULT_URL, token=None, timeout=None):
        if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
            raise ValueError("kernelpro server url must start with http:// or https://: %r" % url)
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def health(self):
        """The server's health object: status, version, device, gpus, queue_depth, running,
        draining. A draining server answers 503 (load balancers take it out) with status
        "draining": that object is returned too."""
        return self._json("GET", "/v1/health", also_ok=(503,))

    def evaluate(self, problem_source, candidate_source, **options):
        """Evaluates the candidate's source against the problem's and returns the verdict dict.
        `options` are `kernelpro eval`'s long options with underscores (timing_trials=50,
        correctness="kernelbench", atol=1e-2); the server answers 400 to an unknown one."""
        body = _eval_body(problem_source, candidate_source, options, run_async=False)
        return self._json("POST", "/v1/eval", body)

    def submit(self, problem_source, candidate_source, **options):
        """Queues the evaluation (options as in evaluate()) and returns its job id at once."""
        body = _eval_body(problem_source, candidate_source, options, run_async=True)
        return self._json("POST", "/v1/eval", body)["job"]

    def job(self, job_id):
        """The job's object: "state" (queued, running, done, failed, cancelled, interrupted),
        "result" (the verdict) when done, "error" when it ended otherwise. 404 if unknown."""
        return self._json("GET", "/v1/jobs/" + urllib.parse.quote(job_id, safe=""))

    def wait(self, job_id, poll_s=0.5, timeout=None):
        """Polls the job every `poll_s` seconds until it is neither queued nor running and returns
        its verdict. Raises JobError if it ended without one, TimeoutError if `timeout` seconds
        pass first (the job itself goes on)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            job = self.job(job_id)
            state = job.get("state")
            if state == "done":
                return job["result"]
            if state not in PENDING_STATES:
                raise JobError(job_id, state, job.get("error", ""))
            pause = poll_s
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("job %s still %s after %g s" % (job_id, state, timeout))
                pause = min(pause, left)
            time.sleep(pause)

    def metrics(self):
        """The server's metrics, in Prometheus' text format."""
        return self._send("GET", "/v1/metrics")[1].decode("utf-8")

    def _json(self, method, path, payload=None, also_ok=()):
        status, body = self._send(method, path, payload, also_ok)
        try:
            return json.loads(body)
        except ValueError:
            snippet = body[:200].decode("utf-8", "replace")
        raise ServerError(status, "answer to %s %s is not JSON: %r" % (method, path, snippet))

    def _send(self, method, path, payload=None, also_ok=()):
        """(HTTP status, body bytes) of a 2xx answer, or of one whose status is in `also_ok`;
        ServerError for anything else."""
        data = None if payload is None else json.dumps(payload).encode("utf-8")
        request = urllib.request.Request(self.url + path, data=data, method=method,
                                         headers=self._headers(data is not None))
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as e:
            with e:
                if e.code in also_ok:
                    return e.code, e.read()
                raise ServerError(e.code, _error_message(e.read(), e.reason)) from None
        except (OSError, http.client.HTTPException) as e:
            raise ServerError(0, self._unreachable_message(method, path, e)) from None

    def _headers(self, has_body):
        headers = {"Accept": "application/json", "User-Agent": "kernelpro-client/" + __version__}
        if has_body:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        return headers

    def _unreachable_message(self, method, path, e):
        # urlopen wraps failures to connect in URLError; failures while reading come bare.
        reason = e.reason if isinstance(e, urllib.error.URLError) else e
        if isinstance(reason, socket.timeout):
            reason = "timed out after %g s" % self.timeout
        return "no answer from the kernelpro server at %s (%s %s): %s" % (
            self.url, method, path, str(reason) or type(reason).__name__)


def evaluate(problem_source, candidate_source, url=None, token=None, **options):
    """Client(url, token).evaluate(problem_source, candidate_source, **options), where `url`
    defaults to $KERNELPRO_URL, else DEFAULT_URL, and `token` to $KERNELPRO_TOKEN."""
    client = Client(url or os.environ.get("KERNELPRO_URL") or DEFAULT_URL,
                    token or os.environ.get("KERNELPRO_TOKEN"))
    return client.evaluate(problem_source, candidate_source, **options)


def _eval_body(problem_source, candidate_source, options, run_async):
    return {"problem_source": problem_source, "candidate_source": candidate_source,
            "options": options, "async": run_async}


def _error_message(body, reason):
    """The message of an error answer: its JSON "error", else its text, else the HTTP reason."""
    text = body.decode("utf-8", "replace").strip()
    try:
        return json.loads(text)["error"]
    except (ValueError, TypeError, KeyError):
        return text or reason
