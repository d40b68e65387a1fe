"""Runs the build that torch's load_inline describes, faster than ninja would, with the same result.

load_inline writes main.cpp (its `#include <torch/extension.h>`, the candidate's C++ and the
pybind11 module) and cuda.cu (`#include <torch/types.h>`, <cuda.h>, <cuda_runtime.h>, the
candidate's CUDA), then a build.ninja with torch's own compiler commands (include paths,
TORCH_EXTENSION_NAME, the C++ ABI and pybind11 defines, -fPIC, the architectures of
TORCH_CUDA_ARCH_LIST, the candidate's extra flags) and runs ninja on it. Most of a cold build is
spent parsing torch's headers. While a BuildCache builds, `installed()` replaces torch's ninja
runner with `run_build`, which reads that build.ninja and runs its commands itself, each
translation unit in parallel, with two changes that leave the built .so the same:

- main.cpp gets torch/extension.h from a precompiled header (g++ .gch made by the trusted `pch`
  step with exactly these flags) when one is offered, its files match the content hashes the
  binary passed, and g++ accepts it (-Winvalid-pch; a rejected header is parsed as text, as
  before). The forced `-include` is the same header main.cpp starts with, so the token stream
  does not change.
- cuda.cu is compiled with lighter torch headers when a conservative scan of the candidate's
  CUDA allows and a trial compile proves it: without the torch/types.h that load_inline prepends
  when the CUDA names nothing of torch's; or, when it includes <torch/extension.h> but uses only
  tensor types, ATen and CUDA helpers (no pybind11, py::, torch::nn, autograd, jit, ...), with
  that include dropped, so it sees torch/types.h (the first line of cuda.cu) and the ATen and
  CUDA headers it includes itself: torch/extension.h adds torch's C++ frontend and pybind11,
  which such a source cannot name, and most of nvcc's time. A `#line` directive keeps the file
  name and line numbers that __FILE__, assert and the diagnostics see. A failed trial is silent
  (a build note): the unchanged file is compiled next. The binding translation unit (main.cpp)
  is never changed, so the module's name and exported functions are the same.

Anything in build.ninja this runner does not understand hands the build back to ninja. A failure
is reported in ninja's words ("FAILED: ...", the command, its output), so diagnostics read as
they did. Every deviation from the plain path is written to `notes` for the build record.
"""

import concurrent.futures
import contextlib
import functools
import os
import re
import subprocess
import sys

from .common import sha256_file, sha256_text

PCH_HEADER = "kp_torch_extension.h"
EXTENSION_INCLUDE = "#include <torch/extension.h>"
TYPES_INCLUDE = "#include <torch/types.h>"

# Any of these in the CUDA source means it may use what torch/types.h declares or defines.
_TORCH_NAMES = re.compile(r"\b(torch|at|c10|caffe2|pybind11|py|Tensor|TORCH_\w*|AT_\w*|C10_\w*|"
                          r"PYBIND11_\w*|CAFFE2_\w*|ATen|THC\w*)\b")
# torch/extension.h is torch/types.h (ATen, the tensor factories) plus torch/all.h (the C++
# frontend) and torch/python.h (pybind11). Any of these names in the CUDA source may need the
# latter two (the frontend's namespaces also unqualified, after a `using namespace torch;`).
# The scan is conservative on purpose; the trial compile is the proof.
_FRONTEND_NAMES = re.compile(
    r"\b(pybind11|PYBIND11_\w*|TORCH_LIBRARY\w*|TORCH_MODULE\w*|THP\w*)\b"
    r"|(?<![\w:])(py|nn|optim|jit|autograd|serialize|python)::"
    r"|\btorch::(nn|optim|data|jit|autograd|serialize|python|utils|fft|linalg|special|nested|"
    r"cuda|mps|xpu|library|stable|onnx|detail)::"
    r"|\btorch::(save|load|manual_seed|NoGradGuard|AutoGradMode|enable_grad|InferenceMode|"
    r"autocast|Library|Module|Functional|Sequential|ModuleHolder|OrderedDict|ExpandingArray)\b")
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"]', re.M)


