"""The `reference` step: computes (or finds cached, checked) every trial's inputs and the
reference's outputs on them. Reference outputs are computed, and outputs compared, only in
processes that never import the candidate (this module does not import candidate.py).

The cache of one problem's reference (key: problem file, seeds, device, torch version, layout):

  CACHE/references/<key>/meta.json        what step_reference returns, minus per-call fields
  CACHE/references/<key>/expected/<trial>.kpt, expected64/<trial>.kpt   (outputs up to 4 MiB)
  CACHE/inputs/<key>/init_inputs.kpt, <trial>.kpt                        (inputs up to 1 MiB)
  shape variants (shapes.py): inputs/<key>/shape_<i>_init.kpt, and like any trial's
  inputs/<key>/shape_<i>.kpt (up to 1 MiB) and references/<key>/expected/shape_<i>.kpt (up to
  4 MiB)

Only the inputs tree is ever named to a candidate's process. meta.json records a manifest
{relative path: sha256} per tree and a digest of both; a cache hit is used only when every file
matches it, and the binary passes the manifests it got here to the steps that read the files.

What is not stored, because it is cheaper to recompute than to keep (a 64 MiB output costs
64 MiB per trial and 128 MiB more per fp64 trial: 704 MiB for one problem and settings at the
default 5 check, 2 extra and 2 fp64 trials):
  - a trial's inputs larger than STORE_INPUTS_UP_TO: `inputs_recipe` {problem, trials: {name:
    {seed, variant, fingerprint}}, shapes: {shape_<i>: {settings or given, seed, fingerprint}}}
    says how to regenerate them (a shape variant's: shapes.regenerate), and their fingerprint
    (tensors.fingerprint, on the device) is covered by manifest_digest like the files;
  - an expected output (set) larger than STORE_OUTPUTS_UP_TO, when the reference gave the same
    bits twice on the first trial: `expected_recipe` {"expected/check_0.kpt": fingerprint}
    records tensors.fingerprint of the outputs, computed on the device without a copy to the
    host (covered by manifest_digest too), and the compare step (the referee, which never
    imports a candidate) runs the reference again on the trial's inputs and uses the outputs,
    where they are, only if they give the same fingerprint (recompute_expected). The comparison
    is then the very one it would have been against a file. A fingerprint tells same bits from
    different ones, not a forgery: both sides of it are computed by the referee from the
    problem, the seeds and digest-checked inputs. A reference that is not bitwise
    reproducible has every output stored, and so does a recomputation the binary asks for
    (`rebuild`) after a step found the reference changed;
  - the timing trials' outputs: nothing compares against them (the referee verifies timed calls
    by running the reference on the very inputs of each call).

General-purpose compression is no substitute: zlib keeps 92 % of a float32 output's bytes (84 %
with the bytes of each element split into planes), at half a second per 16 MiB.
"""

import copy
import fcntl
import hashlib
import json
import os
import shutil
import time

from . import optrace, plain, programs, shapes
from .common import (StepError, as_output_list, bounded, read_json, sha256_file, sha256_text,
                     to_device, write_json)
from .loading import (EXT, construct, import_torch, load_problem, out_of_memory, read_input,
                      reference_changed, sync)

REFERENCE_LAYOUT = 8  # bump when the reference cache's contents change
# A trial's inputs larger than this are not stored: every process that needs them regenerates
# them from their seed (what reading them back costs, about) and checks them against the digest
# the reference step recorded. A request's `store_inputs_up_to` overrides it (tests).
STORE_INPUTS_UP_TO = 1 << 20
# An expected output set (one trial's outputs, or their fp64 version) larger than this is not
# stored but recomputed by the compare step and checked against its fingerprint; with the
# defaults' seven expected and two fp64 files an entry stays under 50 MiB.
# `store_outputs_up_to` overrides.
STORE_OUTPUTS_UP_TO = 4 << 20
# The timing trials' input sets together, past the first: each process that times holds every set
# on the device beside the buffer it refills (a 6 GiB input times 3 sets is 18 GiB more per
# process). Sets past this are not made; every timed call still gets inputs of its own.
TIMING_SETS_UP_TO = 2 << 30


