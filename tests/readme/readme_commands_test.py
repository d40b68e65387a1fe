#!/usr/bin/env python3
"""The README's commands run as written on a fresh checkout.

Every line of a ```sh block in README.md is a command a newcomer will paste. This test runs the
ones that need no GPU, no API key and no more than a minute or two for real (they must exit 0),
and checks that the rest parse: run as the tests' build of the command line
(kernelpro_test_hooks), `KERNELPRO_TEST_PARSE_ONLY=1` makes it stop after reading its arguments,
so an option that was renamed or a subcommand that went away fails here; every file such a
command names must exist in the checkout. Paths under /tmp/ are moved into a fresh
temporary folder so that the test does not meet what an earlier run left there.

A sample output in the README (a ``` block whose lines after "$ COMMAND" are what it printed) is
compared with what the same command prints now, when it runs for real here: every line of the
sample has a shape (its first words, numbers masked: "status correct", "checks #/#") and the
shapes must appear in the output in the same order, so a line that was renamed, dropped or moved
fails here while measured numbers may differ. Progress lines (stderr, interleaved) are left out.

  usage: readme_commands_test.py KERNELPRO_TEST_HOOKS_BINARY [README]
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sh_commands(readme_text):
    """(line number, command) for every non-comment line of the ```sh blocks."""
    commands, in_sh = [], False
    for number, line in enumerate(readme_text.splitlines(), 1):
        if line.startswith("```"):
            in_sh = line.strip() == "```sh"
            continue
        if in_sh and line.strip() and not line.lstrip().startswith("#"):
            commands.append((number, line.split("  #")[0].strip()))
    return commands


def samples(readme_text):
    """(line number, command, [output lines]) for every "$ COMMAND" in a plain ``` block."""
    found, fence, current = [], None, None  # fence: the open block's info string, or None
    for number, line in enumerate(readme_text.splitlines(), 1):
        if line.startswith("```"):
            fence = line.strip()[3:] if fence is None else None
            current = None
            continue
        in_block = fence == ""
        if not in_block:
            continue
        if line.startswith("$ "):
            current = (number, line[2:].strip(), [])
            found.append(current)
        elif current is not None:
            current[2].append(line)
    return found


PROGRESS = re.compile(r"^(eval|optimize|suite|profile|advise): ")
STATUS_WORDS = {"ok", "warn", "fail", "FAIL"}


def shape(line):
    """A line's first two words with digits masked (a check line: its name); None for progress."""
    if not line.strip() or PROGRESS.match(line):
        return None
    words = re.sub(r"[0-9]+(\.[0-9]+)?", "#", line).split()
    if words[0] in STATUS_WORDS:  # a check line ("ok    cache  621 MiB ..."): its name, its
        return words[1] if len(words) > 1 else None  # status and details vary by machine
    if words and words[0] == "fix:":
        return "fix:"
    if words[0] == "build":  # "build compiled in ..." or "build cached ...": the cache decides
        return "build"
    return " ".join(words[:2]) or None


def missing_shapes(sample_lines, output):
    """The sample's shapes that the output lacks, in order (a subsequence test)."""
    got = [s for s in (shape(l) for l in output.splitlines()) if s]
    missing, at = [], 0
    for want in (s for s in (shape(l) for l in sample_lines) if s):
        try:
            at = got.index(want, at) + 1
        except ValueError:
            missing.append(want)
    return missing


def runs_for_real(argv):
    """Commands that need no GPU, no key and little time run for real; the rest only parse."""
    if len(argv) < 2:
        return False
    sub, rest = argv[1], argv[2:]
    if sub in ("doctor", "new-problem", "cache", "cutlass"):  # cutlass: scripts/setup's tree
        return True
    if sub == "suite":  # a suite's report of a recording is quick; running a suite is not
        return bool(rest) and rest[0] == "report" and any("fixtures" in a for a in rest)
    if "--demo" in rest:  # minutes of compiling (CPU) or a GPU
        return False
    if any(a.startswith("replay:") for a in rest) or "--from" in rest:
        return True
    device = rest[rest.index("--device") + 1] if "--device" in rest else "cuda"
    return sub in ("eval", "analyze") and device == "cpu"


