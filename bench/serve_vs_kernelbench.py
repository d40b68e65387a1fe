#!/usr/bin/env python3
"""`kernelpro serve` beside KernelBench's warm evaluator on KernelBench's own pairs (add,
fuse_gelu), on one GPU: latency, verdicts and throughput.

    bench/serve_vs_kernelbench.py --kernelbench DIR --kernelpro BIN --out DIR
                                  [--pairs add fuse_gelu] [--requests 10] [--clients 8]
                                  [--load-requests 32] [--device cuda]

For each pair:
  kernelpro serve   one server (blank workers on) for the whole bench; 2 warm-up requests, then
                    --requests sequential POST /v1/eval with no options (kernelpro's defaults);
                    latency = the request's wall time at the client
  KernelBench       bench/kernelbench_eval_loop.py: ONE Python process that imports torch and
                    KernelBench once and calls eval_kernel_against_ref 2 + --requests times on the
                    pair (its script defaults: 5 correctness trials, 100 timed calls); latency =
                    each call's wall time; the first two (the build) are the warm-up
  kernelpro eval    `kernelpro eval --json` once on the pair: the verdict the server must match
Then --clients threads share --load-requests evaluations of the last pair (bench/serve_load.py's
measure): p50/p95 latency and evaluations per minute, one GPU, one job on it at a time.

Writes OUT/serve_vs_kernelbench.json and prints a table. Exit 1 when a verdict differs.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import serve_load  # noqa: E402
from serve_load_cpu import start_server  # noqa: E402
from kernelbench_side_by_side import find_pair  # noqa: E402


def serve_latencies(client, problem, candidate, warmup, requests):
    """(latencies of the counted requests, their verdicts' statuses, the last verdict)."""
    latencies, statuses, verdict = [], [], None
    for i in range(warmup + requests):
        start = time.perf_counter()
        verdict = client.evaluate(problem, candidate)
        elapsed = time.perf_counter() - start
        if i >= warmup:
            latencies.append(elapsed)
            statuses.append(verdict.get("status"))
    return latencies, statuses, verdict


def kernelbench_latencies(args, name, problem_path, candidate_path, warmup, requests, work):
    tasks = [{"task": f"{name}-{i}", "problem": problem_path, "candidate": candidate_path}
             for i in range(warmup + requests)]
    tasks_file = os.path.join(work, f"{name}-tasks.json")
    jsonl = os.path.join(work, f"{name}-kernelbench.jsonl")
    with open(tasks_file, "w") as f:
        json.dump(tasks, f)
    subprocess.run([sys.executable, os.path.join(HERE, "kernelbench_eval_loop.py"),
                    "--kernelbench", args.kernelbench, "--tasks-file", tasks_file,
                    "--jsonl", jsonl, "--build-dir", os.path.join(work, f"{name}-kb-build")],
                   check=False)
    records = [json.loads(line) for line in open(jsonl)]
    runs = [r for r in records if "task" in r]
    counted = runs[warmup:]
    correct = [bool(r.get("correctness")) for r in counted]
    return [r["wall_s"] for r in counted], correct, runs[-1] if runs else {}


def eval_verdict(args, problem_path, candidate_path, work):
    run = subprocess.run([args.kernelpro, "eval", "--device", args.device, "--json", "--quiet",
                          "--problem", problem_path, "--candidate", candidate_path,
                          "--cache-dir", os.path.join(work, "eval-cache")],
                         capture_output=True, text=True)
    line = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else "{}"
    return json.loads(line)


def load_test(client, problem, candidate, clients, requests):
    """serve_load's measure: `clients` threads share `requests` evaluations."""
    ns = argparse.Namespace(problem_source=problem, candidate_source=candidate, options={},
                            clients=clients, requests=requests, warmup=0, url=client.url)
    outcomes, wall_s = serve_load.run_load(client, ns)
    return serve_load.summarize(outcomes, wall_s, ns)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernelbench", required=True)
    parser.add_argument("--kernelpro", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--pairs", nargs="+", default=["add", "fuse_gelu"])
    parser.add_argument("--requests", type=int, default=10)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--load-requests", type=int, default=32)
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="serve-vs-kb-")
    process, client = start_server(args.kernelpro,
                                   ["--device", args.device, "--state-dir",
                                    os.path.join(work, "state")],
                                   os.path.join(args.out, "serve.log"))
    results, differ = [], False
    try:
        for name in args.pairs:
            pair = find_pair(args.kernelbench, name)
            if pair is None:
                print(f"{name}: no such pair in {args.kernelbench}", file=sys.stderr)
                continue
            problem, candidate = (open(p).read() for p in pair)
            serve_s, serve_status, verdict = serve_latencies(client, problem, candidate, 2,
                                                             args.requests)
            kb_s, kb_correct, kb_last = kernelbench_latencies(args, name, pair[0], pair[1], 2,
                                                              args.requests, work)
            cli = eval_verdict(args, pair[0], pair[1], work)
            same = set(serve_status) == {cli.get("status")}
            differ |= not same
            row = {"pair": name,
                   "serve_p50_s": serve_load.percentile(serve_s, 50),
                   "serve_p95_s": serve_load.percentile(serve_s, 95),
                   "serve_latencies_s": serve_s,
                   "serve_statuses": serve_status,
                   "serve_phase_seconds": verdict.get("phase_seconds"),
                   "serve_speedup": verdict.get("speedup"),
                   "eval_status": cli.get("status"),
                   "eval_speedup": cli.get("speedup"),
                   "verdicts_identical": same,
                   "kernelbench_p50_s": serve_load.percentile(kb_s, 50) if kb_s else None,
                   "kernelbench_latencies_s": kb_s,
                   "kernelbench_correct": kb_correct,
                   "kernelbench_speedup": kb_last.get("speedup")}
            if row["kernelbench_p50_s"]:
                row["ratio"] = row["serve_p50_s"] / row["kernelbench_p50_s"]
            results.append(row)
        load = None
        if results:
            pair = find_pair(args.kernelbench, results[-1]["pair"])
            problem, candidate = (open(p).read() for p in pair)
            load = load_test(client, problem, candidate, args.clients, args.load_requests)
        health = client.health()
    finally:
        process.terminate()
        process.wait(timeout=120)
    report = {"pairs": results, "load": load, "health": health, "gpu": health.get("gpus")}
    with open(os.path.join(args.out, "serve_vs_kernelbench.json"), "w") as f:
        json.dump(report, f, indent=1, default=str)
    print(f"{'pair':<10} {'serve p50':>10} {'KB warm p50':>12} {'ratio':>6}  verdicts")
    for r in results:
        kb = r["kernelbench_p50_s"]
        print(f"{r['pair']:<10} {r['serve_p50_s']:>9.3f}s {kb if kb is None else f'{kb:.3f}s':>12}"
              f" {r.get('ratio', float('nan')):>6.2f}  serve {sorted(set(r['serve_statuses']))}"
              f" eval {r['eval_status']} KB correct {all(r['kernelbench_correct'])}")
    if load:
        print(serve_load.format_table(load))
    print(f"blank workers: {health.get('candidates_given_blank_workers')} handed over, "
          f"{health.get('candidates_given_fresh_processes')} fresh "
          f"({health.get('last_fresh_reason') or 'none needed'})")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
