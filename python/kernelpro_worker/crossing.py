"""A candidate's check outputs crossing to the referee on the GPU, through CUDA IPC.

Through files, a 6 GiB output costs seconds on each side (a copy to the host and a write, a read
and a copy back); through legacy CUDA IPC the referee maps the candidate's memory and copies it
in milliseconds. The candidate's process (sandboxed, bubblewrap's --unshare-all: legacy IPC works
across it, bench/cuda_ipc_probe.sh) exports each output as a descriptor, {"handle": the 64-byte
cuIpcMemHandle of the allocation holding it (hex), "offset", "shape", "dtype"}, and keeps the
tensors alive until its next request (`keep`). The referee (never running candidate code) opens
each handle, checks that the bytes a descriptor names lie inside the mapping, copies them into
its own memory before anything looks at them, and closes the handle: what it compares is its own
copy, read while the candidate's process waits for its next request, as a file would have been.

A descriptor is data the candidate wrote: a dtype that is not a plain one, a shape that is not a
list of sizes, bytes beyond the mapping or a handle that does not open are refused with a reason,
never read. Where the referee cannot open handles at all (a platform without CUDA IPC) the
binary checks the batch again through files (compare_step's `retry_with_files`).
"""

import ctypes

_DTYPE_NAMES = ("float32", "float16", "bfloat16", "float64", "int64", "int32", "int16", "int8",
                "uint8", "bool", "complex64", "complex128")
_LAZY_ENABLE_PEER_ACCESS = 1


class CrossingError(Exception):
    """A descriptor that cannot be read: the message says why."""


class _IpcHandle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * 64)]


class _Bytes:
    """Device bytes torch.as_tensor takes without a copy (uint8, whatever the dtype)."""

    def __init__(self, ptr, nbytes):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1",
                                         "data": (ptr, False), "version": 2}


_DRIVER = []


def _driver():
    if not _DRIVER:
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise CrossingError(f"no CUDA driver here: {e}") from None
        lib.cuIpcGetMemHandle.argtypes = [ctypes.POINTER(_IpcHandle), ctypes.c_uint64]
        lib.cuIpcOpenMemHandle_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), _IpcHandle,
                                              ctypes.c_uint]
        lib.cuIpcCloseMemHandle.argtypes = [ctypes.c_uint64]
        lib.cuMemGetAddressRange_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64),
                                                ctypes.POINTER(ctypes.c_size_t), ctypes.c_uint64]
        _DRIVER.append(lib)
    return _DRIVER[0]


def _call(what, rc):
    if rc != 0:
        name = ctypes.c_char_p()
        _driver().cuGetErrorName(rc, ctypes.byref(name))
        raise CrossingError(f"{what} failed: {(name.value or b'?').decode()} ({rc})")


def _range(ptr):
    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    _call("cuMemGetAddressRange",
          _driver().cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), ptr))
    return base.value, size.value


def export(outputs):
    """Descriptors of `outputs` (CUDA tensors) and the tensors to keep alive until the referee has
    copied them; None where one is not a CUDA tensor (the caller writes files then)."""
    import torch

    descriptors, keep = [], []
    for t in outputs:
        if type(t) is not torch.Tensor or t.device.type != "cuda":
            return None
        c = t.detach()
        if not c.is_contiguous():
            c = c.contiguous()
        keep.append(c)
        entry = {"shape": list(c.shape), "dtype": str(c.dtype)}
        if c.numel() > 0:
            base, _ = _range(c.data_ptr())
            handle = _IpcHandle()
            _call("cuIpcGetMemHandle", _driver().cuIpcGetMemHandle(ctypes.byref(handle), base))
            entry.update(handle=bytes(handle).hex(), offset=c.data_ptr() - base)
        descriptors.append(entry)
    torch.cuda.current_stream().synchronize()
    return descriptors, keep


def _checked(entry):
    """(dtype, shape, nbytes) of a descriptor, or CrossingError."""
    import torch

    if not isinstance(entry, dict):
        raise CrossingError("an output descriptor is not an object")
    name = entry.get("dtype")
    dtype = getattr(torch, name[6:], None) if (isinstance(name, str) and name.startswith("torch.")
                                                and name[6:] in _DTYPE_NAMES) else None
    if dtype is None:
        raise CrossingError(f"output dtype {str(entry.get('dtype'))[:40]!r} is not a plain one")
    shape = entry.get("shape")
    if (not isinstance(shape, list) or len(shape) > 16
            or not all(type(s) is int and 0 <= s < (1 << 48) for s in shape)):
        raise CrossingError("an output's shape is not a list of sizes")
    numel = 1
    for s in shape:
        numel *= s
    nbytes = numel * torch.empty((), dtype=dtype).element_size()
    if nbytes >= (1 << 48):
        raise CrossingError("an output's size is beyond any device's memory")
    return dtype, shape, nbytes


def import_copies(descriptors, device):
    """The outputs `descriptors` name, copied into this process's memory on `device` (each handle
    opened once, closed before returning). CrossingError when one cannot be read."""
    import torch

    if not isinstance(descriptors, list):
        raise CrossingError("the outputs are not a list of descriptors")
    checked = [_checked(e) for e in descriptors]
    opened = {}  # handle hex -> (mapped pointer, mapping size)
    copies = []
    try:
        for entry, (dtype, shape, nbytes) in zip(descriptors, checked):
            if nbytes == 0:
                copies.append(torch.empty(shape, dtype=dtype, device=device))
                continue
            key, offset = entry.get("handle"), entry.get("offset")
            if not isinstance(key, str) or len(key) != 128 or type(offset) is not int:
                raise CrossingError("an output descriptor has no handle and offset")
            if key not in opened:
                try:
                    raw = bytes.fromhex(key)
                except ValueError:
                    raise CrossingError("an output's handle is not hexadecimal") from None
                ptr = ctypes.c_uint64()
                _call("cuIpcOpenMemHandle", _driver().cuIpcOpenMemHandle_v2(
                    ctypes.byref(ptr), _IpcHandle.from_buffer_copy(raw),
                    _LAZY_ENABLE_PEER_ACCESS))
                opened[key] = (ptr.value, 0)  # closed in `finally` even if the range fails
                opened[key] = (ptr.value, _range(ptr.value)[1])
            base, size = opened[key]
            if offset < 0 or offset + nbytes > size:
                raise CrossingError(f"an output's {nbytes} bytes at offset {offset} lie outside "
                                    f"the {size} bytes its handle maps")
            view = torch.as_tensor(_Bytes(base + offset, nbytes), device=device)
            copies.append(view.clone().view(dtype).reshape(shape))
        if opened:
            torch.cuda.synchronize()
    finally:
        for ptr, _ in opened.values():
            _driver().cuIpcCloseMemHandle(ptr)
    return copies
