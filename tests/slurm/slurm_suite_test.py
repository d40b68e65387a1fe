#!/usr/bin/env python3
"""A CPU suite through a real Slurm cluster: submitted as a job array, watched, cut short, resumed.

The test starts a single-node cluster on this machine (tests/slurm/local_cluster.py: munged,
slurmctld and slurmd under a temporary folder) and stops it at the end, whatever happens. Then:

  1. `kernelpro suite eval ... --device cpu --slurm OPTS --shards 2` submits a 2-task job array;
     the test polls `kernelpro suite status DIR` until Slurm has nothing left of it and checks that
     every task has its result and the report counts every problem, all correct.
  2. A second suite is submitted the same way; as soon as shard 0 has started a task, that array
     task is cancelled (scancel JOB_0), leaving shard 0's tasks unfinished. `kernelpro suite
     resume DIR --slurm OPTS` must resubmit shard 0 alone and finish the suite, with every result
     that existed before the cancel left as it was (nothing redone, nothing lost).

  usage: slurm_suite_test.py KERNELPRO_BINARY
Exit 77 (skipped) where no cluster can run here (not root; slurm-wlm or munge missing).
Set KERNELPRO_KEEP_SLURM_TEST=1 to keep the temporary folder (suites, cluster logs) afterwards.

Everything that knows the suite's file layout or the wording of `suite status` is in the
"suite layout" helpers below, so that a change there is a change in one place.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import local_cluster  # noqa: E402

# The suite: problem stem -> (problem file, a correct CPU candidate), all from tests/. Two shards
# of two tasks each, so that a shard cut short after its first task still has work left.
PROBLEMS = {
    "tiny_swish": ("tests/problems/tiny_swish.py", "tests/candidates/good/cpu_tiny_swish.py"),
    "relu_rand": ("tests/problems/relu_rand.py", "tests/candidates/good/cpu_relu_rand.py"),
    "small_matmul": ("tests/problems/small_matmul.py",
                     "tests/candidates/good/cpu_small_matmul.py"),
    "small_linear": ("tests/problems/small_linear.py",
                     "tests/candidates/good/cpu_small_linear.py"),
}
SHARDS = 2
# Quoted words on purpose: kernelpro splits the option string the way a shell would.
SBATCH_OPTIONS = "--time=30 --cpus-per-task=1 --comment='kernelpro slurm e2e'"
# Generous: on a busy 2-core machine each task compiles a C++ extension.
SUITE_TIMEOUT_S = 900
POLL_S = 1.0


# --- suite layout (adjust here when the suite's files or status wording change) -------------

def manifest_task_ids(suite):
    """Task ids in manifest order: task i belongs to shard i % SHARDS."""
    with open(os.path.join(suite, "suite.json")) as f:
        return [task["id"] for task in json.load(f)["tasks"]]


def task_file(suite, task_id, name):
    return os.path.join(suite, "tasks", task_id, name)


def done_tasks(suite):
    """Tasks with a result (written last, via rename: present means done)."""
    return {t for t in manifest_task_ids(suite)
            if os.path.exists(task_file(suite, t, "result.json"))}


def started_tasks(suite):
    return {t for t in manifest_task_ids(suite)
            if os.path.exists(task_file(suite, t, "claim.json"))
            or os.path.exists(task_file(suite, t, "result.json"))}


def submissions(suite):
    with open(os.path.join(suite, "slurm", "submissions.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def report_json(kp, suite, env):
    out = run([kp, "suite", "report", suite, "--json"], env).stdout
    try:
        return json.loads(out)
    except ValueError:
        with open(os.path.join(suite, "report", "report.json")) as f:
            return json.load(f)


# --- helpers ---------------------------------------------------------------------------------

def run(argv, env, check=True):
    print("+ " + " ".join(argv), flush=True)
    result = subprocess.run(argv, env=env, cwd=env["KP_TEST_TMP"], capture_output=True, text=True,
                            timeout=300)
    if result.stdout.strip():
        print(result.stdout.rstrip())
    if result.stderr.strip():
        print(result.stderr.rstrip(), file=sys.stderr)
    if check and result.returncode != 0:
        raise AssertionError(f"{argv[:3]} exited {result.returncode}")
    return result


def queued(env, job_ids):
    """Array tasks of these jobs Slurm still runs or will run ("4711_0 RUNNING")."""
    out = subprocess.run(["squeue", "-h", "-r", "-j", ",".join(job_ids), "-o", "%i %T"], env=env,
                         capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        # Slurm forgets a job some minutes after its end; anything else is the cluster failing.
        assert "Invalid job id" in out.stderr, f"squeue failed: {out.stderr.strip()}"
        return []
    return out.stdout.split()


def wait_for(what, predicate, timeout_s, on_timeout):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(POLL_S)
    on_timeout()
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def make_inputs(tmp):
    problems, candidates = os.path.join(tmp, "problems"), os.path.join(tmp, "candidates")
    os.makedirs(problems)
    os.makedirs(candidates)
    for stem, (problem, candidate) in PROBLEMS.items():
        shutil.copy(os.path.join(ROOT, problem), os.path.join(problems, stem + ".py"))
        shutil.copy(os.path.join(ROOT, candidate), os.path.join(candidates, stem + ".py"))
    return problems, candidates


def dump_logs(suite, cluster):
    for folder in (os.path.join(suite, "slurm"), os.path.join(cluster, "log")):
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if name.endswith((".out", ".log")):
                print(f"--- {os.path.join(folder, name)} ---")
                print(local_cluster._tail(os.path.join(folder, name), 40))


def submit(kp, env, problems, candidates, suite):
    run([kp, "suite", "eval", "--problems", problems, "--candidates", candidates, "--dir", suite,
         "--device", "cpu", "--slurm", SBATCH_OPTIONS, "--shards", str(SHARDS)], env)
    subs = submissions(suite)
    assert len(subs) == 1, f"one sbatch call expected, submissions.jsonl has {len(subs)}"
    assert subs[0]["shards"] == SHARDS and subs[0]["array"] == f"0-{SHARDS - 1}", subs[0]
    assert subs[0]["sbatch_args"] == ["--time=30", "--cpus-per-task=1",
                                      "--comment=kernelpro slurm e2e"], subs[0]
    return subs[0]["job_id"]


def wait_until_slurm_is_done(kp, env, suite, cluster, job_ids):
    """Polls `suite status` (which must keep working) until Slurm has none of the jobs left."""
    def finished():
        run([kp, "suite", "status", suite], env)
        return not queued(env, job_ids)
    wait_for(f"jobs {job_ids} to leave the queue", finished, SUITE_TIMEOUT_S,
             lambda: dump_logs(suite, cluster))


def check_complete(kp, env, suite, cluster):
    ids = manifest_task_ids(suite)
    missing = set(ids) - done_tasks(suite)
    if missing:
        dump_logs(suite, cluster)
    assert not missing, f"tasks without a result: {sorted(missing)}"
    report = report_json(kp, suite, env)
    assert report["overall"]["n"] == len(PROBLEMS), report["overall"]
    assert report["overall"]["correct_rate"] == 1.0, report["overall"]


def read_results(suite, task_ids):
    contents = {}
    for t in task_ids:
        with open(task_file(suite, t, "result.json"), "rb") as f:
            contents[t] = f.read()
    return contents


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    kp = os.path.abspath(sys.argv[1])
    try:
        local_cluster._check_machine()
    except local_cluster.Unsupported as e:
        print(f"SKIP: {e}")
        return local_cluster.SKIP

    tmp = tempfile.mkdtemp(prefix="kp-slurm-suite-")
    cluster = os.path.join(tmp, "cluster")
    ok = False
    try:
        env = dict(os.environ, KP_TEST_TMP=tmp, **local_cluster.start(cluster))
        problems, candidates = make_inputs(tmp)

        # 1. A whole suite through a job array.
        suite = os.path.join(tmp, "suite-a")
        job = submit(kp, env, problems, candidates, suite)
        wait_until_slurm_is_done(kp, env, suite, cluster, [job])
        check_complete(kp, env, suite, cluster)
        for shard in range(SHARDS):
            log = os.path.join(suite, "slurm", f"slurm-{job}_{shard}.out")
            assert os.path.exists(log), f"no Slurm log for array task {shard}: {log}"
        print(f"ok: suite {suite} ran as job array {job}")

        # 2. Cut shard 0 short as soon as it has started a task, then resume.
        suite = os.path.join(tmp, "suite-b")
        job = submit(kp, env, problems, candidates, suite)
        ids = manifest_task_ids(suite)
        shard0 = {t for i, t in enumerate(ids) if i % SHARDS == 0}
        wait_for("shard 0 to start a task", lambda: started_tasks(suite) & shard0, SUITE_TIMEOUT_S,
                 lambda: dump_logs(suite, cluster))
        subprocess.run(["scancel", f"{job}_0"], env=env, check=True, timeout=30)
        print(f"cancelled array task {job}_0 with {sorted(started_tasks(suite) & shard0)} started")
        wait_until_slurm_is_done(kp, env, suite, cluster, [job])
        done_before = done_tasks(suite)
        assert shard0 - done_before, (
            f"shard 0 finished {sorted(shard0)} before it could be cancelled; nothing to resume")
        results_before = read_results(suite, done_before)

        run([kp, "suite", "resume", suite, "--slurm", SBATCH_OPTIONS], env)
        subs = submissions(suite)
        assert len(subs) == 2, f"resume should submit once more; submissions: {subs}"
        assert subs[1]["array"] == "0", f"only shard 0 had work left; resubmitted {subs[1]}"
        assert subs[1]["shards"] == SHARDS, subs[1]
        wait_until_slurm_is_done(kp, env, suite, cluster, [subs[1]["job_id"]])
        check_complete(kp, env, suite, cluster)
        after = read_results(suite, done_before)
        rewritten = {t: (json.loads(results_before[t]).get("status"),
                         json.loads(after[t]).get("status"))
                     for t in done_before if after[t] != results_before[t]}
        assert not rewritten, (
            "results that existed before the cancel were rewritten by resume "
            f"(task: status before, after): {rewritten}")
        print(f"ok: suite {suite} lost shard 0 to scancel and was finished by resume "
              f"({len(done_before)} of {len(ids)} results kept as they were)")
        ok = True
    except local_cluster.ClusterError as e:
        print(f"FAIL: the local Slurm cluster did not start: {e}")
    finally:
        local_cluster.stop(cluster, quiet=True)
        if ok and not os.environ.get("KERNELPRO_KEEP_SLURM_TEST"):
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print(f"kept {tmp} (suites, Slurm logs, cluster logs)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
