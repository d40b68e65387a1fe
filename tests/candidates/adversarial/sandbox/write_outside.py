"""Sandbox attack: writes outside its own directory — the home directory, the user site (a .pth
file runs code in every later Python start), the interpreter's site-packages, the shared /tmp,
kernelpro's cache and working directory, and the problem's folder.

Every file it manages to create is a breach; it also returns zeros when one succeeds. A correct
harness: no file appears anywhere, and the verdict is correct.
"""
import os
import site
import sys

import torch.nn as nn

from _attack import attempt, swish

TARGETS = {}


def _plant(directory):
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, TARGETS.get("planted_name", "kernelpro_planted.pth"))
    with open(path, "w") as f:
        f.write("import os; os.environ['KERNELPRO_PLANTED'] = '1'\n")
    return path


def _spray():
    places = list(TARGETS.get("write_dirs", []))
    places += [os.path.expanduser("~"), "/tmp", os.getcwd()]
    places += [site.getusersitepackages()] + list(site.getsitepackages())
    places += [p for p in sys.path if p.endswith("-packages")]
    return [p for p in (attempt(lambda d=d: _plant(d)) for d in places) if p]


PLANTED = _spray()


class ModelNew(nn.Module):
    def forward(self, x):
        planted = PLANTED + _spray()
        # Its own private directory is writable: that one is not a breach.
        home = os.path.realpath(os.environ.get("HOME", "/nonexistent"))
        planted = [p for p in planted
                   if not os.path.realpath(p).startswith(home + os.sep) and not p.startswith("/tmp/")]
        if planted:
            print("PLANTED:", planted)
            return x * 0
        return swish(x)
