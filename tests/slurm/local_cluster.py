#!/usr/bin/env python3
"""A real single-node Slurm cluster on this machine, for tests and for trying `--slurm` by hand.

    tests/slurm/local_cluster.py start DIR    # prints `export SLURM_CONF=DIR/slurm.conf`
    tests/slurm/local_cluster.py stop DIR     # cancels its jobs, stops every daemon it started
    tests/slurm/local_cluster.py env DIR      # prints the client environment again

    eval "$(tests/slurm/local_cluster.py start /tmp/kp-slurm)"
    sbatch --wrap 'hostname'; squeue
    tests/slurm/local_cluster.py stop /tmp/kp-slurm

Everything lives under DIR: a fresh MUNGE key and its own munged (socket, pid, log), a minimal
slurm.conf on two free ports, the controller's state, the node daemon's spool, the logs. Nothing
under /etc or /run is touched and the system's own munged/slurmctld (if any) are left alone, so
several clusters (one per test) can run side by side. It needs Debian's slurm-wlm and munge
(scripts/setup installs them) and root: slurmd starts jobs as their submitting user.

Used as a module by tests/slurm/slurm_suite_test.py: start(dir) returns the client environment,
stop(dir) tears down. Exit codes: 0 ok, 1 the cluster did not come up (logs printed), 77 this
machine cannot run one (not root, packages missing) - what ctest's SKIP_RETURN_CODE expects.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

SKIP = 77
DAEMONS = ("munged", "slurmctld", "slurmd")
# Seconds to wait for the node to show as idle in sinfo; slurmd registers within a few seconds.
READY_TIMEOUT_S = 90


class ClusterError(Exception):
    """The cluster could not be started; the message says why (and carries the logs)."""


class Unsupported(ClusterError):
    """This machine cannot run a local cluster at all (not root, packages missing)."""


def _log(message):
    print(f"local_cluster: {message}", file=sys.stderr, flush=True)


def _paths(cluster_dir):
    d = os.path.abspath(cluster_dir)
    return {
        "dir": d,
        "conf": os.path.join(d, "slurm.conf"),
        "munge_dir": os.path.join(d, "munge"),
        "munge_key": os.path.join(d, "munge", "munge.key"),
        "munge_socket": os.path.join(d, "munge", "munge.socket"),
        "munge_pid": os.path.join(d, "munge", "munged.pid"),
        "munge_seed": os.path.join(d, "munge", "munged.seed"),
        "state": os.path.join(d, "state"),
        "spool": os.path.join(d, "spool"),
        "log": os.path.join(d, "log"),
        "pids": os.path.join(d, "pids.json"),
    }


def client_env(cluster_dir):
    """The environment a Slurm client (sbatch, squeue, kernelpro --slurm) needs for this cluster."""
    return {"SLURM_CONF": _paths(cluster_dir)["conf"]}


def _free_ports(count):
    sockets, ports = [], []
    for _ in range(count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind(("127.0.0.1", 0))
        sockets.append(s)
        ports.append(s.getsockname()[1])
    for s in sockets:
        s.close()
    return ports


def _memory_mb():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    return 1024


def _check_machine():
    if os.geteuid() != 0:
        raise Unsupported("needs root (slurmd starts each job as its user); run the test as root")
    missing = [tool for tool in ("munged", "slurmctld", "slurmd", "sinfo", "sbatch", "squeue",
                                 "scancel") if shutil.which(tool) is None]
    if missing:
        raise Unsupported(f"{', '.join(missing)} not found; install Debian's slurm-wlm and munge "
                          "(scripts/setup does)")


def _write_conf(p, node, cpus):
    ctld_port, slurmd_port = _free_ports(2)
    memory_mb = max(1, _memory_mb() * 9 // 10)
    # Only what a one-node cluster needs. Memory is not a consumable resource (CR_CPU), so jobs
    # share the node by CPUs alone; no cgroups, no accounting (sacct reports it disabled; clients
    # fall back to squeue and their own files); config_overrides keeps slurmd from draining the
    # node when the guessed sockets/cores differ from what it detects.
    conf = f"""# Written by tests/slurm/local_cluster.py; everything lives under {p['dir']}.
