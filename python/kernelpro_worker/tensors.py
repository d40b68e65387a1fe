"""Input generation, perturbation, poisoning and comparison of tensors."""

import torch


CPU_TENSORS_HINT = ("a problem's get_inputs() returns CPU tensors (kernelpro moves them to the "
                    "device itself); drop .cuda() / device='cuda' there")


def generate_inputs(problem, seed, device=None):
    """get_inputs() under `seed`. On `device` "cpu" a CUDA tensor among them, or a CUDA error
    while making them, is the problem's mistake and is said so."""
    torch.manual_seed(seed)
    try:
        values = problem.get_inputs()
    except Exception as e:  # noqa: BLE001
        if "cuda" in str(e).lower():
            raise RuntimeError(f"{type(e).__name__}: {e} ({CPU_TENSORS_HINT})") from e
        raise
    if not isinstance(values, (list, tuple)):
        raise ValueError("get_inputs() must return a list of inputs")
    if device == "cpu":
        for i, v in enumerate(values):
            if isinstance(v, torch.Tensor) and v.device.type != "cpu":
                raise ValueError(
                    f"input {i} is on {v.device} under --device cpu ({CPU_TENSORS_HINT})")
    return list(values)


def signed_mixed_scale(values, seed, signs=True, scales=True):
    """Same shapes and dtypes, but every floating element gets a random sign and a scale in
    [1/8, 8]. Zeros stay zeros (structure such as triangularity survives); integer inputs, which
    are often indices, are left alone."""
    gen = torch.Generator().manual_seed(seed)
    out = []
    for v in values:
        if isinstance(v, torch.Tensor) and v.is_floating_point():
            factor = torch.ones(v.shape, dtype=torch.float64)
            if signs:
                factor = torch.where(torch.rand(v.shape, generator=gen) < 0.5, -factor, factor)
            if scales:
                exponent = torch.rand(v.shape, generator=gen, dtype=torch.float64) * 6 - 3
                factor = factor * torch.pow(2.0, exponent)
            out.append((v.double() * factor.to(v.device)).to(v.dtype))
        else:
            out.append(v)
    return out


def to_double(values):
    return [v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v
            for v in values]


def all_finite(tensors):
    return all(bool(torch.isfinite(t).all()) for t in tensors
               if t.is_floating_point() or t.is_complex())


def nonfinite_text(t, where=""):
    """'12 NaN values (of 4096)', '3 infinite values (of 4096)', '12 NaN and 3 infinite values
    (of 4096)' — counting only where `where` (a bool mask) is true, if given; '' when none."""
    if not (t.is_floating_point() or t.is_complex()) or t.numel() == 0:
        return ""
    nan, inf = torch.isnan(t), torch.isinf(t)
    if isinstance(where, torch.Tensor):
        nan, inf = nan & where, inf & where
    n_nan, n_inf = int(nan.sum()), int(inf.sum())
    if not n_nan and not n_inf:
        return ""
    parts = ([f"{n_nan} NaN"] if n_nan else []) + ([f"{n_inf} infinite"] if n_inf else [])
    return f"{' and '.join(parts)} values (of {t.numel()})"


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
    a = actual.double()
    e = expected.double()
    both_nan = torch.isnan(a) & torch.isnan(e)
    same_inf = torch.isinf(a) & torch.isinf(e) & (torch.sign(a) == torch.sign(e))
    diff = (a - e).abs()
    diff = torch.where(both_nan | same_inf, torch.zeros_like(diff), diff)
    diff = torch.where(torch.isnan(diff), torch.full_like(diff, float("inf")), diff)
    rel = diff / e.abs().clamp_min(1e-12)
    rel = torch.where(diff == 0, torch.zeros_like(rel), rel)
    bad = diff > (atol + rtol * e.abs().nan_to_num(0.0, 0.0, 0.0))
    result["max_abs_err"] = float(diff.max())
    result["max_rel_err"] = float(rel.max())
    result["mismatch_fraction"] = float(bad.double().mean())
    result["passed"] = not bool(bad.any())
    # NaN or infinity where the reference is finite: said as such, since "max abs error inf" does
    # not tell a user their kernel returned memory it never wrote.
    nonfinite = nonfinite_text(actual, torch.isfinite(expected)) if not result["passed"] else ""
    if nonfinite:
        result["reason"] = f"output {index} has {nonfinite}"
    elif not result["passed"]:
        result["reason"] = (f"{int(bad.sum())} of {bad.numel()} elements "
                            f"({100 * result['mismatch_fraction']:.3g}%) outside atol={atol}, "
                            f"rtol={rtol}; max abs error {result['max_abs_err']:.3g}")
    return result


def same_values(a, b):
    """Bitwise-equal values, with NaN equal to NaN (torch.equal treats NaN as unequal)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point():
        nan_a, nan_b = torch.isnan(a), torch.isnan(b)
        return (torch.equal(nan_a, nan_b)
                and torch.equal(a.masked_fill(nan_a, 0), b.masked_fill(nan_b, 0)))
    return torch.equal(a, b)


def relative_l2_error(actual, expected):
    e = expected.double()
    denom = float(e.norm())
    num = float((actual.double() - e).norm())
    if denom == 0.0:
        return 0.0 if num == 0.0 else float("inf")
    return num / denom


def vacuity(expected_outputs, atol, rtol):
    """Would an all-zero or a constant output pass allclose on these outputs? Returns a reason
    or ''."""
    for i, e in enumerate(expected_outputs):
        if not e.is_floating_point() or e.numel() == 0:
            continue
        d = e.double()
        tol = atol + rtol * d.abs()
        if bool((d.abs() <= tol).all()):
            return (f"output {i}: an all-zero tensor passes the tolerance "
                    f"(max |ref| = {float(d.abs().max()):.3g})")
        c = float(d.mean())
        if bool(((d - c).abs() <= tol).all()):
            return f"output {i}: a constant tensor ({c:.3g}) passes the tolerance"
    return ""