class Unsupported(Exception):
    """build.ninja holds something this runner does not interpret; ninja builds instead."""


# ----------------------------------------------------------------------------------------------
# build.ninja


class NinjaFile:
    """The subset of the ninja language torch writes: top-level variables, rules, build edges
    (explicit inputs, `|` implicit and `||` order-only ones), per-edge variables, `default`."""

    def __init__(self, text):
        self.variables = {}
        self.rules = {}
        self.edges = []  # dicts: outputs, rule, inputs, deps (all inputs incl. implicit), vars
        self.defaults = []
        self._parse(text)

    @staticmethod
    def _logical_lines(text):
        line, continued = "", False
        for raw in text.split("\n"):
            if continued:  # ninja skips the leading whitespace of a continuation line
                raw = raw.lstrip(" ")
            continued = raw.endswith("$") and not raw.endswith("$$")
            if continued:
                line += raw[:-1]
                continue
            line += raw
            yield line
            line = ""
        if line:
            yield line

    def _parse(self, text):
        scope = None  # the rule or edge whose indented bindings follow
        for line in self._logical_lines(text):
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            indented = line[0] in " \t"
            if indented:
                if scope is None:
                    raise Unsupported(f"indented line outside a rule or build: {stripped!r}")
                key, value = self._binding(stripped)
                scope[key] = value
                continue
            scope = None
            if stripped.startswith("rule "):
                name = stripped[5:].strip()
                scope = self.rules.setdefault(name, {})
            elif stripped.startswith("build "):
                scope = self._edge(stripped[6:])
            elif stripped.startswith("default "):
                self.defaults += _split_paths(stripped[8:])
            elif stripped.split()[0] in ("include", "subninja", "pool"):
                raise Unsupported(f"'{stripped.split()[0]}' statements")
            else:
                key, value = self._binding(stripped)
                self.variables[key] = expand(value, self.variables)

    @staticmethod
    def _binding(line):
        if "=" not in line:
            raise Unsupported(f"unexpected line {line!r}")
        key, value = line.split("=", 1)
        return key.strip(), value.lstrip()

    def _edge(self, text):
        colon = re.search(r"(?<!\$):", text)
        if not colon:
            raise Unsupported(f"build line without ':': {text!r}")
        outputs = _split_paths(text[:colon.start()])
        rest = _split_paths(text[colon.end():])
        if not rest:
            raise Unsupported("build line without a rule")
        rule, rest = rest[0], rest[1:]
        inputs, deps, mode = [], [], "explicit"
        for item in rest:
            if item in ("|", "||", "|@"):
                mode = item
                continue
            if mode == "explicit":
                inputs.append(item)
            if mode in ("explicit", "|", "||"):
                deps.append(item)
        edge = {"outputs": outputs, "rule": rule, "inputs": inputs, "deps": deps, "vars": {}}
        self.edges.append(edge)
        return edge["vars"]

    def command(self, edge):
        """The edge's command with every variable expanded (edge, then rule, then file scope)."""
        if edge["rule"] == "phony":
            return None
        rule = self.rules.get(edge["rule"])
        if rule is None or "command" not in rule:
            raise Unsupported(f"unknown rule {edge['rule']!r}")
        scope = dict(self.variables)
        scope.update({k: expand(v, self.variables) for k, v in edge["vars"].items()})
        scope["in"] = " ".join(edge["inputs"])
        scope["out"] = " ".join(edge["outputs"])
        return expand(rule["command"], scope)


def _split_paths(text):
    """Splits on unescaped spaces and undoes `$ `, `$:` and `$$`."""
    parts, current, i = [], "", 0
    while i < len(text):
        c = text[i]
        if c == "$" and i + 1 < len(text) and text[i + 1] in " :$":
            current += text[i + 1]
            i += 2
            continue
        if c == "$":
            raise Unsupported(f"variable in a path: {text!r}")
        if c in " \t":
            if current:
                parts.append(current)
            current = ""
        else:
            current += c
        i += 1
    if current:
        parts.append(current)
    return parts