def _entry_dirs(request, key):
    """The cache entry of `key`: (CACHE/references/<key>, CACHE/inputs/<key>)."""
    cache = request["cache_dir"]
    return os.path.join(cache, "references", key), os.path.join(cache, "inputs", key)


def _reference_key(request, torch):
    device_name = torch.cuda.get_device_name(0) if request["device"] == "cuda" else "cpu"
    fields = {k: request.get(k) for k in ("device", "init_seed", "check_seeds", "extra_seeds",
                                          "timing_seeds", "fp64_trials")}
    # Shape variants (shapes.py) are part of the entry only when asked for: keys stay as they were.
    if request.get("shapes", "off") != "off":
        fields.update(shapes=request["shapes"], shape_seed=request.get("shape_seed"))
    # A program's REFERENCE gives the expected outputs: its content is part of the key too.
    reference = programs.reference_file(request["problem"])
    related = sha256_file(reference) if reference and os.path.isfile(reference) else ""
    return sha256_text(sha256_file(request["problem"]), related, json.dumps(fields, sort_keys=True),
                       device_name, torch.__version__, str(REFERENCE_LAYOUT))[:24]


def manifest_digest(reference_manifest, inputs_manifest, inputs_recipe=None,
                    expected_recipe=None):
    text = json.dumps({"inputs": inputs_manifest, "reference": reference_manifest,
                       "recipe": inputs_recipe or {}, "expected": expected_recipe or {}},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _tree_problem(root, manifest, ignore=()):
    """'' when the files under `root` are exactly `manifest` ({relative path: sha256}), else the
    first difference: 'expected/check_0.kpt: content hash differs'."""
    if not isinstance(manifest, dict):
        return "no manifest"
    for rel in sorted(manifest):
        path = os.path.join(root, rel)
        if not os.path.isfile(path):
            return f"{rel}: missing"
        if sha256_file(path) != manifest[rel]:
            return f"{rel}: content hash differs"
    for folder, _, files in os.walk(root):
        for name in files:
            rel = os.path.relpath(os.path.join(folder, name), root)
            if rel not in manifest and rel not in ignore:
                return f"{rel}: not in the manifest"
    return ""


def _cached_reference(ref_dir, inputs_dir, key):
    """(meta, '') for a cache that passes its content check, (None, reason) for one that does not,
    (None, '') when there is none."""
    meta_path = os.path.join(ref_dir, "meta.json")
    if not os.path.exists(ref_dir) and not os.path.exists(inputs_dir):
        return None, ""
    try:
        meta = read_json(meta_path)
    except (OSError, ValueError) as e:
        return None, f"meta.json: {type(e).__name__}"
    if (not isinstance(meta, dict) or meta.get("layout") != REFERENCE_LAYOUT
            or meta.get("key") != key):
        return None, "meta.json: not this reference's"
    ref_manifest, inputs_manifest = meta.get("reference_manifest"), meta.get("inputs_manifest")
    recipe, expected_recipe = meta.get("inputs_recipe"), meta.get("expected_recipe")
    if not isinstance(ref_manifest, dict) or not isinstance(inputs_manifest, dict) or \
            not isinstance(recipe, dict) or not isinstance(expected_recipe, dict) or \
            meta.get("manifest_digest") != manifest_digest(ref_manifest, inputs_manifest, recipe,
                                                           expected_recipe):
        return None, "meta.json: manifests do not match their digest"
    if not inputs_manifest or not (ref_manifest or expected_recipe):
        return None, "meta.json: no manifest"
    problem = _tree_problem(ref_dir, ref_manifest, ignore=("meta.json",))
    if not problem:
        problem = _tree_problem(inputs_dir, inputs_manifest)
        problem = problem and "inputs: " + problem
    return (None, problem) if problem else (meta, "")


def _spot_check(request, torch, meta, ref_dir):
    """'' when the first check trial of a cached reference is what the problem gives today: its
    init inputs and inputs are what get_init_inputs()/get_inputs() return for their seeds, and
    the reference's outputs on them match the cached ones (within atol/rtol; bit for bit when
    only their digest is cached). Else what differs.

    The content check alone trusts meta.json, which anything able to write the cache could have
    rewritten together with the files; this trial is recomputed, so no cache makes a wrong output
    pass it."""
    from . import tensors

    name = (meta.get("trials") or {}).get("check", [None])[0]
    if name is None or not request["check_seeds"]:
        return ""
    try:
        problem = load_problem(request["problem"])
        torch.manual_seed(request["init_seed"])
        init_inputs = list(problem.get_init_inputs())
        if plain.digest(init_inputs) != meta["inputs_manifest"].get("init_inputs" + EXT):
            return "init_inputs.kpt: differs from what get_init_inputs() returns"
        inputs = to_device(tensors.generate_inputs(problem, request["check_seeds"][0],
                                                   request["device"]), request["device"])
        stored = meta["inputs_manifest"].get(name + EXT)
        if stored is not None:
            same = plain.digest(inputs) == stored
        else:
            recipe = (meta["inputs_recipe"].get("trials") or {}).get(name) or {}
            same = tensors.fingerprint(inputs) == recipe.get("fingerprint")
        if not same:
            return f"inputs of {name}: differ from what get_inputs() returns for its seed"
        model = construct(torch, problem.Model, init_inputs, request["init_seed"],
                          request["device"])
        with torch.no_grad():
            outputs = as_output_list(model(*inputs))
        rel = f"expected/{name}{EXT}"
        recorded = meta["expected_recipe"].get(rel)
        if recorded is not None and rel not in meta["reference_manifest"]:
            if tensors.fingerprint(outputs) != recorded:
                return f"{rel}: differs from a fresh run of the reference (not the same bits)"
            return ""
        expected = plain.load(os.path.join(ref_dir, rel), sha256=meta["reference_manifest"][rel])
    except Exception as e:  # noqa: BLE001 - whatever failed, recomputing says it properly
        return f"re-running trial {name} failed: {type(e).__name__}: {bounded(str(e), 300)}"
    if len(outputs) != len(expected):
        return f"{rel}: {len(expected)} outputs where the reference returns {len(outputs)}"
    for j, (o, e) in enumerate(zip(outputs, expected)):
        cmp = tensors.compare_output(o, e, request["atol"], request["rtol"], index=j)
        if not cmp["passed"]:
            return f"{rel}: differs from a fresh run of the reference ({cmp['reason']})"
    return ""


# The reference's model (and its fp64 copy) in this process, for recompute_expected: one problem
# at a time, {"key": ..., "model": ..., "fp64": ...}.
_RECOMPUTE = {}


def _recompute_model(request, torch, fp64):
    key = (os.path.abspath(request["problem"]), request["device"], request["init_seed"],
           (request.get("inputs_manifest") or {}).get("init_inputs" + EXT))
    if _RECOMPUTE.get("key") != key:
        _RECOMPUTE.clear()
        init_inputs = read_input(request, "init_inputs")
        model = construct(torch, load_problem(request["problem"]).Model, init_inputs,
                          request["init_seed"], request["device"])
        _RECOMPUTE.update(key=key, model=model, fp64=None)
    if fp64 and _RECOMPUTE["fp64"] is None:
        _RECOMPUTE["fp64"] = copy.deepcopy(_RECOMPUTE["model"]).double()
    return _RECOMPUTE["fp64" if fp64 else "model"]


def _variant_model(request, torch, name, recipe):
    """The reference's model of shape variant `name`, as shapes.compute built it: the variant's
    Model class (a derived variant's from a copy of the module with its sizes) from its stored
    init inputs."""
    init_inputs = read_input(request, name + "_init")
    return construct(torch, shapes.model_class(request["problem"], recipe), init_inputs,
                     request["init_seed"], request["device"])


def recompute_expected(request, rel, digest):
    """The expected outputs `rel` ("expected/check_3.kpt", "expected64/check_0.kpt") that the
    reference step recorded only by `digest`: the reference run again, as the reference step ran
    it, on the trial's inputs (read or regenerated like a candidate's, and checked the same way).
    They are returned, on the device, only if their fingerprint is `digest`, so a comparison
    against them is the one a stored file would have given; otherwise reference_changed, which
    the binary answers by recomputing the reference with every output stored. Runs in the
    referee only (the request names the problem, the inputs tree and its manifest and recipe,
    and the device)."""
    from . import tensors

    folder, _, file = rel.partition("/")
    name = file[:-len(EXT)] if file.endswith(EXT) else file
    what = f"the reference's {rel}"
    try:
        torch = import_torch(request["device"])
        variant = shapes.variant_recipe(request, name)
        model = (_variant_model(request, torch, name, variant) if variant is not None else
                 _recompute_model(request, torch, fp64=folder == "expected64"))
        inputs = (shapes.read_variant_inputs(request, name) if variant is not None else
                  to_device(read_input(request, name), request["device"]))
        if folder == "expected64":
            inputs = tensors.to_double(inputs)
        with torch.no_grad():
            outputs = as_output_list(model(*inputs))
        recomputed = tensors.fingerprint(outputs)
    except StepError:
        raise
    except Exception as e:  # noqa: BLE001 - whatever failed, the binary recomputes the reference
        if out_of_memory(e):  # recomputing the whole reference would only run out again
            raise StepError("runtime_error", f"{what} could not be recomputed: "
                            f"{type(e).__name__}: {e}") from None
        raise reference_changed(what, "recomputing it from the problem failed: "
                                f"{type(e).__name__}: {bounded(str(e), 300)}") from None
    if recomputed != digest:
        raise reference_changed(what, "recomputed from the problem, it does not give the "
                                "fingerprint the reference step recorded: the reference's "
                                "outputs are not the same bits in another process")
    return outputs


def _touch(path):
    """Marks a cache entry used now (its modification time), for least-recently-used pruning."""
    try:
        os.utime(path)
    except OSError:
        pass  # a read-only view of the cache: the entry just looks older


def _tensor_bytes(values):
    import torch

    return sum(v.numel() * v.element_size() for v in values if isinstance(v, torch.Tensor))


def _install(tmp_dir, final_dir):
    """Moves a finished tree into place, replacing an old one (callers hold the key's lock)."""
    if os.path.exists(final_dir):
        old = f"{final_dir}.old{os.getpid()}"
        os.replace(final_dir, old)
        os.replace(tmp_dir, final_dir)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp_dir, final_dir)


