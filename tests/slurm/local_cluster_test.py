#!/usr/bin/env python3
"""The local Slurm cluster of tests/slurm/local_cluster.py works: it comes up, runs a job array
with one task per array index, and `stop` leaves none of its daemons or jobs behind.

  usage: local_cluster_test.py
Exit 77 (skipped) where no cluster can run: not root, or slurm-wlm/munge not installed.
"""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import local_cluster  # noqa: E402


def wait_for_queue_empty(env, timeout_s):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        out = subprocess.run(["squeue", "-h", "-o", "%i"], env=env, capture_output=True,
                             text=True, check=True).stdout
        if not out.strip():
            return
        time.sleep(0.5)
    raise AssertionError(f"jobs still queued after {timeout_s} s")


def main():
    try:
        local_cluster._check_machine()
    except local_cluster.Unsupported as e:
        print(f"SKIP: {e}")
        return local_cluster.SKIP
    with tempfile.TemporaryDirectory(prefix="kp-slurm-") as tmp:
        cluster = os.path.join(tmp, "c")
        env = dict(os.environ, **local_cluster.start(cluster))
        try:
            script = os.path.join(tmp, "job.sh")
            with open(script, "w") as f:
                f.write("#!/bin/bash\n"
                        f"#SBATCH --output={tmp}/out-%A_%a.txt\n"
                        'echo "task $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_JOB_ID"\n')
            job = subprocess.run(["sbatch", "--parsable", "--array=0-2", script], env=env,
                                 capture_output=True, text=True, check=True).stdout.strip()
            assert job.isdigit(), f"sbatch --parsable printed {job!r}"
            wait_for_queue_empty(env, 120)
            for task in range(3):
                with open(os.path.join(tmp, f"out-{job}_{task}.txt")) as f:
                    assert f.read() == f"task {task} of {job}\n"
            # A long job is still running when the cluster stops; stop must end it too.
            subprocess.run(["sbatch", "--parsable", "--wrap", "sleep 300"], env=env,
                           capture_output=True, check=True)
        finally:
            pids = local_cluster._read_pids(local_cluster._paths(cluster))
            local_cluster.stop(cluster)
        alive = [name for name, pid in pids.items() if local_cluster._cmdline(pid)]
        assert not alive, f"still running after stop: {alive}"
        assert not local_cluster._processes_using(os.path.abspath(cluster)), "slurmstepd left"
    print("ok: a 3-task array ran on the local cluster; stop left nothing running")
    return 0


if __name__ == "__main__":
    sys.exit(main())
