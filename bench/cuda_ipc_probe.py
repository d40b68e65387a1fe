"""Can a CUDA buffer made in a bwrap sandbox (--unshare-all) be read by a process outside it
through legacy CUDA IPC (cuIpcGetMemHandle / cuIpcOpenMemHandle)?  usage: export DIR | import DIR
(bench/cuda_ipc_probe.sh runs both sides, in and out of the sandbox)"""
import ctypes, os, sys, time
import torch

cuda = ctypes.CDLL("libcuda.so.1")
N = 1 << 28  # 1 GiB of float32


def check(rc, what):
    if rc != 0:
        open(os.path.join(sys.argv[2], "fail"), "w").close()
        name = ctypes.c_char_p()
        cuda.cuGetErrorName(rc, ctypes.byref(name))
        raise SystemExit(f"{what} failed: {rc} {name.value}")


class IpcHandle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * 64)]


cuda.cuIpcOpenMemHandle_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), IpcHandle, ctypes.c_uint]
cuda.cuIpcGetMemHandle.argtypes = [ctypes.POINTER(IpcHandle), ctypes.c_uint64]


class Wrap:
    def __init__(self, ptr, n):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "<f4", "data": (ptr, False),
                                         "version": 2}


def main():
    mode, d = sys.argv[1], sys.argv[2]
    torch.cuda.init()
    torch.zeros(1, device="cuda")
    if mode == "export":
        t = torch.arange(N, device="cuda", dtype=torch.float32)
        torch.cuda.synchronize()
        base, size = ctypes.c_uint64(), ctypes.c_size_t()
        check(cuda.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size),
                                           ctypes.c_uint64(t.data_ptr())), "cuMemGetAddressRange")
        handle = IpcHandle()
        check(cuda.cuIpcGetMemHandle(ctypes.byref(handle), base.value), "cuIpcGetMemHandle")
        off = t.data_ptr() - base.value
        with open(os.path.join(d, "h.tmp"), "wb") as f:
            f.write(bytes(handle) + off.to_bytes(8, "little"))
        os.rename(os.path.join(d, "h.tmp"), os.path.join(d, "h.bin"))
        print("exported", off, size.value, t.sum().item(), flush=True)
        for _ in range(600):
            if os.path.exists(os.path.join(d, "done")) or os.path.exists(os.path.join(d, "fail")):
                break
            time.sleep(0.05)
        print("exporter done", flush=True)
    else:
        p = os.path.join(d, "h.bin")
        for _ in range(600):
            if os.path.exists(p):
                break
            time.sleep(0.05)
        raw = open(p, "rb").read()
        handle = IpcHandle.from_buffer_copy(raw[:64])
        off = int.from_bytes(raw[64:72], "little")
        ptr = ctypes.c_uint64()
        t0 = time.time()
        check(cuda.cuIpcOpenMemHandle_v2(ctypes.byref(ptr), handle, ctypes.c_uint(1)),
              "cuIpcOpenMemHandle")
        t = torch.as_tensor(Wrap(ptr.value + off, N), device="cuda")
        mine = t.clone()
        torch.cuda.synchronize()
        ok = torch.equal(mine, torch.arange(N, device="cuda", dtype=torch.float32))
        print("imported", "equal" if ok else "DIFFERENT", f"open+copy {time.time() - t0:.3f} s",
              flush=True)
        check(cuda.cuIpcCloseMemHandle(ptr), "cuIpcCloseMemHandle")
        open(os.path.join(d, "done"), "w").close()


if __name__ == "__main__":
    main()
