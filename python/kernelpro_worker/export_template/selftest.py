"""python -m PACKAGE.selftest [--device cpu|cuda] [--no-compile]: checks the exported operator
against the reference Model on the benchmark's inputs, the fallback to the reference on a call
the guards refuse, and, where torch.compile exists, torch.compile of a module using the operator.
Prints one line per check and exits 1 when one fails."""

import argparse
import importlib
import sys

import torch

PACKAGE = __package__ or __name__.rsplit(".", 1)[0]


def _close(a, b, atol, rtol):
    a = list(a) if isinstance(a, (tuple, list)) else [a]
    b = list(b) if isinstance(b, (tuple, list)) else [b]
    return len(a) == len(b) and all(
        x.shape == y.shape and torch.allclose(x.float(), y.float(), atol=atol, rtol=rtol)
        for x, y in zip(a, b))


def _strided(t):
    """The same values in a non-contiguous tensor (a call the guards refuse)."""
    if t.dim() == 0 or t.shape[-1] < 2:
        return None
    wide = torch.empty(list(t.shape[:-1]) + [2 * t.shape[-1]], dtype=t.dtype, device=t.device)
    view = wide[..., ::2]
    view.copy_(t)
    return view


def run(device=None, compile_check=True, out=print):
    """The checks; returns the number of failures."""
    pkg = importlib.import_module(PACKAGE)
    meta, stats = pkg.META, pkg.STATS
    if device is None:
        device = meta["device"]
        if device == "cuda" and not torch.cuda.is_available():
            device = "cpu"
    atol, rtol = meta["atol"], meta["rtol"]
    failures = 0

    def report(ok, what):
        nonlocal failures
        failures += 0 if ok else 1
        out(("ok    " if ok else "FAIL  ") + what)

    ref_mod = pkg.reference_module()
    init = pkg.benchmark_init_inputs()
    model = pkg.Model(*init).to(device).eval()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(meta["init_seed"]))
        reference = ref_mod.Model(*init).to(device).eval()
    inputs = pkg.benchmark_inputs(device)
    kernel_served = device in pkg.GUARDS["devices"]
    before = dict(stats)
    with torch.no_grad():
        got, want = model(*inputs), reference(*inputs)
    path = "kernel" if stats["kernel"] > before["kernel"] else "reference"
    report(_close(got, want, atol, rtol),
           f"torch.ops.kernelpro.{meta['op_name']} matches the reference on the benchmark inputs "
           f"({device}, atol={atol} rtol={rtol}; served by the {path})")
    if kernel_served:
        report(path == "kernel", f"the benchmark inputs on {device} run the kernel")
    first = next((i for i, a in enumerate(inputs) if isinstance(a, torch.Tensor)), None)
    strided = _strided(inputs[first]) if first is not None else None
    if strided is not None:
        other = list(inputs)
        other[first] = strided
        before = dict(stats)
        with torch.no_grad():
            got, want = model(*other), reference(*other)
        report(stats["reference"] > before["reference"] and _close(got, want, atol, rtol),
               "a call the guards refuse (a non-contiguous input) runs the reference and matches")
    if compile_check and hasattr(torch, "compile") and hasattr(torch.library, "custom_op"):
        before = dict(stats)
        compiled = torch.compile(model)
        with torch.no_grad():
            got = compiled(*inputs)
        report(_close(got, want if strided is None else reference(*inputs), atol, rtol)
               and stats["kernel"] + stats["reference"] > before["kernel"] + before["reference"],
               "torch.compile(Model) runs the operator and matches the reference")
    elif compile_check:
        out(f"skip  torch.compile: torch {torch.__version__} has no torch.library.custom_op "
            "(torch >= 2.4 needed to compile the operator)")
    return failures


def main(argv=None):
    parser = argparse.ArgumentParser(prog=f"python -m {PACKAGE}.selftest")
    parser.add_argument("--device", choices=["cpu", "cuda"], default=None)
    parser.add_argument("--no-compile", action="store_true")
    args = parser.parse_args(argv)
    failures = run(args.device, not args.no_compile)
    print(f"{PACKAGE}: {'all checks passed' if failures == 0 else f'{failures} check(s) failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