ClusterName=kptest
SlurmctldHost={node}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={p['munge_socket']}
CredType=cred/munge
StateSaveLocation={p['state']}
SlurmdSpoolDir={p['spool']}
SlurmctldPidFile={p['dir']}/slurmctld.pid
SlurmdPidFile={p['dir']}/slurmd.pid
SlurmctldLogFile={p['log']}/slurmctld.log
SlurmdLogFile={p['log']}/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
MailProg=/bin/true
MinJobAge=600
KillWait=5
NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory_mb} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""
    with open(p["conf"], "w") as f:
        f.write(conf)


def _tail(path, lines=30):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return "(no file)\n"


def _logs(p):
    parts = []
    for name in ("munged.out", "slurmctld.out", "slurmctld.log", "slurmd.out", "slurmd.log"):
        path = os.path.join(p["log"], name)
        if os.path.exists(path):
            parts.append(f"--- {path} (last lines) ---\n{_tail(path)}")
    return "".join(parts)


def _spawn(p, name, argv, env):
    out = open(os.path.join(p["log"], f"{name}.out"), "w")
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                            env=env, cwd=p["dir"], start_new_session=True)
    out.close()
    pids = _read_pids(p)
    pids[name] = proc.pid
    with open(p["pids"], "w") as f:
        json.dump(pids, f)
    return proc


def _read_pids(p):
    try:
        with open(p["pids"]) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def _wait(what, predicate, procs, timeout_s, p):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for name, proc in procs.items():
            if proc.poll() is not None:
                raise ClusterError(f"{name} exited with status {proc.returncode} while waiting for "
                                   f"{what}\n{_logs(p)}")
        if predicate():
            return
        time.sleep(0.5)
    raise ClusterError(f"timed out after {timeout_s} s waiting for {what}\n{_logs(p)}")