def expand(value, scope):
    """Ninja's variable expansion: $name, ${name}, $$, `$ ` and `$:`; unknown names are empty."""
    def sub(match):
        token = match.group(0)
        if token in ("$$", "$ ", "$:"):
            return token[1]
        name = match.group(1) or match.group(2)
        return scope.get(name, "")
    return re.sub(r"\$\{([A-Za-z0-9_.-]+)\}|\$([A-Za-z0-9_-]+)|\$\$|\$ |\$:", sub, value)


# ----------------------------------------------------------------------------------------------
# Precompiled headers: the key both the pch step and the builds compute


def normalized_cflags(cflags, post_cflags):
    """The C++ compile flags a precompiled torch/extension.h depends on: torch's flags without
    the extension's name (which the torch headers never read), spaces normalised."""
    words = [w for w in (cflags + " " + post_cflags).split()
             if not w.startswith("-DTORCH_EXTENSION_NAME=")]
    return " ".join(words)


@functools.lru_cache(maxsize=None)
def pch_toolchain(cxx):
    """What a precompiled torch/extension.h depends on besides its flags: the compiler's version
    and torch's version and headers (the size and time of torch/extension.h and version.h stand
    in for the whole tree)."""
    import torch
    from torch.utils import cpp_extension

    parts = {"torch": torch.__version__, "python": sys.version}
    try:
        out = subprocess.run(cxx.split() + ["--version"], capture_output=True, text=True,
                             timeout=30)
        parts["cxx"] = (out.stdout or out.stderr).strip()
    except (OSError, subprocess.SubprocessError):
        parts["cxx"] = "unavailable"
    for include in cpp_extension.include_paths():
        for rel in ("torch/extension.h", "torch/version.h"):
            path = os.path.join(include, rel)
            if os.path.exists(path):
                st = os.stat(path)
                parts[path] = f"{st.st_size}:{st.st_mtime_ns}"
    return tuple(sorted(parts.items()))


def pch_key(cxx, flags):
    """Names CACHE/pch/<key>: the compiler, the normalised flags and the toolchain."""
    return sha256_text(cxx, flags, repr(pch_toolchain(cxx)))[:24]


def pch_files(key):
    return [f"{key}/{PCH_HEADER}", f"{key}/{PCH_HEADER}.gch"]


class PchOffer:
    """The precompiled headers the binary offers a build: their folder (read-only in the sandbox)
    and the content hashes the trusted pch step recorded, `{"<key>/<file>": sha256}`."""

    def __init__(self, pch_dir, manifest):
        self.dir = pch_dir
        self.manifest = manifest or {}
        self._checked = {}

    def header_for(self, key, notes):
        """The header to force-include for `key`, or None (with a note) when there is none or
        its files do not match their hashes."""
        if not self.dir:
            return None
        files = pch_files(key)
        if not all(f in self.manifest for f in files):
            notes.append(f"no precompiled torch/extension.h for these flags (key {key}); "
                         "compiled without one")
            return None
        if key not in self._checked:
            ok = True
            for f in files:
                path = os.path.join(self.dir, f)
                try:
                    ok = ok and sha256_file(path) == self.manifest[f]
                except OSError:
                    ok = False
            self._checked[key] = ok
        if not self._checked[key]:
            notes.append(f"the precompiled header {key} failed its content check; compiled "
                         "without it")
            return None
        return os.path.join(self.dir, files[0])


# ----------------------------------------------------------------------------------------------
# The runner


def _is_load_inline_cpp(path):
    try:
        with open(path, errors="replace") as f:
            return f.readline().rstrip("\n") == EXTENSION_INCLUDE
    except OSError:
        return False


