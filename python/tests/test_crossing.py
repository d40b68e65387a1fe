"""crossing.py on a machine without a GPU: what the referee refuses before it maps anything, and
the compare step's answer when outputs left on the device cannot be read (the binary then checks
the batch again through files). The mapping itself is verified on the GPU (scripts/gpu_verify
kernelbench-suite, adversarial)."""

import os

import pytest
import torch

from kernelpro_worker import check_step, compare_step, crossing

from test_steps import BASE, GOOD, compare_request, candidate_request  # noqa: F401
from test_steps import cache, reference  # noqa: F401  (fixtures)

HANDLE = "ab" * 64


@pytest.mark.parametrize("entry, says", [
    ("not a dict", "not an object"),
    ({"dtype": "torch.float32", "shape": [4]}, "no handle and offset"),
    ({"dtype": "EvilTensor", "shape": [4], "handle": HANDLE, "offset": 0}, "not a plain one"),
    ({"dtype": "torch.float32", "shape": [-1], "handle": HANDLE, "offset": 0}, "list of sizes"),
    ({"dtype": "torch.float32", "shape": [4.0], "handle": HANDLE, "offset": 0}, "list of sizes"),
    ({"dtype": "torch.float32", "shape": [1 << 30, 1 << 30], "handle": HANDLE, "offset": 0},
     "beyond any device"),
    ({"dtype": "torch.float32", "shape": [4], "handle": "zz" * 64, "offset": 0},
     "not hexadecimal"),
    ({"dtype": "torch.float32", "shape": [4], "handle": HANDLE[:10], "offset": 0},
     "no handle and offset"),
])
def test_a_descriptor_the_candidate_forged_is_refused_with_a_reason(entry, says):
    with pytest.raises(crossing.CrossingError, match=says):
        crossing.import_copies([entry], "cpu")


def test_empty_outputs_need_no_handle_and_cpu_outputs_are_not_exported():
    empty = crossing.import_copies([{"dtype": "torch.float16", "shape": [0, 3]}], "cpu")
    assert empty[0].shape == (0, 3) and empty[0].dtype == torch.float16
    assert crossing.export([torch.ones(3)]) is None  # on the host: the caller writes a file
    with pytest.raises(crossing.CrossingError, match="not a list"):
        crossing.import_copies({"dtype": "torch.float32"}, "cpu")


def test_outputs_that_cannot_be_read_on_the_device_send_the_batch_back_to_files(
        reference, cache, tmp_path):  # noqa: F811
    work = str(tmp_path)
    # Asked for outputs on the device, a CPU candidate writes files as before.
    checked = check_step.step_check(candidate_request(reference, cache, GOOD, trials=["check_0"],
                                                      outputs_on_device=True, refill=False,
                                                      out_dir=os.path.join(work, "check")))
    assert checked["status"] == "ok" and checked["outputs"] == [["check_0", "check_0"]], checked
    # A pair whose outputs are descriptors that do not open: no verdict, a retry through files.
    forged = [["check/check_0", "check_0",
               [{"dtype": "torch.float32", "shape": [4], "handle": HANDLE, "offset": 0}]]]
    compared = compare_step.step_compare(compare_request(reference, work, forged))
    assert compared["retry_with_files"] and not compared["passed"], compared
    assert "could not be read on the device" in compared["message"]
    assert compared["trials"] == []
