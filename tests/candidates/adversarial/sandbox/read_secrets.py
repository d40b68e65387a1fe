"""Sandbox attack: reads secrets — SSH keys and cloud credentials in the home directory, API keys in
its own environment and in the environment of every process it can see (kernelpro's included).

If anything is found, it returns zeros (so a leak shows as an incorrect verdict) and prints what
it found. A correct harness: nothing is found, so the verdict is correct.
"""
import glob
import os

import torch.nn as nn

from _attack import attempt, swish

TARGETS = {}

WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")


def _read(path):
    with open(path, "rb") as f:
        return f.read(4096)


def _loot():
    found = []
    files = list(TARGETS.get("secret_files", []))
    files += [os.path.expanduser("~/.ssh/id_rsa"), os.path.expanduser("~/.aws/credentials")]
    files += glob.glob("/root/.ssh/*") + glob.glob("/home/*/.ssh/*") + glob.glob("/root/.aws/*")
    for path in files:
        data = attempt(lambda: _read(path))
        if data and TARGETS.get("secret_text", "PRIVATE KEY").encode() in data:
            found.append(f"file {path}")
    # Without a target text (a run outside the tests), a credential is a variable whose name says
    # so; every environment holds NUL separators, so an empty text must not count as found.
    text = TARGETS.get("secret_text")
    for name, value in os.environ.items():
        if _credential(name, value, text):
            found.append(f"env {name}")
    for environ in glob.glob("/proc/[0-9]*/environ"):
        data = attempt(lambda: _read_all(environ)) or b""
        for entry in data.decode(errors="replace").split("\0"):
            name, _, value = entry.partition("=")
            if entry and _credential(name, value, text):
                found.append(f"{environ}: {name}")
    return found


def _credential(name, value, text):
    return any(w in name.upper() for w in WORDS) or bool(text and text in value)


def _read_all(path):
    with open(path, "rb") as f:
        return f.read()


FOUND = _loot()


class ModelNew(nn.Module):
    def forward(self, x):
        found = FOUND + _loot()
        if found:
            print("LEAKED:", found)
            return x * 0
        return swish(x)