def _load_inline_cuda(path):
    """(first line, the rest, the rest without comments) of a cuda.cu that load_inline wrote
    (its first line is TYPES_INCLUDE), else None."""
    try:
        with open(path, errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    first, _, rest = text.partition("\n")
    if first != TYPES_INCLUDE:
        return None
    return first, rest, re.sub(r"//[^\n]*|/\*.*?\*/", " ", rest, flags=re.S)


def light_cuda_source(path):
    """cuda.cu without load_inline's torch/types.h, or None when its CUDA may need torch.
    The include becomes a #line directive, so names and line numbers stay those of cuda.cu."""
    source = _load_inline_cuda(path)
    # The other lines load_inline prepends are CUDA's own headers; the candidate's part follows.
    if source is None or _TORCH_NAMES.search(source[2]):
        return None
    return f'#line 2 "{os.path.abspath(path)}"\n' + source[1]


def types_only_cuda_source(path):
    """cuda.cu with its `#include <torch/extension.h>` dropped, or None when the candidate's CUDA
    does not include it or may use what it adds beyond torch/types.h (the C++ frontend, pybind11)
    or includes other torch headers. Line numbers are kept (the include becomes an empty line)
    and a #line directive names cuda.cu."""
    source = _load_inline_cuda(path)
    if source is None:
        return None
    first, rest, code = source
    # `#include "torch/extension.h"` counts as well; string literals are scanned like code (a
    # name in one only costs the speed-up).
    torch_includes = [i for i in _INCLUDE.findall(code) if i.startswith("torch/")]
    if "torch/extension.h" not in torch_includes:
        return None
    if any(i not in ("torch/extension.h", "torch/types.h") for i in torch_includes):
        return None
    if _FRONTEND_NAMES.search(re.sub(r"\s*::\s*", "::", code)):
        return None
    # Only directives on their own lines are dropped; the line stays, empty.
    lines = rest.split("\n")
    for i, line in enumerate(lines):
        include = _INCLUDE.match(line)
        if include and include.group(1) == "torch/extension.h" and "/*" not in line:
            lines[i] = ""
        elif "torch/extension.h" in line and not line.lstrip().startswith(("//", "/*", "*")):
            return None  # the include in a macro, after a comment, on a continued line
    return f'#line 1 "{os.path.abspath(path)}"\n{first}\n' + "\n".join(lines)


def _run(command, cwd):
    done = subprocess.run(command, shell=True, cwd=cwd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, env=os.environ)
    return done.returncode, done.stdout.decode("utf-8", errors="replace")


class Runner:
    """Builds one build.ninja. `pch` is a PchOffer or None; `jobs` is how many commands run at
    once (MAX_JOBS, as torch's ninja call uses it)."""

    def __init__(self, build_dir, pch=None, jobs=None):
        self.build_dir = build_dir
        self.pch = pch
        self.jobs = jobs or _jobs()
        self.notes = []
        self.log = []  # ninja-style lines for the failure message

    def build(self, ninja):
        """Returns None when everything was built, else ninja's failure text."""
        edges = [e for e in ninja.edges if e["rule"] != "phony"]
        produced = {o for e in edges for o in e["outputs"]}
        commands = {id(e): ninja.command(e) for e in edges}
        pending = list(edges)
        done_outputs = set()
        total = len(edges)
        started = 0
        failure = None
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, self.jobs)) as pool:
            running = {}
            while (pending or running) and failure is None:
                ready = [e for e in pending
                         if all(d in done_outputs or d not in produced for d in e["deps"])]
                for edge in ready:
                    if len(running) >= self.jobs:
                        break
                    pending.remove(edge)
                    started += 1
                    self.log.append(f"[{started}/{total}] {commands[id(edge)]}")
                    running[pool.submit(self._edge, ninja, edge, commands[id(edge)])] = edge
                if not running:
                    raise Unsupported("build edges wait on each other")
                finished, _ = concurrent.futures.wait(
                    running, return_when=concurrent.futures.FIRST_COMPLETED)
                for future in finished:
                    edge = running.pop(future)
                    code, output, command = future.result()
                    if code != 0 and failure is None:
                        failure = (f"FAILED: {' '.join(edge['outputs'])} \n{command}\n{output}"
                                   "ninja: build stopped: subcommand failed.\n")
                    elif code == 0:
                        done_outputs.update(edge["outputs"])
                        if output:
                            self.log.append(output.rstrip("\n"))
            # Let running commands finish, as ninja does, before reporting.
            concurrent.futures.wait(running)
        if failure is not None:
            return "\n".join(self.log) + "\n" + failure
        return None

    def _edge(self, ninja, edge, command):
        source = edge["inputs"][0] if len(edge["inputs"]) == 1 else None
        if edge["rule"] == "compile" and source and _is_load_inline_cpp(source):
            return self._compile_cpp(ninja, edge, command)
        if edge["rule"] == "cuda_compile" and source and os.path.basename(source) == "cuda.cu":
            return self._compile_cuda(edge, command, source)
        code, output = _run(command, self.build_dir)
        return code, output, command

    def _compile_cpp(self, ninja, edge, command):
        cxx = ninja.variables.get("cxx", "")
        flags = normalized_cflags(ninja.variables.get("cflags", ""),
                                  ninja.variables.get("post_cflags", ""))
        header = None
        if self.pch is not None and command.startswith(cxx + " ") and cxx:
            header = self.pch.header_for(pch_key(cxx, flags), self.notes)
        if header is None:
            code, output = _run(command, self.build_dir)
            return code, output, command
        fast = f"{cxx} -include {header} -Winvalid-pch{command[len(cxx):]}"
        code, output = _run(fast, self.build_dir)
        if "warning: " in output and ".gch" in output:
            self.notes.append(f"g++ did not use the precompiled header {header}: "
                              + output.strip().splitlines()[0][:300])
        else:
            self.notes.append("main.cpp: torch/extension.h from the precompiled header")
        return code, output, fast

    def _compile_cuda(self, edge, command, source):
        """cuda.cu with the lightest headers a trial compile accepts, else as written."""
        trials = [(light_cuda_source, "without torch/types.h (its CUDA names nothing of "
                                      "torch's)", "without torch/types.h"),
                  (types_only_cuda_source, "with torch/types.h instead of torch/extension.h "
                                           "(its CUDA uses only tensor types, ATen and CUDA)",
                   "with torch/types.h instead of torch/extension.h")]
        for make, done, short in trials:
            light = make(source)
            if light is None:
                continue
            light_path = os.path.join(self.build_dir, "cuda.kp-light.cu")
            with open(light_path, "w") as f:
                f.write(light)
            trial = _replace_word(command, source, light_path)
            if trial is None:
                continue
            code, output = _run(trial, self.build_dir)
            if code == 0:
                self.notes.append(f"cuda.cu: compiled {done}")
                return code, output, trial
            first_error = next((l for l in output.splitlines() if "error" in l), "")
            self.notes.append(f"cuda.cu: the trial {short} failed; compiled as written"
                              + (f" ({first_error.strip()[:200]})" if first_error else ""))
            break  # the source names something the lighter headers lack: no lighter trial
        code, output = _run(command, self.build_dir)
        return code, output, command


