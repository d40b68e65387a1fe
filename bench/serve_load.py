#!/usr/bin/env python3
"""Load on a running `kernelpro serve`: N client threads share M evaluations of one problem and
candidate, and a table tells how many got a verdict, which verdicts, the latencies and the
server's throughput.

    bench/serve_load.py --problem P.py --candidate C.py [--url http://127.0.0.1:8000]
                        [--token-file FILE] [--clients 8] [--requests 32] [--warmup 2]
                        [--option KEY=VALUE ...] [--json OUT]

Each request is one synchronous POST /v1/eval; its latency is its wall time at the client, the
server's queueing included, and the latencies are those of the requests that got a verdict.
The --warmup requests go first, one after another, and are not counted (a server's first
evaluation builds what later ones reuse). --option passes one of `kernelpro eval`'s options,
e.g. --option timing_trials=50 --option correctness=kernelbench (dashes in KEY become
underscores; VALUE is read as an int, a float, true/false, else a string).

Exit status: 0 when every request got a verdict (whatever the verdict); 1 when some got an
error answer instead (the table counts them by HTTP status); 2, with the reason on stderr, when
--url is no http(s) URL, the server cannot be reached, or the health check or a warm-up request
fails (a wrong token, a problem that does not load).

Imports only the standard library and kernelpro_client, from this checkout's clients/python.
"""

import argparse
import collections
import json
import math
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "clients", "python"))
from kernelpro_client import Client, ServerError  # noqa: E402

# One request's fate: the verdict's status when it got one, else the HTTP status (0: no answer)
# and the error's message.
Outcome = collections.namedtuple("Outcome", "latency_s verdict http_status message")


def percentile(values, p):
    """The nearest-rank p-th percentile (0 <= p <= 100) of `values`: the smallest value with at
    least p % of them at or below it, so always one of the values, never an interpolation.
    None when there are no values."""
    if not 0 <= p <= 100:
        raise ValueError("percentile out of 0..100: %r" % p)
    if not values:
        return None
    ordered = sorted(values)
    rank = math.ceil(p * len(ordered) / 100)   # p * n first: exact for an integer p
    return ordered[max(rank, 1) - 1]


def parse_value(text):
    """An --option VALUE as JSON will carry it: int, float, true/false (any case), else str."""
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_option(text):
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError("expected KEY=VALUE, got %r" % text)
    return key.replace("-", "_"), parse_value(value)


def count(minimum):
    def parse(text):
        number = int(text)
        if number < minimum:
            raise argparse.ArgumentTypeError("must be at least %d: %s" % (minimum, text))
        return number
    return parse


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--token-file", help="a file holding the server's bearer token")
    parser.add_argument("--problem", required=True, help="the problem's Python source file")
    parser.add_argument("--candidate", required=True, help="the candidate's Python source file")
    parser.add_argument("--clients", type=count(1), default=8, help="concurrent client threads")
    parser.add_argument("--requests", type=count(1), default=32, help="counted requests, in all")
    parser.add_argument("--warmup", type=count(0), default=2,
                        help="uncounted sequential requests sent first")
    parser.add_argument("--option", type=parse_option, action="append", default=[],
                        metavar="KEY=VALUE", help="a kernelpro eval option; repeatable")
    parser.add_argument("--json", metavar="OUT", help="also write the numbers to this file")
    args = parser.parse_args(argv)
    args.options = dict(args.option)   # a repeated KEY takes its last VALUE
    try:
        args.problem_source = read_text(args.problem)
        args.candidate_source = read_text(args.candidate)
        args.token = read_text(args.token_file).strip() if args.token_file else None
    except OSError as e:
        parser.error(str(e))
    return args


def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def timed_request(client, args):
    start = time.perf_counter()
    try:
        verdict = client.evaluate(args.problem_source, args.candidate_source, **args.options)
    except ServerError as e:
        return Outcome(time.perf_counter() - start, None, e.status, str(e))
    return Outcome(time.perf_counter() - start, str(verdict.get("status")), 200, None)


def run_load(client, args):
    """The counted requests' outcomes, sent from args.clients threads, and the wall seconds."""
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.clients) as pool:
        futures = [pool.submit(timed_request, client, args) for _ in range(args.requests)]
        outcomes = [f.result() for f in futures]
    return outcomes, time.perf_counter() - start


def summarize(outcomes, wall_s, args):
    answered = [o for o in outcomes if o.verdict is not None]
    latencies = [o.latency_s for o in answered]
    errors = collections.Counter(str(o.http_status) for o in outcomes if o.verdict is None)
    return {
        "url": args.url,
        "clients": args.clients,
        "requests": len(outcomes),
        "warmup": args.warmup,
        "options": args.options,
        "ok": len(answered),
        "verdicts": dict(collections.Counter(o.verdict for o in answered).most_common()),
        "errors": dict(errors.most_common()),
        "latency_s": {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95),
                      "max": max(latencies) if latencies else None},
        "evaluations_per_minute": len(answered) / wall_s * 60,
        "wall_s": wall_s,
    }


def format_table(summary):
    """The summary as aligned `label  value` lines."""
    def seconds(value):
        return "-" if value is None else "%.3f" % value

    rows = [("clients", summary["clients"]), ("requests", summary["requests"]),
            ("ok", summary["ok"])]
    rows += [("verdict " + status, n) for status, n in summary["verdicts"].items()]
    rows += [("error HTTP " + status, n) for status, n in summary["errors"].items()]
    latency = summary["latency_s"]
    rows += [("p50 latency (s)", seconds(latency["p50"])),
             ("p95 latency (s)", seconds(latency["p95"])),
             ("max latency (s)", seconds(latency["max"])),
             ("evaluations/min", "%.1f" % summary["evaluations_per_minute"]),
             ("wall (s)", seconds(summary["wall_s"]))]
    label_width = max(len(label) for label, _ in rows)
    value_width = max(len(str(value)) for _, value in rows)
    return "\n".join("%-*s  %*s" % (label_width, label, value_width, value)
                     for label, value in rows)


def first_errors(outcomes):
    """The first error message of each HTTP status that failed requests got."""
    messages = {}
    for o in outcomes:
        if o.verdict is None:
            messages.setdefault(o.http_status, o.message)
    return [messages[status] for status in sorted(messages)]


def main(argv=None):
    args = parse_args(argv)
    try:
        client = Client(args.url, token=args.token)
        # Fail early and clearly: an unreachable server, a wrong token, a problem that does not
        # load would otherwise come back as M failed requests.
        client.health()
        for _ in range(args.warmup):
            client.evaluate(args.problem_source, args.candidate_source, **args.options)
    except (ServerError, ValueError) as e:
        print("serve_load: %s" % e, file=sys.stderr)
        return 2
    outcomes, wall_s = run_load(client, args)
    summary = summarize(outcomes, wall_s, args)
    print(format_table(summary))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=2)
            f.write("\n")
    failures = first_errors(outcomes)
    for line in failures:
        print("serve_load: %s" % line, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
