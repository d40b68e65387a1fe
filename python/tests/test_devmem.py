"""devmem.py: each request's device memory, and an out-of-memory failure in one line."""
import types

from kernelpro_worker import devmem
from kernelpro_worker.session import _with_memory

GIB = 1 << 30
# torch 2.11's message on an H100, as the paper-42 run saw it (2026-12-06).
TORCH_OOM = ("OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total "
             "capacity of 79.18 GiB of which 1.37 GiB is free. Including non-PyTorch memory, this "
             "process has 4.46 GiB memory in use. Of the allocated memory 4.01 GiB is allocated "
             "by PyTorch, and 12.00 MiB is reserved by PyTorch but unallocated.")


def _fake_cuda(started=True):
    state = {"resets": 0, "emptied": 0}
    cuda = types.SimpleNamespace(
        is_initialized=lambda: started,
        empty_cache=lambda: state.__setitem__("emptied", state["emptied"] + 1),
        reset_peak_memory_stats=lambda: state.__setitem__("resets", state["resets"] + 1),
        mem_get_info=lambda: (int(1.37 * GIB), int(79.18 * GIB)),
        max_memory_reserved=lambda: int(4.5 * GIB), max_memory_allocated=lambda: 4 * GIB)
    return types.SimpleNamespace(cuda=cuda), state


def test_a_request_on_the_gpu_reports_its_peaks_and_the_free_memory():
    torch, state = _fake_cuda()
    memory = devmem.StepMemory(torch)
    memory.begin()
    used = memory.end()
    assert state["resets"] == 1
    assert used == {"peak_reserved_bytes": int(4.5 * GIB), "peak_allocated_bytes": 4 * GIB,
                    "free_bytes": int(1.37 * GIB), "total_bytes": int(79.18 * GIB)}


def test_cached_memory_goes_back_after_a_step_but_not_between_timing_blocks():
    from kernelpro_worker import session

    torch, state = _fake_cuda()
    devmem.StepMemory(torch).release()
    assert state["emptied"] == 1
    idle, idle_state = _fake_cuda(started=False)
    devmem.StepMemory(idle).release()
    assert idle_state["emptied"] == 0
    assert session.KEEP_MEMORY == ("time",)


def test_nothing_is_said_before_cuda_starts_or_on_the_cpu():
    torch, state = _fake_cuda(started=False)
    memory = devmem.StepMemory(torch)
    memory.begin()
    assert memory.end() is None and state["resets"] == 0
    assert devmem.StepMemory(types.SimpleNamespace()).end() is None


def test_an_out_of_memory_failure_is_one_line_naming_the_process_step_and_sizes():
    torch, _ = _fake_cuda()
    used = devmem.StepMemory(torch).end()
    result = {"status": "runtime_error", "message": "out of memory: " + TORCH_OOM}
    _with_memory(result, used, "candidate", "check")
    assert result["message"] == ("out of memory in the candidate's check step: it asked for "
                                 "4.00 GiB with 1.37 GiB free of 79.18 GiB; this process held "
                                 "4.50 GiB at its peak")
    assert result["device_memory"]["peak_reserved_bytes"] == int(4.5 * GIB)
    # A traceback the step did not classify becomes the same line, a runtime error.
    crashed = {"status": "worker_error", "message": "torch.OutOfMemoryError: CUDA out of memory."
               "\nTraceback (most recent call last): ..."}
    _with_memory(crashed, used, "referee", "reference")
    assert crashed["status"] == "runtime_error"
    assert crashed["message"] == ("out of memory in the referee's reference step: 1.37 GiB free "
                                  "of 79.18 GiB; this process held 4.50 GiB at its peak")
    ok = {"status": "ok", "message": ""}
    _with_memory(ok, None, "candidate", "time")
    assert ok == {"status": "ok", "message": ""}
