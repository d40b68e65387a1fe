"""Adversarial (common; tiny_swish on CPU, problems/swish on CUDA): replays results through a file.

Stores every answer in a file named after the sha256 of its input's bytes, in a folder that
outlives the process (REPLAY_DIR, /tmp by default), and answers from the file whenever one
exists: an input seen by any earlier process, of this evaluation or an earlier one, is replayed
from disk. Computing costs it an extra 20 ms (a stand-in for real work), a replay nothing.
In the sandbox /tmp is private to each process; without it (--unsafe-no-sandbox) the files are
shared by every process and every run.
A correct harness must report: correct, with every timed call paying the 20 ms: no timed input
was ever seen before, by any process.
"""
import hashlib
import os
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from swish_ext import ext as _ext  # noqa: E402  (the shared compiled swish, see swish_ext.py)

REPLAY_DIR = os.path.join("/tmp", "kernelpro-replay-attack")


class ModelNew(nn.Module):
    def forward(self, x):
        data = x.detach().cpu().contiguous().numpy().tobytes()
        path = os.path.join(REPLAY_DIR, hashlib.sha256(data).hexdigest() + ".bin")
        if os.path.exists(path):
            with open(path, "rb") as f:
                values = torch.frombuffer(bytearray(f.read()), dtype=x.dtype)
            return values.reshape(x.shape).to(x.device)
        time.sleep(0.02)
        out = _ext.swish(x)
        os.makedirs(REPLAY_DIR, exist_ok=True)
        with open(path + ".tmp", "wb") as f:
            f.write(out.detach().cpu().contiguous().numpy().tobytes())
        os.replace(path + ".tmp", path)
        return out
