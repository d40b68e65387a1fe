"""Input generation, perturbation, poisoning and comparison of tensors."""

import hashlib
import math

import torch


CPU_TENSORS_HINT = ("a problem's get_inputs() returns CPU tensors (kernelpro moves them to the "
                    "device itself); drop .cuda() / device='cuda' there")


def generate_inputs(problem, seed, device=None):
    """get_inputs() under `seed`. On a GPU `device` the problem's tensors are made there (its
    torch.rand and the like run with that default device: a KernelBench task's 6 GiB input takes
    milliseconds on an H100 instead of seconds on the host, in every process that makes it), or on
    the host where get_inputs() fails that way; the same seed gives the same bits in any process
    on the same device. On `device` "cpu" a CUDA tensor among them, or a CUDA error while making
    them, is the problem's mistake and is said so; without `device` they are made on the host."""
    torch.manual_seed(seed)
    if device is not None and str(device) != "cpu" and hasattr(torch, "set_default_device"):
        try:
            with torch.device(device):
                values = problem.get_inputs()
            return _input_list(values)
        except Exception:  # noqa: BLE001 - host-only code in get_inputs(): made there below
            torch.manual_seed(seed)
    try:
        values = problem.get_inputs()
    except Exception as e:  # noqa: BLE001
        if "cuda" in str(e).lower():
            raise RuntimeError(f"{type(e).__name__}: {e} ({CPU_TENSORS_HINT})") from e
        raise
    values = _input_list(values)
    if device == "cpu":
        for i, v in enumerate(values):
            if isinstance(v, torch.Tensor) and v.device.type != "cpu":
                raise ValueError(
                    f"input {i} is on {v.device} under --device cpu ({CPU_TENSORS_HINT})")
    return values


def _input_list(values):
    if not isinstance(values, (list, tuple)):
        raise ValueError("get_inputs() must return a list of inputs")
    return list(values)


def signed_mixed_scale(values, seed, signs=True, scales=True):
    """Same shapes and dtypes, but every floating element gets a random sign and a scale in
    [1/8, 8]. Zeros stay zeros (structure such as triangularity survives); integer inputs, which
    are often indices, are left alone. The factors are drawn where each tensor lives, piece by
    piece (CHUNK elements), so a GPU input's costs milliseconds and at most a few pieces of
    temporaries; the same (values, seed) gives the same bits in any process on the same device."""
    generators = {}
    out = []
    for v in values:
        if not (isinstance(v, torch.Tensor) and v.is_floating_point()):
            out.append(v)
            continue
        if v.device not in generators:
            generators[v.device] = torch.Generator(device=v.device).manual_seed(seed)
        gen = generators[v.device]
        src = v.detach().contiguous().reshape(-1)
        res = torch.empty(v.shape, dtype=v.dtype, device=v.device)
        flat = res.view(-1)
        for start in range(0, src.numel(), CHUNK):
            n = min(CHUNK, src.numel() - start)
            factor = torch.ones(n, dtype=torch.float64, device=v.device)
            if signs:
                flip = torch.rand(n, generator=gen, device=v.device) < 0.5
                factor = torch.where(flip, -factor, factor)
            if scales:
                exponent = torch.rand(n, generator=gen, dtype=torch.float64, device=v.device)
                factor = factor * torch.pow(2.0, exponent * 6 - 3)
            flat[start:start + n] = (src[start:start + n].double() * factor).to(v.dtype)
        out.append(res)
    return out


def to_double(values):
    return [v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v
            for v in values]


def all_finite(tensors):
    return all(bool(torch.isfinite(t).all()) for t in tensors
               if t.is_floating_point() or t.is_complex())


def nonfinite_text(t):
    """'12 NaN values (of 4096)', '3 infinite values (of 4096)', '12 NaN and 3 infinite values
    (of 4096)'; '' when none."""
    if not (t.is_floating_point() or t.is_complex()) or t.numel() == 0:
        return ""
    return _nonfinite_words(int(torch.isnan(t).sum()), int(torch.isinf(t).sum()), t.numel())


def _nonfinite_words(n_nan, n_inf, numel):
    if not n_nan and not n_inf:
        return ""
    parts = ([f"{n_nan} NaN"] if n_nan else []) + ([f"{n_inf} infinite"] if n_inf else [])
    return f"{' and '.join(parts)} values (of {numel})"