def _node_state(env, node):
    try:
        out = subprocess.run(["sinfo", "-h", "-N", "-n", node, "-o", "%t"], env=env, timeout=10,
                             capture_output=True, text=True)
    except subprocess.TimeoutExpired:
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def start(cluster_dir, cpus=None, timeout_s=READY_TIMEOUT_S):
    """Starts munged, slurmctld and slurmd under cluster_dir; returns the client environment once
    the node is idle. Raises ClusterError (with the daemons' logs) and leaves nothing running."""
    _check_machine()
    p = _paths(cluster_dir)
    if _alive_pids(p):
        raise ClusterError(f"a cluster is already running under {p['dir']}; stop it first")
    if len(p["munge_socket"]) > 100:
        raise ClusterError(f"{p['dir']} is too long a path for a unix socket; use a shorter one")
    for key in ("dir", "state", "spool", "log"):
        os.makedirs(p[key], exist_ok=True)
    # munged refuses a socket directory that others may write to, and warns when others cannot
    # reach the socket; 0755 satisfies both.
    os.makedirs(p["munge_dir"], mode=0o755, exist_ok=True)
    os.chmod(p["munge_dir"], 0o755)
    for stale in ("pids",):
        if os.path.exists(p[stale]):
            os.remove(p[stale])
    # A fresh key per cluster: only this cluster's daemons and clients share it.
    if not os.path.exists(p["munge_key"]):
        fd = os.open(p["munge_key"], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(os.urandom(1024))
    node = socket.gethostname().split(".")[0]
    _write_conf(p, node, cpus or os.cpu_count() or 1)

    env = dict(os.environ, SLURM_CONF=p["conf"])
    procs = {}
    try:
        # -F: stay in the foreground, so the pid we hold is the daemon's; -f: accept running as
        # root and a key outside /etc/munge.
        procs["munged"] = _spawn(p, "munged", [
            "munged", "-F", "-f", f"--socket={p['munge_socket']}", f"--key-file={p['munge_key']}",
            f"--pid-file={p['munge_pid']}", f"--seed-file={p['munge_seed']}",
            f"--log-file={p['log']}/munged.log"], env)
        _wait("munged's socket", lambda: os.path.exists(p["munge_socket"]), procs, 20, p)
        # -c: a fresh start, no jobs recovered from an earlier cluster in the same folder.
        procs["slurmctld"] = _spawn(p, "slurmctld", ["slurmctld", "-D", "-c", "-f", p["conf"]], env)
        procs["slurmd"] = _spawn(p, "slurmd", ["slurmd", "-D", "-N", node, "-f", p["conf"]], env)
        _wait(f"node {node} to be idle in sinfo", lambda: _node_state(env, node) == "idle", procs,
              timeout_s, p)
    except BaseException:
        stop(cluster_dir, quiet=True)
        raise
    return client_env(cluster_dir)


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _alive_pids(p):
    """The daemons recorded in pids.json that still run (and are still what we started: a pid
    reused by another program is left alone)."""
    alive = {}
    for name, pid in _read_pids(p).items():
        if name in DAEMONS and name in _cmdline(pid):
            alive[name] = pid
    return alive


def _processes_using(directory):
    """slurmstepd processes with a file open under `directory`: the job steps of this cluster that
    outlived their slurmd (they hold the node's log and spool sockets open). Steps of another
    cluster, and any other program, are left alone."""
    found = []
    prefix = directory.rstrip("/") + "/"
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or not _cmdline(entry).startswith("slurmstepd"):
            continue
        try:
            fds = os.listdir(f"/proc/{entry}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{entry}/fd/{fd}").startswith(prefix):
                    found.append(int(entry))
                    break
            except OSError:
                continue
    return found


def _wait_gone(pids, timeout_s):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        pids = [pid for pid in pids if os.path.exists(f"/proc/{pid}") and _cmdline(pid)]
        if not pids:
            return []
        time.sleep(0.2)
    return pids


def stop(cluster_dir, quiet=False):
    """Cancels the cluster's jobs and stops its daemons (TERM, then KILL). Safe to call twice."""
    p = _paths(cluster_dir)
    alive = _alive_pids(p)
    env = dict(os.environ, SLURM_CONF=p["conf"])
    if "slurmctld" in alive and os.path.exists(p["conf"]):
        # Cancel first, so that slurmd's job steps end their jobs' processes themselves.
        try:
            jobs = subprocess.run(["squeue", "-h", "-o", "%A"], env=env, capture_output=True,
                                  text=True, timeout=10).stdout.split()
            if jobs:
                subprocess.run(["scancel", *sorted(set(jobs))], env=env, capture_output=True,
                               timeout=10)
                deadline = time.monotonic() + 15
                while time.monotonic() < deadline:
                    left = subprocess.run(["squeue", "-h", "-o", "%A"], env=env,
                                          capture_output=True, text=True, timeout=10).stdout
                    if not left.strip():
                        break
                    time.sleep(0.5)
        except subprocess.TimeoutExpired:
            pass
    # Node daemon, controller, then munged (the others need it to the end).
    for name in ("slurmd", "slurmctld", "munged"):
        pid = alive.get(name)
        if pid is None:
            continue
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
        if _wait_gone([pid], 10):
            os.kill(pid, signal.SIGKILL)
            _wait_gone([pid], 5)
        if not quiet:
            _log(f"stopped {name} (pid {pid})")
    leftovers = _processes_using(p["dir"])
    for pid in leftovers:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if leftovers and not quiet:
        _log(f"killed leftover processes {leftovers} that held files under {p['dir']}")
    if os.path.exists(p["pids"]):
        os.remove(p["pids"])


def main(argv):
    if len(argv) < 3 or argv[1] not in ("start", "stop", "env"):
        print("usage: local_cluster.py start|stop|env DIR [--cpus N]", file=sys.stderr)
        return 2
    command, cluster_dir = argv[1], argv[2]
    cpus = None
    if len(argv) == 5 and argv[3] == "--cpus":
        cpus = int(argv[4])
    try:
        if command == "start":
            env = start(cluster_dir, cpus=cpus)
            _log(f"cluster up under {os.path.abspath(cluster_dir)}; stop it with "
                 f"`{argv[0]} stop {cluster_dir}`")
        elif command == "stop":
            stop(cluster_dir)
            return 0
        else:
            env = client_env(cluster_dir)
    except Unsupported as e:
        _log(f"cannot run a local cluster here: {e}")
        return SKIP
    except ClusterError as e:
        _log(str(e))
        return 1
    for key, value in env.items():
        print(f"export {key}={value}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
