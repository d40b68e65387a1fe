"""Shared pieces of the bench scripts: running `kernelpro eval`, small statistics, tables.

Everything here but `run_kernelpro` is pure (no processes, no GPU), so bench/benchlib_test.py
checks it on any machine. The scripts print Markdown tables and also write their rows as JSON.
"""

import json
import os
import subprocess
import time
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_KERNELPRO = os.path.join(ROOT, "build-gpu", "kernelpro")  # scripts/gpu_verify OUT binary


@dataclass
class KernelproRun:
    """One `kernelpro eval --json` invocation as the user saw it."""
    command: list
    wall_s: float
    exit_code: int
    results: list = field(default_factory=list)  # one dict per candidate, in output order
    stderr_tail: str = ""

    def to_json(self):
        return {"command": self.command, "wall_s": self.wall_s, "exit_code": self.exit_code,
                "results": self.results, "stderr_tail": self.stderr_tail}


def kernelpro_command(binary, problem, candidates, device="cuda", cache_dir=None, extra=()):
    cmd = [binary, "eval", "--json", "--device", device, "--problem", problem]
    for c in candidates:
        cmd += ["--candidate", c]
    if cache_dir:
        cmd += ["--cache-dir", cache_dir]
    return cmd + list(extra)


def run_kernelpro(command, timeout_s=None):
    """Runs one `kernelpro eval --json` command; its wall time includes every start-up."""
    start = time.perf_counter()
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s,
                             check=False)
        code, stdout, stderr = out.returncode, out.stdout, out.stderr
    except subprocess.TimeoutExpired as e:
        code, stdout = 124, e.stdout or ""
        stderr = (e.stderr or "") + f"\ntimed out after {timeout_s} s"
        stdout = stdout.decode() if isinstance(stdout, bytes) else stdout
        stderr = stderr.decode() if isinstance(stderr, bytes) else stderr
    wall = time.perf_counter() - start
    return KernelproRun(command=command, wall_s=wall, exit_code=code,
                        results=parse_json_lines(stdout), stderr_tail=stderr[-3000:])


def run_logged(command, log_path, env=None, timeout_s=None):
    """Runs `command` with its stdout and stderr in `log_path`; returns (exit code, wall
    seconds), exit code 124 when it passed `timeout_s`."""
    start = time.perf_counter()
    with open(log_path, "w") as log:
        try:
            code = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env,
                                  timeout=timeout_s, check=False).returncode
        except subprocess.TimeoutExpired:
            code = 124
    return code, time.perf_counter() - start


def parse_json_lines(text):
    """The JSON objects of `text`, one per non-empty line; lines that are not JSON are skipped
    (a tool's stray output must not lose the rows that did come)."""
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


def median(values):
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def within_tolerance(measured, expected, abs_tol, rel_tol):
    """|measured - expected| <= max(abs_tol, rel_tol * |expected|)."""
    if measured is None or expected is None:
        return False
    return abs(measured - expected) <= max(abs_tol, rel_tol * abs(expected))


def interval_excludes(interval, value):
    """Whether [low, high] leaves out `value`; a missing interval excludes nothing."""
    if not interval or interval[0] is None or interval[1] is None:
        return False
    return not interval[0] <= value <= interval[1]


def fmt(value, digits=2, unit=""):
    """A number for a table cell; None becomes an en dash."""
    if value is None:
        return "–"
    return f"{value:.{digits}f}{unit}"


def ms_to_us(ms):
    return None if ms is None else ms * 1e3


def ratio(numerator, denominator):
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def markdown_table(headers, rows):
    """A Markdown table; numbers should already be cells (strings). Columns are padded so the
    table also reads as plain text."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(cells[0], widths)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    for row in cells[1:]:
        lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |")
    return "\n".join(lines)


def write_json(path, data):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(data, f, indent=2, default=str)
        f.write("\n")