def poison_allocator(metas, device):
    """Fills freshly allocated blocks of the outputs' sizes with NaN (or -1) and frees them, so
    that a candidate whose output reuses freed memory without writing it returns garbage rather
    than stale results. On CUDA the caching allocator hands these blocks out again."""
    if device == "cpu":
        return
    blocks = []
    for meta in metas:
        dtype = getattr(torch, meta["dtype"].replace("torch.", ""))
        if dtype.is_floating_point:
            blocks.append(torch.full(meta["shape"], float("nan"), dtype=dtype, device=device))
        else:
            blocks.append(torch.full(meta["shape"], -1, dtype=dtype, device=device))
    del blocks


def storage_span(t):
    """Byte range [start, end) of memory a tensor can reach."""
    if t.numel() == 0:
        return (0, 0)
    start = t.data_ptr()
    extent = 1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride()) if s > 0)
    return (start, start + extent * t.element_size())


def overlaps(a, b):
    sa, sb = storage_span(a), storage_span(b)
    return sa[0] < sb[1] and sb[0] < sa[1] and sa != (0, 0) and sb != (0, 0)


# Comparisons work through outputs in pieces of this many elements, in float64, on the device of
# the tensors (CUDA when either is there): a 4 GiB output is never converted whole, and its
# temporaries stay near 1 GiB wherever it lives. Tests make it small.
CHUNK = 1 << 24


def _work_device(*ts):
    for t in ts:
        if t.device.type != "cpu":
            return t.device
    return ts[0].device


def _pieces(*ts, dtype=None):
    """Aligned flat pieces of equally sized tensors, each moved to their common work device (and
    converted to `dtype`, if given)."""
    device = _work_device(*ts)
    flats = [t.detach().reshape(-1) for t in ts]
    n = flats[0].numel()
    for start in range(0, n, CHUNK):
        piece = [f[start:start + CHUNK].to(device) for f in flats]
        yield [p.to(dtype) if dtype is not None else p for p in piece]


def compare_output(actual, expected, atol, rtol, index=0):
    """Elementwise allclose with errors: dict(passed, max_abs_err, max_rel_err,
    mismatch_fraction, reason). `index` names the output in the reasons."""
    result = {"passed": False, "max_abs_err": None, "max_rel_err": None, "mismatch_fraction": None,
              "reason": ""}
    if tuple(actual.shape) != tuple(expected.shape):
        result["reason"] = (f"shape {tuple(actual.shape)} where the reference gives "
                            f"{tuple(expected.shape)}")
        return result
    if actual.dtype != expected.dtype:
        result["reason"] = f"dtype {actual.dtype} where the reference gives {expected.dtype}"
        return result
    if actual.numel() == 0:
        result.update(passed=True, max_abs_err=0.0, max_rel_err=0.0, mismatch_fraction=0.0)
        return result
    max_abs = max_rel = 0.0
    n_bad = n_nan = n_inf = 0
    for a, e in _pieces(actual, expected):
        a, e = a.double(), e.double()
        both_nan = torch.isnan(a) & torch.isnan(e)
        same_inf = torch.isinf(a) & torch.isinf(e) & (torch.sign(a) == torch.sign(e))
        diff = (a - e).abs()
        diff = torch.where(both_nan | same_inf, torch.zeros_like(diff), diff)
        diff = torch.where(torch.isnan(diff), torch.full_like(diff, float("inf")), diff)
        rel = diff / e.abs().clamp_min(1e-12)
        rel = torch.where(diff == 0, torch.zeros_like(rel), rel)
        bad = diff > (atol + rtol * e.abs().nan_to_num(0.0, 0.0, 0.0))
        max_abs = max(max_abs, float(diff.max()))
        max_rel = max(max_rel, float(rel.max()))
        piece_bad = int(bad.sum())
        n_bad += piece_bad
        if piece_bad:
            finite = torch.isfinite(e)
            n_nan += int((torch.isnan(a) & finite).sum())
            n_inf += int((torch.isinf(a) & finite).sum())
    numel = actual.numel()
    result.update(max_abs_err=max_abs, max_rel_err=max_rel, mismatch_fraction=n_bad / numel,
                  passed=n_bad == 0)
    # NaN or infinity where the reference is finite: said as such, since "max abs error inf" does
    # not tell a user their kernel returned memory it never wrote.
    nonfinite = _nonfinite_words(n_nan, n_inf, numel) if n_bad else ""
    if nonfinite:
        result["reason"] = f"output {index} has {nonfinite}"
    elif n_bad:
        result["reason"] = (f"{n_bad} of {numel} elements "
                            f"({100 * result['mismatch_fraction']:.3g}%) outside atol={atol}, "
                            f"rtol={rtol}; max abs error {result['max_abs_err']:.3g}")
    return result


