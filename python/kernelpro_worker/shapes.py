"""Shape variants: the problem's inputs at sizes the benchmark never showed.

A candidate is timed on one shape, the benchmark's; these variants check (never time) that it is
still correct on others. Where they come from (`shapes` in the reference step's request):

  given    the problem's get_input_variants(): a list whose items are either a list of inputs
           (like get_inputs(); the benchmark's init inputs) or a dict {"label": str,
           "inputs": [...], "init_inputs": [...] (optional: the benchmark's)}
  derived  a KernelBench problem's module-level integer size constants that get_inputs() or
           get_init_inputs() read, changed all at once: halved, then halved plus one (odd,
           off any tile multiple); never larger than the benchmark. get_inputs() and
           get_init_inputs() run again with those globals, in a fresh copy of the module, so
           Model is built from the variant's init inputs too
  auto     given when the problem has get_input_variants, derived otherwise
  off      none

Variants are computed in the reference step (the referee) like any trial: their inputs and init
inputs go to the inputs tree (shape_<i>.kpt, shape_<i>_init.kpt), the reference's outputs to
expected/shape_<i>.kpt, always stored (they are no larger than the benchmark's). A derived variant
is kept only when the reference runs on it and gives finite outputs, and when its input shapes
differ from the benchmark's and from every earlier variant; given ones must run.

The candidate's side (run_variants) runs in its own process: a fresh ModelNew per variant, from
that variant's init inputs and the same init seed, its outputs saved for the referee's compare.
"""

import os

from .common import StepError, as_output_list, bounded, to_device
from .loading import EXT, classify_runtime, construct, load_problem, made_again, read_input, sync

MAX_DERIVED = 2
# Integer globals whose names say they are not sizes: changing them changes what is computed.
_NOT_SIZES = ("kernel", "stride", "pad", "dilation", "group", "axis", "reduce", "seed", "head")
_MIN_SIZE = 4  # smaller integers are rarely sizes (a dim index, a kernel of 3, a stride of 2)


def resolve_mode(problem, mode):
    """'given', 'derived' or 'off' for the request's mode ('auto' picks)."""
    mode = mode or "off"
    if mode == "auto":
        return "given" if hasattr(problem, "get_input_variants") else "derived"
    if mode not in ("given", "derived", "off"):
        raise StepError("input_error", f"unknown shapes mode {mode!r}")
    return mode


def size_constants(problem):
    """{name: value} of the module-level integer constants get_inputs/get_init_inputs read."""
    names = set()
    for fn in ("get_inputs", "get_init_inputs"):
        code = getattr(getattr(problem, fn, None), "__code__", None)
        if code is not None:
            names.update(code.co_names)
    sizes = {}
    for name in sorted(names):
        value = getattr(problem, name, None)
        if type(value) is not int or name.startswith("_"):
            continue
        if value < _MIN_SIZE or any(word in name.lower() for word in _NOT_SIZES):
            continue
        sizes[name] = value
    return sizes