def path_arguments(argv):
    """Arguments that name a file or folder of the checkout (relative paths with a slash)."""
    paths = []
    for i, arg in enumerate(argv[1:], 1):
        if argv[i - 1] == "--path" and argv[1] == "cutlass":  # a folder of the CUTLASS tree
            continue
        value = arg.split("=", 1)[1] if arg.startswith("--") and "=" in arg else arg
        value = value[len("replay:"):] if value.startswith("replay:") else value
        value = value.replace("{problem}", "1_Swish")  # suite optimize: one cassette per problem
        if "/" in value and not value.startswith(("/", "-", "http")) and ":" not in value:
            paths.append(value)
    return paths


def main():
    kernelpro = os.path.abspath(sys.argv[1])
    readme = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "README.md")
    text = open(readme, encoding="utf-8").read()
    failures = []
    leftover = re.findall(r"<<[A-Z_]+>>", text)
    if leftover:
        failures.append(f"README.md still has placeholders: {', '.join(leftover)}")
    scratch = tempfile.mkdtemp(prefix="kp_readme_")
    env = dict(os.environ, KERNELPRO_CACHE_DIR=os.path.join(scratch, "cache"))
    shared_cache = os.environ.get("KERNELPRO_TEST_SHARED_CACHE", "")
    try:
        commands = sh_commands(text)
        outputs = {}  # command as written -> (exit code, stdout + stderr) of its real run
        if not commands:
            failures.append("no ```sh block with commands in README.md")
        for number, command in commands:
            argv = shlex.split(command.replace("/tmp/", scratch + "/"))
            where = f"README.md:{number}: {command}"
            if argv[0].startswith("scripts/"):
                if not os.access(os.path.join(ROOT, argv[0]), os.X_OK):
                    failures.append(f"{where}: {argv[0]} is not an executable script")
                continue
            if argv[0] != "build/kernelpro":
                failures.append(f"{where}: commands start with build/kernelpro or scripts/")
                continue
            for path in path_arguments(argv):
                if not os.path.exists(os.path.join(ROOT, path)):
                    failures.append(f"{where}: {path} does not exist")
            real = runs_for_real(argv)
            run_env = env if real else dict(env, KERNELPRO_TEST_PARSE_ONLY="1")
            if real and shared_cache and argv[1] in ("eval", "analyze"):
                # Builds and torch's header from the cache the other tests of the build tree
                # share; every other command (cache, doctor ...) sees only its own scratch cache.
                run_env = dict(run_env, KERNELPRO_CACHE_DIR=shared_cache)
            done = subprocess.run([kernelpro] + argv[1:], cwd=ROOT, env=run_env,
                                  capture_output=True, text=True, timeout=900)
            if real:
                outputs[command] = (done.returncode, done.stdout + done.stderr)
            mode = "ran" if real else "parsed"
            print(f"{mode} (exit {done.returncode}): {command}")
            if done.returncode != 0:
                failures.append(f"{where}: {mode}, exit {done.returncode}: "
                                f"{(done.stderr or done.stdout).strip()[-600:]}")
            elif real and argv[1] == "eval":
                verdicts = re.findall(r"^status\s+(\S+)", done.stdout, re.M)
                if not verdicts or any(v != "correct" for v in verdicts):
                    failures.append(f"{where}: the README's candidates should be correct, "
                                    f"got {verdicts}: {done.stdout[-600:]}")
        for number, command, lines in samples(text):
            where = f"README.md:{number}: {command}"
            argv = shlex.split(command.replace("/tmp/", scratch + "/"))
            if argv[0] != "build/kernelpro" or not runs_for_real(argv):
                print(f"sample not compared (needs a GPU, a key or minutes): {command}")
                continue
            if command not in outputs:
                done = subprocess.run([kernelpro] + argv[1:], cwd=ROOT, env=env,
                                      capture_output=True, text=True, timeout=900)
                outputs[command] = (done.returncode, done.stdout + done.stderr)
            code, output = outputs[command]
            missing = missing_shapes(lines, output.replace(scratch + "/", "/tmp/"))
            print(f"sample compared ({len(lines)} lines, {len(missing)} missing): {command}")
            if missing:
                failures.append(f"{where}: the README's sample output has lines the command no "
                                f"longer prints (in this order): {missing}; it printed:\n"
                                f"{output[-1500:]}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for failure in failures:
        print("FAIL " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
