#!/usr/bin/env python3
"""bench/serve_load.py in its CI-sized form: a real `kernelpro serve --device cpu` on a free
loopback port, 4 clients sharing 8 evaluations of tests/problems/tiny_swish.py's honest CPU
candidate (after 1 warm-up), the table printed, the server stopped with SIGTERM (it drains).

    bench/serve_load_cpu.py KERNELPRO_BINARY [--cache-dir DIR]

Exit status: serve_load's (0 when every request got a verdict), or 1 when the server did not
start, got no `correct` verdict, or did not stop cleanly.
"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import serve_load  # noqa: E402
import kernelpro_client  # noqa: E402  (on sys.path through serve_load)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(binary, serve_args, log_path):
    """`binary serve SERVE_ARGS` on a free loopback port, its output in `log_path`, once it
    answers /v1/health: (process, kernelpro_client.Client). Exits with the reason when it does
    not start within 60 s."""
    port = free_port()
    with open(log_path, "w") as log:
        process = subprocess.Popen([binary, "serve", "--port", str(port)] + serve_args,
                                   stdout=log, stderr=subprocess.STDOUT)
    client = kernelpro_client.Client(f"http://127.0.0.1:{port}")
    for _ in range(600):
        if process.poll() is not None:
            raise SystemExit(f"kernelpro serve exited with {process.returncode}: see {log_path}")
        try:
            client.health()
            return process, client
        except kernelpro_client.ServerError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit(f"kernelpro serve did not answer /v1/health within 60 s: see {log_path}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--cache-dir", default="")
    a = parser.parse_args(argv)
    work = tempfile.mkdtemp(prefix="serve-load-cpu-")
    serve_args = ["--device", "cpu", "--state-dir", os.path.join(work, "state"), "--work-dir",
                  os.path.join(work, "work"), "--shapes", "off", "--timing-trials", "20",
                  "--blank-workers", "1"]
    if a.cache_dir:
        serve_args += ["--cache-dir", a.cache_dir]
    log_path = os.path.join(work, "serve.log")
    server, client = start_server(a.binary, serve_args, log_path)
    try:
        code = serve_load.main([
            "--url", client.url, "--clients", "4", "--requests", "8",
            "--warmup", "1", "--json", os.path.join(work, "load.json"),
            "--problem", os.path.join(ROOT, "tests/problems/tiny_swish.py"),
            "--candidate", os.path.join(ROOT, "tests/candidates/good/cpu_tiny_swish.py")])
    finally:
        server.send_signal(signal.SIGTERM)
        stopped = server.wait(timeout=300)
    log = open(log_path).read()
    if stopped != 0 or "kernelpro serve: stopped" not in log:
        print(f"the server did not stop cleanly (exit {stopped}):\n{log}", file=sys.stderr)
        return 1
    try:
        with open(os.path.join(work, "load.json")) as f:
            verdicts = json.load(f)["verdicts"]
    except (OSError, ValueError, KeyError):
        verdicts = None
    if verdicts != {"correct": 8}:
        print(f"not every evaluation was correct: {verdicts}\n{log}", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