def _nonfinite(tensors_list):
    """[(output index, description)] of outputs holding NaN or infinity."""
    from . import tensors

    found = []
    for j, t in enumerate(tensors_list):
        text = tensors.nonfinite_text(t)
        if text:
            found.append((j, text))
    return found


def step_reference(request):
    """Computes (or finds cached, checked) inputs and reference outputs for every trial."""
    probed = dict(_PROBED)
    _PROBED.clear()
    request = dict(request, probed=probed)
    device = request["device"]
    torch = import_torch(device)

    key = _reference_key(request, torch)
    ref_dir, inputs_dir = _entry_dirs(request, key)
    os.makedirs(os.path.dirname(ref_dir), exist_ok=True)
    os.makedirs(os.path.dirname(inputs_dir), exist_ok=True)
    # One process computes or checks a key at a time; others wait and then find it cached.
    with open(ref_dir + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        notes = []
        if request.get("rebuild"):
            if os.path.exists(ref_dir) or os.path.exists(inputs_dir):
                notes.append(f"the cached reference at {ref_dir} was recomputed: a later step "
                             "found its files changed")
        else:
            meta, problem = _cached_reference(ref_dir, inputs_dir, key)
            if meta is not None:
                problem = _spot_check(request, torch, meta, ref_dir)
            if meta is not None and not problem:
                _touch(os.path.join(ref_dir, "meta.json"))  # last used: `kernelpro cache prune`
                # The key pins the problem's bytes, not its path: regenerate from this copy.
                meta["inputs_recipe"] = dict(meta["inputs_recipe"],
                                             problem=os.path.abspath(request["problem"]))
                meta.update(cached=True, reference_dir=ref_dir, inputs_dir=inputs_dir)
                return meta
            if problem:
                notes.append(f"the cached reference at {ref_dir} failed its content check "
                             f"({problem}); rebuilt")
        if request.get("rebuild"):
            # A step found the reference changed; one cause is a reference whose recomputed
            # outputs are not the same bits in another process: store every output this time.
            request = dict(request, store_outputs_up_to=float("inf"))
        meta = _compute_reference(request, torch, key, ref_dir, inputs_dir)
    meta["notes"] = sorted(set(meta["notes"])) + notes
    meta.update(cached=False, reference_dir=ref_dir, inputs_dir=inputs_dir)
    return meta


def step_probe_inputs(request):
    """Whether the problem can make its inputs, asked before any candidate is built, so that a
    problem whose get_init_inputs() or get_inputs() raises is refused at once rather than after
    the builds: both run once, on the host, under the init seed and the first check seed. A
    reference already cached for the same settings made them before; then nothing runs (the
    reference step checks that entry as always). The request is the reference step's."""
    from . import tensors

    torch = import_torch(request["device"])
    ref_dir, _ = _entry_dirs(request, _reference_key(request, torch))
    if os.path.exists(os.path.join(ref_dir, "meta.json")):
        return {"status": "ok", "message": "", "cached": True}
    problem = load_problem(request["problem"])
    torch.manual_seed(request["init_seed"])
    try:
        problem.get_init_inputs()
    except Exception as e:  # noqa: BLE001 - the problem's own code
        raise StepError("problem_error", f"get_init_inputs() failed: {type(e).__name__}: {e}")
    _PROBED.clear()
    if request["check_seeds"]:
        seed = request["check_seeds"][0]
        try:
            values = tensors.generate_inputs(problem, seed, request["device"])
        except Exception as e:  # noqa: BLE001
            raise StepError("problem_error", f"get_inputs() failed: {type(e).__name__}: {e}")
        # The reference step that follows takes them instead of calling get_inputs() again (a
        # KernelBench task's inputs can take seconds to make).
        _PROBED[(os.path.abspath(request["problem"]), seed)] = values
    return {"status": "ok", "message": "", "cached": False}


# The inputs step_probe_inputs made, for the reference step right after it: {(problem, seed):
# values}; emptied by every reference step, so they are never held longer.
_PROBED = {}


def _compute_reference(request, torch, key, ref_dir, inputs_dir):
    """Computes every trial into temporary trees that replace the key's only when all succeed."""
    from . import tensors

    problem = load_problem(request["problem"])
    ref_tmp = ref_dir + f".tmp{os.getpid()}"
    inputs_tmp = inputs_dir + f".tmp{os.getpid()}"
    for d in (ref_tmp, inputs_tmp):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    try:
        build = _ReferenceBuild(request, torch, tensors, problem, ref_tmp, inputs_tmp)
        build.construct_models()
        started = time.monotonic()
        for kind, seeds in (("check", request["check_seeds"]), ("extra", request["extra_seeds"]),
                            ("timing", request["timing_seeds"])):
            for i, seed in enumerate(seeds):
                build.trial(kind, i, seed)
        build.shapes = shapes.compute(build, request["problem"], problem, request)
        meta = build.meta(key, started)
        write_json(os.path.join(ref_tmp, "meta.json"), meta)
        _install(inputs_tmp, inputs_dir)
        _install(ref_tmp, ref_dir)
        return meta
    except BaseException:
        shutil.rmtree(ref_tmp, ignore_errors=True)
        shutil.rmtree(inputs_tmp, ignore_errors=True)
        raise


class _ReferenceBuild:
    """One computation of a reference's cache entry: the models, then one trial at a time (its
    inputs, the reference's outputs, the checks on them, the files), then meta.json's fields."""

    def __init__(self, request, torch, tensors, problem, ref_tmp, inputs_tmp):
        self.request, self.torch, self.tensors, self.problem = request, torch, tensors, problem
        self.device = request["device"]
        self.atol, self.rtol = request["atol"], request["rtol"]
        self.ref_tmp, self.inputs_tmp = ref_tmp, inputs_tmp
        self.ref_manifest, self.inputs_manifest, self.expected_recipe = {}, {}, {}
        self.recipe = {"problem": os.path.abspath(request["problem"]), "trials": {},
                       "shapes": {}}
        self.benchmark_specs = None  # the first trial's input shapes (shapes.compute reads them)
        self.store_limit = request.get("store_inputs_up_to", STORE_INPUTS_UP_TO)
        self.output_limit = request.get("store_outputs_up_to", STORE_OUTPUTS_UP_TO)
        self.model = self.baseline = self.trace = None
        self.baseline_checked = 0
        self.notes = []
        self.trials = {"check": [], "extra": [], "timing": []}
        self.timing_set_bytes = None  # the first timing set's inputs
        self.metas = None  # the outputs' shapes and dtypes, from the first trial
        self.fp32 = None
        self.fp64_model = None
        self.fp64_errors = []
        self.fp64_trials = []
        self.aliases = []
        self.vacuous = ""
        self.shapes = {"mode": "off", "variants": []}

    def save(self, tree, rel, value):
        if tree == "inputs":
            self.inputs_manifest[rel] = plain.save(os.path.join(self.inputs_tmp, rel), value)
        else:
            self.ref_manifest[rel] = plain.save(os.path.join(self.ref_tmp, rel), value)

    def save_expected(self, rel, outputs):
        """An expected output set: its file, or past the size limit only its digest (the compare
        step recomputes it; see the module's docstring)."""
        if _tensor_bytes(outputs) <= self.output_limit:
            self.save("reference", rel, outputs)
        else:
            self.expected_recipe[rel] = self.tensors.fingerprint(outputs)

    def save_variant_inputs(self, name, recipe, inputs):
        """A shape variant's inputs (on the device): stored up to the size limit, else only their
        fingerprint; its recipe (how to make it again) always."""
        entry = dict(recipe)
        if _tensor_bytes(inputs) <= self.store_limit:
            self.save("inputs", name + EXT, list(inputs))
        else:
            entry["fingerprint"] = self.tensors.fingerprint(inputs)
        self.recipe["shapes"][name] = entry

    def construct_models(self):
        """The reference's model from the saved init inputs, its operator trace, and a program's
        own model (the baseline) when a REFERENCE gives the expected outputs."""
        torch, problem, init_seed = self.torch, self.problem, self.request["init_seed"]
        torch.manual_seed(init_seed)
        init_inputs = problem.get_init_inputs()
        try:
            self.save("inputs", "init_inputs" + EXT, list(init_inputs))
        except plain.PlainError as e:
            raise StepError("problem_error", "get_init_inputs() returned something kernelpro "
                            f"cannot pass to a candidate: {e}")
        try:
            self.model = construct(torch, problem.Model, init_inputs, init_seed, self.device)
        except Exception as e:  # noqa: BLE001
            raise StepError("problem_error",
                            f"Model(*get_init_inputs()) failed: {type(e).__name__}: {e}")
        # Every forward call of the reference is traced: its aten operators are what the
        # torch-operator policy holds a candidate's against.
        self.trace = optrace.OpTrace()
        # A program with a REFERENCE: the program is the baseline, and before it is timed its own
        # outputs must match the reference's (docs/programs.md).
        if (getattr(problem, "BaselineModel", None) is not None
                and problem.BaselineModel is not problem.Model):
            try:
                self.baseline = construct(torch, problem.BaselineModel, init_inputs, init_seed,
                                          self.device)
            except Exception as e:  # noqa: BLE001
                raise StepError("problem_error", "the program (baseline) could not be "
                                f"constructed: {type(e).__name__}: {e}")

    def run(self, inputs):
        with self.torch.no_grad(), self.trace:
            out = as_output_list(self.model(*inputs))
        sync(self.torch, self.device)
        return out

    def trial(self, kind, i, seed):
        """Trial `i` of `kind` (check, extra, timing): its inputs from `seed`, the reference's
        outputs on them, and what the reference step records of both."""
        tensors, name = self.tensors, f"{kind}_{i}"
        if kind == "timing" and i > 0 and self._timing_sets_full(i):
            return
        probed = (self.request.get("probed") or {}).pop((self.recipe["problem"], seed), None)
        try:
            base = probed if probed is not None else \
                tensors.generate_inputs(self.problem, seed, self.device)
        except Exception as e:  # noqa: BLE001
            raise StepError("problem_error", f"get_inputs() failed: {type(e).__name__}: {e}")
        inputs = to_device(base, self.device)
        variant = None
        if kind == "extra":
            inputs, note, variant = _extra_inputs(self.torch, tensors, self.run, inputs, seed)
            if inputs is None:
                self.notes.append(note)
                return
            if note:
                self.notes.append(note)
        try:
            outputs = self.run(inputs)
        except Exception as e:  # noqa: BLE001
            raise StepError("problem_error",
                            f"the reference forward failed: {type(e).__name__}: {e}")
        bad = _nonfinite(outputs)
        if bad:
            raise StepError("problem_error", f"the reference's output {bad[0][0]} on trial "
                            f"{name} has {bad[0][1]}; a reference must produce finite outputs")
        if self.metas is None:
            self._first_outputs(inputs, outputs)
            self.benchmark_specs = shapes.input_specs(inputs)
        if self.baseline is not None and kind == "check":
            self._check_baseline(name, inputs, outputs)
        self._store(kind, name, seed, variant, inputs, outputs)
        if kind == "timing" and self.timing_set_bytes is None:
            self.timing_set_bytes = _tensor_bytes(inputs)
        if kind == "check" and not self.vacuous:
            self.vacuous = tensors.vacuity(outputs, self.atol, self.rtol)
        if self.fp32 and kind == "check" and i < self.request.get("fp64_trials", 2):
            self._fp64(name, inputs, outputs)

    def _timing_sets_full(self, i):
        """Whether timing set `i` would take the sets together past TIMING_SETS_UP_TO (said once
        in the notes)."""
        each = self.timing_set_bytes
        limit = self.request.get("timing_sets_up_to", TIMING_SETS_UP_TO)
        if each is None or (i + 1) * each <= limit:
            return False
        if i == len(self.trials["timing"]):
            asked = len(self.request["timing_seeds"])
            self.notes.append(f"timed on {i} input set(s), not {asked}: each is "
                              f"{each / (1 << 30):.2f} GiB and the sets together are kept "
                              f"under {limit / (1 << 30):.2f} GiB; every timed call still gets "
                              "fresh inputs")
        return True

    def _first_outputs(self, inputs, outputs):
        """The outputs' metadata, from the first trial; and the reference run again on the same
        inputs, which must give the same outputs."""
        torch, tensors = self.torch, self.tensors
        self.metas = [_tensor_meta(t) for t in outputs]
        self.fp32 = all(t.dtype == torch.float32 for t in outputs if t.is_floating_point()) and \
            any(t.is_floating_point() for t in outputs)
        self.aliases = [any(isinstance(x, torch.Tensor) and tensors.overlaps(o, x)
                            for x in inputs) for o in outputs]
        again = self.run(inputs)
        for a, b in zip(outputs, again):
            cmp = tensors.compare_output(b, a, self.atol, self.rtol)
            if not cmp["passed"]:
                raise StepError("problem_error", "the reference is nondeterministic: two "
                                "runs on the same inputs differ (" + cmp["reason"] + "). "
                                "Dropout or batch norm in training mode, or random numbers "
                                "inside forward, make every candidate unverifiable; make "
                                "the reference deterministic (e.g. call .eval()).")
            if not torch.equal(a, b):
                self.notes.append("the reference is not bitwise deterministic (differences "
                                  "within tolerance)")
                # Its outputs cannot be recomputed and checked against a digest: keep them all.
                self.output_limit = float("inf")

    def _check_baseline(self, name, inputs, outputs):
        """A program with a REFERENCE must match it on every check trial."""
        torch = self.torch
        try:
            with torch.no_grad():
                got = as_output_list(self.baseline(*inputs))
            sync(torch, self.device)
        except Exception as e:  # noqa: BLE001
            raise StepError("problem_error", f"the program failed on trial {name}: "
                            f"{type(e).__name__}: {e}")
        if len(got) != len(outputs):
            raise StepError("problem_error", f"the program returns {len(got)} outputs, its "
                            f"REFERENCE {len(outputs)}")
        for j, (a, b) in enumerate(zip(got, outputs)):
            cmp = self.tensors.compare_output(a, b, self.atol, self.rtol)
            if not cmp["passed"]:
                raise StepError("problem_error", "the program does not match its REFERENCE "
                                f"on trial {name}, output {j}: {cmp['reason']}; fix the "
                                "program or the reference before optimising against them")
        self.baseline_checked += 1

    def _store(self, kind, name, seed, variant, inputs, outputs):
        """The trial's inputs (or, past the size limit, how to regenerate them) and, but for
        timing trials, the reference's outputs."""
        try:
            if _tensor_bytes(inputs) <= self.store_limit:
                self.save("inputs", name + EXT, list(inputs))
            else:
                self.recipe["trials"][name] = {"seed": seed, "variant": variant,
                                               "fingerprint": self.tensors.fingerprint(inputs)}
            if kind != "timing":
                self.save_expected(f"expected/{name}{EXT}", list(outputs))
        except plain.PlainError as e:
            raise StepError("problem_error", f"trial {name}: {e}")
        self.trials[kind].append(name)

    def _fp64(self, name, inputs, outputs):
        """The reference in fp64 on a check trial of an fp32 problem: what lowered precision in a
        candidate is measured against."""
        torch, tensors = self.torch, self.tensors
        try:
            if self.fp64_model is None:
                self.fp64_model = copy.deepcopy(self.model).double()
            with torch.no_grad():
                out64 = as_output_list(self.fp64_model(*tensors.to_double(inputs)))
            if _nonfinite(out64):
                self.notes.append(f"the fp64 reference is not finite on trial {name}; lowered "
                                  "precision is not checked on it")
            else:
                self.save_expected(f"expected64/{name}{EXT}", list(out64))
                self.fp64_trials.append(name)
                self.fp64_errors.append(max(tensors.relative_l2_error(o, r)
                                            for o, r in zip(outputs, out64)
                                            if o.is_floating_point()))
        except Exception as e:  # noqa: BLE001
            self.notes.append(f"fp64 reference unavailable ({type(e).__name__}: {e}); "
                              "lowered precision cannot be detected")
            self.fp32 = False

    def _trials(self):
        """The trials by kind; the shape variants' (shapes.py) under "shape", when there are."""
        names = [v["name"] for v in self.shapes["variants"]]
        return dict(self.trials, shape=names) if names else dict(self.trials)

    def meta(self, key, started):
        """meta.json: what step_reference returns, minus per-call fields."""
        torch, notes, fp32 = self.torch, self.notes, self.fp32
        if self.baseline is not None:
            program = self.problem.KERNELPRO_PROGRAM
            notes.append(f"the program ({os.path.basename(program['path'])}, {program['kind']}) "
                         f"is the timing baseline; {os.path.basename(program['reference'])} "
                         "gives the expected outputs, and the program matched them on "
                         f"{self.baseline_checked} check trials")
        if not self.trace.available:
            notes.append(f"torch {torch.__version__} has no TorchDispatchMode: the torch-operator "
                         "policy checks only how the candidate's source spells its calls")
        fp64_errors = self.fp64_errors
        return {
            "status": "ok", "layout": REFERENCE_LAYOUT, "key": key,
            "trials": self._trials(), "shapes": self.shapes,
            "outputs": self.metas, "output_aliases_input": self.aliases, "fp32": bool(fp32),
            "fp64_trials": self.fp64_trials if fp32 else [],
            "reference_fp64_error": max(fp64_errors) if fp64_errors and fp32 else None,
            "vacuous": self.vacuous, "notes": sorted(set(notes)),
            "reference_ops": sorted(self.trace.ops),
            "seconds": time.monotonic() - started, "device": self.device,
            "reference_manifest": self.ref_manifest, "inputs_manifest": self.inputs_manifest,
            "inputs_recipe": self.recipe, "expected_recipe": self.expected_recipe,
            "manifest_digest": manifest_digest(self.ref_manifest, self.inputs_manifest,
                                               self.recipe, self.expected_recipe),
        }


def _tensor_meta(t):
    return {"shape": list(t.shape), "dtype": str(t.dtype)}


def _extra_inputs(torch, tensors, run, inputs, seed):
    """Signed, mixed-scale variants of the problem's inputs; falls back when the reference turns
    non-finite on them (e.g. log of negative numbers)."""
    for signs, scales, note in ((True, True, ""),
                                (False, True, "extra trials use positive mixed-scale inputs: the "
                                              "reference is not finite on signed inputs"),
                                (True, False, "extra trials use signed unit-scale inputs")):
        candidate = tensors.signed_mixed_scale(inputs, seed, signs=signs, scales=scales)
        try:
            if tensors.all_finite(run(candidate)):
                return candidate, note, {"signs": signs, "scales": scales}
        except Exception:  # noqa: BLE001 - the reference rejects these inputs; try the next kind
            pass
    return None, "extra trials skipped: the reference is not finite on perturbed inputs", None
