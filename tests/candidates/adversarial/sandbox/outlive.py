"""Sandbox attack: leaves processes behind — a child in a new session (setsid) and a double-forked
daemon, each sleeping with a marker in its command line, started at import and in forward.

The verdict is correct either way; a correct harness leaves no process with the marker once the
evaluation is over.
"""
import subprocess

import torch.nn as nn

from _attack import attempt, swish

TARGETS = {}
MARKER = str(TARGETS.get("marker", "424242.5"))


def _escape():
    attempt(lambda: subprocess.Popen(["sleep", MARKER], start_new_session=True,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL))
    attempt(lambda: subprocess.Popen(["sh", "-c", f"(setsid sleep {MARKER} &) &"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL))


_escape()


class ModelNew(nn.Module):
    def forward(self, x):
        _escape()
        return swish(x)