def derived_settings(sizes):
    """The globals of each derived variant: all halved, then all halved plus one."""
    if not sizes:
        return []
    halved = {k: max(1, v // 2) for k, v in sizes.items()}
    odd = {k: v // 2 + 1 for k, v in sizes.items()}
    return [s for s in (halved, odd) if s != sizes][:MAX_DERIVED]


def describe(settings):
    return ", ".join(f"{k}={v}" for k, v in settings.items())


def input_specs(values):
    """[{"shape": [...], "dtype": "float32"} or None for a non-tensor] of a list of inputs."""
    import torch

    return [{"shape": list(v.shape), "dtype": str(v.dtype).replace("torch.", "")}
            if isinstance(v, torch.Tensor) else None for v in values]


def _shape_key(values):
    return repr(input_specs(values))


class Variant:
    """A variant's inputs, init inputs and Model class, and its recipe: how `regenerate` makes
    it again in another process ({"settings": {...}, "seed": s} for a derived one, {"given": i,
    "seed": s} for a given one)."""

    def __init__(self, label, inputs, init_inputs, model_class, recipe):
        self.label, self.inputs, self.init_inputs = label, list(inputs), list(init_inputs)
        self.model_class, self.recipe = model_class, recipe


def _given_items(problem, seed):
    import torch

    torch.manual_seed(seed)
    try:
        return list(problem.get_input_variants())
    except Exception as e:  # noqa: BLE001
        raise StepError("problem_error", "get_input_variants() failed: "
                        f"{type(e).__name__}: {bounded(str(e), 300)}")


def _sized_module(problem_path, settings):
    """A fresh copy of the problem's module with the size constants `settings` set: its
    get_inputs(), get_init_inputs() and Model read these globals."""
    module = load_problem(problem_path)
    for name, value in settings.items():
        setattr(module, name, value)
    return module


def _derived(problem_path, settings, seed, init_seed):
    """The derived variant of `settings`, from a fresh copy of the problem's module."""
    import torch

    from . import tensors

    copy = _sized_module(problem_path, settings)
    inputs = tensors.generate_inputs(copy, seed)
    torch.manual_seed(init_seed)
    init_inputs = list(copy.get_init_inputs())
    return Variant(describe(settings), inputs, init_inputs, copy.Model,
                   {"settings": dict(settings), "seed": seed})


def variant_recipe(request, name):
    """The recipe the reference step recorded for shape variant `name` (the request's
    `inputs_recipe`), or None when `name` is no shape variant."""
    return ((request.get("inputs_recipe") or {}).get("shapes") or {}).get(name)


def read_variant_inputs(request, name):
    """Shape variant `name`'s inputs, on the request's device: read from the inputs tree where
    the reference step stored them, else made again from their recipe (`inputs_recipe`'s
    "shapes") and checked against the fingerprint it recorded."""
    entry = variant_recipe(request, name) or {}
    if "fingerprint" not in entry or name + EXT in (request.get("inputs_manifest") or {}):
        return to_device(read_input(request, name), request["device"])
    return made_again(f"the problem's inputs of shape variant {name}",
                      lambda: to_device(regenerate(request["inputs_recipe"]["problem"], entry,
                                                   int(request["init_seed"])).inputs,
                                        request["device"]),
                      entry["fingerprint"])


def model_class(problem_path, recipe):
    """The reference's Model class of the variant `recipe` names: a derived variant's from a
    fresh copy of the module with its sizes set (Model may read them), a given one's the
    problem's own."""
    return _sized_module(problem_path, recipe.get("settings") or {}).Model


def regenerate(problem_path, recipe, init_seed):
    """The variant `recipe` names, made again as `variants` made it (the caller checks its
    inputs against the fingerprint the reference step recorded)."""
    if "settings" in recipe:
        return _derived(problem_path, recipe["settings"], int(recipe["seed"]), init_seed)
    import torch

    problem = load_problem(problem_path)
    items = _given_items(problem, int(recipe["seed"]))
    torch.manual_seed(init_seed)
    benchmark_init = list(problem.get_init_inputs())
    return _given_variant(int(recipe["given"]), items[int(recipe["given"])], problem.Model,
                          benchmark_init, int(recipe["seed"]))


def variants(problem_path, problem, mode, seed, init_seed, benchmark_init):
    """(mode, [Variant], notes): the variants of `mode` ('given' or 'derived'), their inputs from
    `seed` and init inputs from `init_seed`, before the reference has run on them."""
    notes = []
    if mode == "given":
        if not hasattr(problem, "get_input_variants"):
            return mode, [], ["--shapes given: the problem has no get_input_variants(); no shape "
                              "variants were checked"]
        items = _given_items(problem, seed)
        return mode, [_given_variant(i, item, problem.Model, benchmark_init, seed)
                      for i, item in enumerate(items)], notes
    sizes = size_constants(problem)
    if not sizes:
        return mode, [], ["no shape variants derived: get_inputs() reads no module-level integer "
                          "size constants"]
    found = []
    for settings in derived_settings(sizes):
        try:
            found.append(_derived(problem_path, settings, seed, init_seed))
        except Exception as e:  # noqa: BLE001 - the problem cannot make this shape
            notes.append(f"shape {describe(settings)} skipped: the problem's inputs could not be "
                         f"made ({type(e).__name__}: {bounded(str(e), 200)})")
    return mode, found, notes


def _given_variant(i, item, model_class, benchmark_init, seed):
    if isinstance(item, dict):
        if "inputs" not in item:
            raise StepError("problem_error", f"get_input_variants() item {i} has no 'inputs'")
        inputs = item["inputs"]
        init_inputs = item.get("init_inputs", benchmark_init)
        label = str(item.get("label") or "")
    else:
        inputs, init_inputs, label = item, benchmark_init, ""
    if not isinstance(inputs, (list, tuple)) or not isinstance(init_inputs, (list, tuple)):
        raise StepError("problem_error", f"get_input_variants() item {i}: inputs and "
                        "init_inputs must be lists")
    if not label:
        label = "inputs " + ", ".join("x".join(map(str, s["shape"])) if s else "scalar"
                                      for s in input_specs(inputs))
    return Variant(label, inputs, init_inputs, model_class, {"given": i, "seed": seed})


def compute(build, problem_path, problem, request):
    """Runs the reference on each variant and stores those it accepts; returns the reference
    meta's "shapes" record. `build` is the reference step's _ReferenceBuild (its save and its
    device, seeds and notes)."""
    torch = build.torch
    mode = resolve_mode(problem, request.get("shapes", "off"))
    record = {"mode": mode, "variants": []}
    if mode == "off" or getattr(problem, "KERNELPRO_PROGRAM", None) is not None:
        if mode != "off":
            build.notes.append("shape variants are not derived for Triton or CUDA programs")
            record["mode"] = "off"
        return record
    init_seed = request["init_seed"]
    torch.manual_seed(init_seed)
    benchmark_init = list(problem.get_init_inputs())
    from . import tensors

    # The benchmark's input shapes, as the first trial saw them (its inputs made again only when
    # there was no trial: they may be gigabytes).
    benchmark = build.benchmark_specs
    if benchmark is None:
        benchmark = input_specs(tensors.generate_inputs(problem, request["check_seeds"][0] if
                                                        request.get("check_seeds") else 0))
    mode, found, notes = variants(problem_path, problem, mode, request.get("shape_seed", 3000),
                                  init_seed, benchmark_init)
    build.notes.extend(notes)
    seen = {repr(benchmark)}
    for variant in found:
        key = _shape_key(variant.inputs)
        if key in seen and mode == "derived":
            continue
        seen.add(key)
        name = f"shape_{len(record['variants'])}"
        try:
            model = construct(torch, variant.model_class, variant.init_inputs, init_seed,
                              build.device)
            inputs = to_device(variant.inputs, build.device)
            with torch.no_grad():
                outputs = as_output_list(model(*inputs))
            sync(torch, build.device)
            if not tensors.all_finite(outputs):
                raise ValueError("the reference's outputs are not finite")
        except Exception as e:  # noqa: BLE001
            why = f"{type(e).__name__}: {bounded(str(e), 200)}"
            if mode == "given":
                raise StepError("problem_error", f"the reference fails on input variant "
                                f"{variant.label}: {why}")
            build.notes.append(f"shape {variant.label} skipped: the reference rejects it ({why})")
            continue
        # As compact as the benchmark's trials: past the size limits only a recipe and
        # fingerprints, the inputs made again and the outputs recomputed where they are needed.
        build.save("inputs", name + "_init" + EXT, variant.init_inputs)
        build.save_variant_inputs(name, variant.recipe, inputs)
        build.save_expected(f"expected/{name}{EXT}", outputs)
        record["variants"].append({"name": name, "label": variant.label,
                                   "inputs": input_specs(variant.inputs)})
    record["mode"] = mode
    return record


def run_variants(loaded, request):
    """The candidate's side: each variant of `request["shapes"]` ([name]) on a fresh ModelNew
    built from that variant's init inputs, its outputs saved as out_dir/<name>.kpt. Returns
    {"status": "ok", "variants": [{"name", "status": "ok"|"runtime_error"|"incorrect",
    "message"}]}: a failure on one variant is that variant's, never the step's."""
    torch, device = loaded.torch, loaded.device
    out_dir = request["out_dir"]
    os.makedirs(out_dir, exist_ok=True)
    rows = []
    fault = ""
    for name in request["shapes"]:
        row = {"name": name, "status": "ok", "message": ""}
        rows.append(row)
        if fault:
            row.update(status="runtime_error", message="not run: " + fault)
            continue
        try:
            init_inputs = read_input(request, name + "_init")
            inputs = read_variant_inputs(request, name)
            model = construct(torch, loaded.module.ModelNew, init_inputs, request["init_seed"],
                              device)
            with torch.no_grad():
                out = as_output_list(model(*inputs), strict=True)
            if device == "cuda":
                torch.cuda.current_stream().synchronize()
            snapshot = [loaded.clone(t).cpu() for t in out]
            sync(torch, device)
            from .candidate import save_outputs

            save_outputs(loaded.save, os.path.join(out_dir, name + EXT), snapshot)
        except StepError as e:
            if e.status == "reference_changed":
                raise
            row.update(status="incorrect" if e.status == "incorrect" else "runtime_error",
                       message=e.message)
        except Exception as e:  # noqa: BLE001 - the candidate failed on this shape
            row.update(status="runtime_error", message=classify_runtime(e)[1])
            if row["message"].startswith("CUDA fault"):
                fault = "an earlier shape left a CUDA fault in the candidate's process"
    return {"status": "ok", "message": "", "variants": rows}