def relative_l2_error(actual, expected):
    num = denom = 0.0
    for a, e in _pieces(actual, expected, dtype=torch.float64):
        denom += float((e * e).sum())
        num += float(((a - e) ** 2).sum())
    denom, num = math.sqrt(denom), math.sqrt(num)
    if denom == 0.0:
        return 0.0 if num == 0.0 else float("inf")
    return num / denom


def vacuity(expected_outputs, atol, rtol):
    """Would an all-zero or a constant output pass allclose on these outputs? Returns a reason
    or ''."""
    for i, e in enumerate(expected_outputs):
        if not e.is_floating_point() or e.numel() == 0:
            continue
        small, largest, total = True, 0.0, 0.0
        for (d,) in _pieces(e, dtype=torch.float64):
            small = small and bool((d.abs() <= atol + rtol * d.abs()).all())
            largest = max(largest, float(d.abs().max()))
            total += float(d.sum())
        if small:
            return (f"output {i}: an all-zero tensor passes the tolerance "
                    f"(max |ref| = {largest:.3g})")
        c = total / e.numel()
        if all(bool(((d - c).abs() <= atol + rtol * d.abs()).all())
               for (d,) in _pieces(e, dtype=torch.float64)):
            return f"output {i}: a constant tensor ({c:.3g}) passes the tolerance"
    return ""


# Two odd multipliers and offsets for fingerprint()'s position weights (any odd constants do).
_FP_KEYS = ((0x9E3779B97F4A7C15, 0x632BE59BD9B4E019), (0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9))
_WRAP = 1 << 64


def _signed(x):
    x %= _WRAP
    return x - _WRAP if x >= 1 << 63 else x


def fingerprint(values):
    """A digest of values' bits, computed where they live (on the GPU for CUDA tensors, with no
    copy to the host): per tensor its dtype, its shape and two sums, modulo 2^64, of its 32-bit
    words times odd weights drawn from their positions (a host tensor: its bytes, as plain SHA-256
    is faster there); lists and tuples element by element; anything else by its repr; then
    SHA-256 over the lot. It tells whether a computation gave the same bits again (a changed
    word changes each sum, the weights being odd); it is no defence against someone choosing the
    bits, so it is only compared between values that processes which never ran candidate code
    made themselves (the reference's large inputs and outputs, reference_step.py) or between two
    readings of the same tensor (check_step.py)."""
    h = hashlib.sha256(b"kernelpro-fingerprint-1")
    _fingerprint_into(h, list(values))
    return "fp1:" + h.hexdigest()


def _fingerprint_into(h, value):
    if isinstance(value, (list, tuple)):
        h.update(f"{type(value).__name__}[{len(value)}]|".encode())
        for v in value:
            _fingerprint_into(h, v)
        return
    if not isinstance(value, torch.Tensor):
        h.update(f"{type(value).__name__}:{value!r}|".encode())
        return
    h.update(f"{value.dtype}{list(value.shape)}|".encode())
    flat = value.detach().reshape(-1)
    if flat.numel() == 0:
        return
    if not flat.is_contiguous() or (flat.storage_offset() * flat.element_size()) % 8:
        flat = flat.clone()
    raw = flat.view(torch.uint8)
    if raw.device.type == "cpu":  # on the host, hashing the bytes themselves is the fast way
        h.update(b"bytes|")
        h.update(raw.numpy())
    else:
        h.update(word_sums(raw))


def word_sums(raw):
    """fingerprint()'s digest of a device tensor's bytes (`raw`, 1-D uint8), without copying
    them to the host: the last 1-3 bytes of an odd size as they are, then two sums, modulo
    2^64, of the 32-bit words times odd weights drawn from their positions."""
    whole = raw.numel() // 4 * 4
    tail = bytes(raw[whole:].cpu().tolist())
    words = raw[:whole].view(torch.int32)
    sums = [0, 0]
    for start in range(0, words.numel(), CHUNK):
        w = words[start:start + CHUNK].to(torch.int64)
        pos = torch.arange(start, start + w.numel(), dtype=torch.int64, device=w.device)
        for k, (mul, add) in enumerate(_FP_KEYS):
            weight = (pos * _signed(mul) + _signed(add)) | 1
            sums[k] = (sums[k] + int((w * weight).sum())) % _WRAP
    return tail + b"".join(s.to_bytes(8, "little") for s in sums)