def _replace_word(command, old, new):
    words = command.split(" ")
    if words.count(old) != 1:
        return None
    return " ".join(new if w == old else w for w in words)


def _jobs():
    value = os.environ.get("MAX_JOBS", "")
    if value.isdigit() and int(value) > 0:
        return int(value)
    return (os.cpu_count() or 1) + 2


# ----------------------------------------------------------------------------------------------
# Hooking torch


@contextlib.contextmanager
def installed(pch=None, notes=None):
    """Within the block, torch's _run_ninja_build is `run_build`. `notes` receives what the
    runner did differently from ninja (and why it handed a build back)."""
    from torch.utils import cpp_extension

    real = cpp_extension._run_ninja_build
    notes = notes if notes is not None else []

    def run_ninja_build(build_directory, verbose, error_prefix, *args, **kwargs):
        path = os.path.join(build_directory, "build.ninja")
        try:
            with open(path) as f:
                ninja = NinjaFile(f.read())
            runner = Runner(build_directory, pch)
            failure = runner.build(ninja)
        except (Unsupported, OSError) as e:
            notes.append(f"built with ninja: {e}")
            return real(build_directory, verbose, error_prefix, *args, **kwargs)
        notes.extend(runner.notes)
        if verbose:
            print("\n".join(runner.log), file=sys.stderr)
        if failure is not None:
            raise RuntimeError(f"{error_prefix}: {failure}")

    cpp_extension._run_ninja_build = run_ninja_build
    try:
        yield notes
    finally:
        cpp_extension._run_ninja_build = real
