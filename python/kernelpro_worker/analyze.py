"""Stage-1 reference analysis: which operations the reference runs, how many FLOPs, how few bytes.

One forward call of the reference Model runs under a TorchDispatchMode that records every aten
operator it reaches (after autograd and composite decomposition: nn.Linear arrives as addmm,
einsum as bmm, F.layer_norm as native_layer_norm). Each operator is put in a category:

    gemm           mm, addmm, bmm, baddbmm, matmul-like, scaled dot-product attention
    convolution    convolution (incl. transposed)
    softmax        softmax, log_softmax
    normalization  layer_norm, rms_norm, batch_norm, group_norm, instance_norm
    elementwise    pointwise arithmetic and activations (add, mul, sigmoid, gelu, where, tril...)
    reduction      sum, mean, amax, max, var, norm, logsumexp, cumsum...
    other          copies, concatenation, indexing, anything unrecognised

Views and metadata operators (view, t, permute, expand...) move no data and are not counted.

FLOPs: GEMM and convolution FLOPs come from shape formulas (2*M*N*K, 2*out*Cin/g*prod(kernel)),
the same ones torch.utils.flop_counter.FlopCounterMode uses; when that counter exists
(torch >= 2.1) its total for those operators is used instead. Operators it does not count are
estimated: ~1 FLOP per output element per elementwise op, ~1 per input element per reduction,
~5 per element for softmax and normalisation (max/sum/exp/div, mean/var/scale). The estimate
is labelled as such in `flops_notes`.

Minimum bytes: inputs, parameters and buffers read once plus outputs written once.

A Triton or CUDA program (a module with KERNELPRO_PROGRAM, docs/programs.md) is analysed by
analyze_program_bytes instead: its launcher's tensors give the bytes, and its FLOPs are the
PyTorch REFERENCE's counted ones or, without a reference, left to ncu (the recorder above sees a
Triton or CUDA launch as nothing, or as a few allocations).
"""

import time

# Operators that only reinterpret storage: no data moves, nothing is counted.
_VIEW_OPS = {
    "view", "_unsafe_view", "_reshape_alias", "reshape", "t", "transpose", "permute", "expand",
    "unsqueeze", "squeeze", "select", "slice", "as_strided", "alias", "detach", "lift_fresh",
    "unbind", "split", "split_with_sizes", "chunk", "narrow", "diagonal", "view_as_real",
    "view_as_complex", "numpy_T", "_conj", "resolve_conj", "resolve_neg", "lift", "empty_like",
    "empty", "empty_strided", "new_empty", "new_empty_strided", "_to_copy_meta", "movedim",
    "expand_as", "view_as", "flatten", "unflatten", "contiguous_meta",
}
_GEMM_OPS = {"mm", "addmm", "bmm", "baddbmm", "matmul", "mv", "addmv", "dot", "vdot", "linear",
             "addbmm", "_scaled_mm", "_int_mm",
             "_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
             "_scaled_dot_product_cudnn_attention", "_scaled_dot_product_attention_math",
             "_flash_attention_forward", "_efficient_attention_forward",
             "scaled_dot_product_attention"}
_CONV_OPS = {"convolution", "_convolution", "conv2d", "conv1d", "conv3d", "conv_transpose1d",
             "conv_transpose2d", "conv_transpose3d", "cudnn_convolution", "mkldnn_convolution",
             "_slow_conv2d_forward", "slow_conv3d_forward", "slow_conv_transpose2d",
             "slow_conv_transpose3d", "cudnn_convolution_transpose", "miopen_convolution",
             "_nnpack_spatial_convolution", "slow_conv_dilated2d", "slow_conv_dilated3d",
             "thnn_conv2d", "convolution_overrideable"}
_SOFTMAX_OPS = {"_softmax", "softmax", "_log_softmax", "log_softmax", "_safe_softmax"}
_NORM_OPS = {"native_layer_norm", "layer_norm", "native_batch_norm", "_native_batch_norm_legit",
             "_native_batch_norm_legit_no_training", "_native_batch_norm_legit_functional",
             "batch_norm", "cudnn_batch_norm", "miopen_batch_norm", "native_group_norm",
             "group_norm", "instance_norm", "_fused_rms_norm", "rms_norm", "_batch_norm_impl_index"}
_REDUCTION_OPS = {"sum", "mean", "amax", "amin", "max", "min", "argmax", "argmin", "prod", "var",
                  "std", "var_mean", "std_mean", "norm", "linalg_vector_norm", "logsumexp",
                  "cumsum", "cumprod", "any", "all", "nansum", "nanmean", "count_nonzero",
                  "aminmax", "median", "mode", "topk", "sort", "kthvalue", "cummax", "cummin",
                  "logcumsumexp", "frobenius_norm", "nuclear_norm", "_cdist_forward", "trace"}
_ELEMENTWISE_OPS = {
    "add", "sub", "rsub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod", "pow",
    "neg", "abs", "sign", "sgn", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
    "rsqrt", "reciprocal", "square", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh",
    "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "erfinv", "sigmoid", "logit",
    "relu", "relu6", "gelu", "silu", "mish", "elu", "selu", "celu", "leaky_relu", "hardtanh",
    "hardsigmoid", "hardswish", "hardshrink", "softshrink", "softplus", "threshold", "prelu",
    "_prelu_kernel", "glu", "clamp", "clamp_min", "clamp_max", "clip", "where", "maximum",
    "minimum", "fmax", "fmin", "lerp", "addcmul", "addcdiv", "floor", "ceil", "round", "trunc",
    "frac", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_not",
    "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "masked_fill",
    "tril", "triu", "isnan", "isinf", "isfinite", "nan_to_num", "heaviside", "hypot", "xlogy",
    "sigmoid_backward", "log_sigmoid_forward", "logsigmoid", "_log_sigmoid", "dropout",
    "native_dropout", "rrelu", "softsign", "tanhshrink", "sinc", "deg2rad", "rad2deg",
    "copysign", "nextafter", "ldexp", "float_power", "positive", "bitwise_left_shift",
    "bitwise_right_shift", "fill", "zero", "fill_", "zero_", "polar", "angle", "conj_physical",
}
_OTHER_MEMORY_OPS = {"clone", "copy", "copy_", "_to_copy", "to", "cat", "stack", "index",
                     "index_select", "gather", "scatter", "scatter_add", "index_put", "embedding",
                     "repeat", "roll", "flip", "pad", "constant_pad_nd", "reflection_pad2d",
                     "replication_pad2d", "_unsafe_index", "masked_select", "nonzero", "arange",
                     "zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "bernoulli",
                     "rand", "randn", "randint", "one_hot", "unfold", "im2col", "col2im",
                     "upsample_nearest2d", "upsample_bilinear2d", "max_pool2d_with_indices",
                     "avg_pool2d", "max_pool2d", "adaptive_avg_pool2d", "_adaptive_avg_pool2d",
                     "avg_pool1d", "avg_pool3d", "max_pool3d_with_indices", "max_pool1d"}
# Per-element FLOP estimates for what no flop counter counts (documented in the module docstring).
_PER_ELEMENT_FLOPS = {"elementwise": 1, "reduction": 1, "softmax": 5, "normalization": 5}
CATEGORIES = ("gemm", "convolution", "softmax", "normalization", "elementwise", "reduction",
              "other")


def _base_name(func):
    name = func.overloadpacket.__name__ if hasattr(func, "overloadpacket") else str(func)
    return name


def _category(torch, func, name):
    stripped = name.rstrip("_") if name not in ("fill_", "zero_", "copy_") else name
    if name in _VIEW_OPS or stripped in _VIEW_OPS:
        return None
    for cat, names in (("gemm", _GEMM_OPS), ("convolution", _CONV_OPS), ("softmax", _SOFTMAX_OPS),
                       ("normalization", _NORM_OPS), ("reduction", _REDUCTION_OPS),
                       ("elementwise", _ELEMENTWISE_OPS)):
        if name in names or stripped in names:
            return cat
    pointwise = getattr(getattr(torch, "Tag", None), "pointwise", None)
    if pointwise is not None and pointwise in getattr(func, "tags", ()):
        return "elementwise"
    return "other"


def _numel(torch, value):
    return value.numel() if isinstance(value, torch.Tensor) else 0


def _tensors(torch, values):
    out = []
    for v in values:
        if isinstance(v, torch.Tensor):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            out.extend(_tensors(torch, v))
    return out


def _prod(values):
    p = 1
    for v in values:
        p *= int(v)
    return p


def _gemm_flops(torch, name, args, outputs):
    """2*M*N*K for the matrix products; 4*B*H*L*S*E for attention (QK^T and PV)."""
    t = [a for a in args if isinstance(a, torch.Tensor)]
    out = outputs[0] if outputs else None
    try:
        if name in ("mm", "_scaled_mm", "_int_mm"):
            return 2 * t[0].shape[0] * t[0].shape[1] * t[1].shape[1]
        if name == "addmm":  # addmm(bias, a, b)
            return 2 * t[1].shape[0] * t[1].shape[1] * t[2].shape[1]
        if name == "bmm":
            return 2 * t[0].shape[0] * t[0].shape[1] * t[0].shape[2] * t[1].shape[2]
        if name in ("baddbmm", "addbmm"):
            return 2 * t[1].shape[0] * t[1].shape[1] * t[1].shape[2] * t[2].shape[2]
        if name in ("mv", "addmv", "dot", "vdot"):
            mat = t[1] if name == "addmv" else t[0]
            return 2 * mat.numel()
        if "attention" in name:
            q, k = t[0], t[1]
            v = t[2] if len(t) > 2 else k
            batch = _prod(q.shape[:-2])
            return 2 * batch * q.shape[-2] * k.shape[-2] * q.shape[-1] + \
                2 * batch * q.shape[-2] * k.shape[-2] * v.shape[-1]
        if out is not None and len(t) >= 2:  # matmul, linear: out elements times the contraction
            return 2 * out.numel() * t[0].shape[-1]
    except (IndexError, AttributeError):
        pass
    return 0


def _conv_flops(torch, args, outputs):
    """2 * (output elements) * Cin/groups * prod(kernel); transposed: the input side instead."""
    t = [a for a in args if isinstance(a, torch.Tensor)]
    if len(t) < 2 or not outputs:
        return 0
    x, w = t[0], t[1]
    transposed = any(a is True for a in args[6:7]) if len(args) > 6 else False
    big = x.numel() if transposed else outputs[0].numel()
    return 2 * big * w.shape[1] * _prod(w.shape[2:])


class _Recorder:
    """Collects (category, op name, FLOPs, dtype) per aten call."""

    def __init__(self, torch):
        self.torch = torch
        self.calls = []

    def record(self, func, args, kwargs, out):
        torch = self.torch
        name = _base_name(func)
        category = _category(torch, func, name)
        if category is None:
            return
        outputs = _tensors(torch, out if isinstance(out, (list, tuple)) else [out])
        inputs = _tensors(torch, list(args) + list((kwargs or {}).values()))
        if category == "gemm":
            flops = _gemm_flops(torch, name, list(args), outputs)
        elif category == "convolution":
            flops = _conv_flops(torch, list(args), outputs)
        elif category == "elementwise":
            flops = _PER_ELEMENT_FLOPS["elementwise"] * (outputs[0].numel() if outputs else 0)
        elif category in ("reduction", "softmax", "normalization"):
            flops = _PER_ELEMENT_FLOPS[category] * (inputs[0].numel() if inputs else 0)
        else:
            flops = 0
        dtype = None
        for t in inputs:
            if t.is_floating_point() or t.dtype in (torch.int8, torch.uint8):
                dtype = str(t.dtype).replace("torch.", "")
                break
        self.calls.append({"category": category, "op": name, "flops": int(flops), "dtype": dtype,
                           "input_bytes": sum(t.numel() * t.element_size() for t in inputs)})


def _dispatch_mode_class(torch):
    try:
        from torch.utils._python_dispatch import TorchDispatchMode
    except ImportError:
        return None

    class RecordingMode(TorchDispatchMode):
        def __init__(self, recorder):
            super().__init__()
            self.recorder = recorder

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            self.recorder.record(func, args, kwargs, out)
            return out

    return RecordingMode


def analyze(torch, problem, model, inputs, device):
    """Runs model(*inputs) once under the recorder (and FlopCounterMode when it exists)."""
    from .common import as_output_list

    started = time.monotonic()
    recorder = _Recorder(torch)
    mode_cls = _dispatch_mode_class(torch)
    notes = []
    counter = None
    try:
        from torch.utils.flop_counter import FlopCounterMode
        counter = FlopCounterMode(display=False)
    except ImportError:
        notes.append(f"torch {torch.__version__} has no FlopCounterMode: GEMM/convolution FLOPs "
                     "from kernelpro's shape formulas (2*M*N*K, 2*out*Cin/groups*kernel)")
    with torch.no_grad():
        if counter is not None:
            counter.__enter__()
        try:
            if mode_cls is not None:
                with mode_cls(recorder):
                    outputs = as_output_list(model(*inputs))
            else:
                outputs = as_output_list(model(*inputs))
                notes.append("torch has no TorchDispatchMode: operations could not be detected")
        finally:
            if counter is not None:
                counter.__exit__(None, None, None)
    if device == "cuda":
        torch.cuda.synchronize()

    categories = {c: {"count": 0, "flops": 0} for c in CATEGORIES}
    ops = {}
    for call in recorder.calls:
        cat = categories[call["category"]]
        cat["count"] += 1
        cat["flops"] += call["flops"]
        key = (call["category"], call["op"])
        entry = ops.setdefault(key, {"category": call["category"], "op": call["op"], "count": 0,
                                     "flops": 0})
        entry["count"] += 1
        entry["flops"] += call["flops"]

    formula_counted = categories["gemm"]["flops"] + categories["convolution"]["flops"]
    estimated = sum(categories[c]["flops"]
                    for c in ("elementwise", "reduction", "softmax", "normalization"))
    counted = formula_counted
    flops_source = "shape formulas"
    if counter is not None:
        counted = int(counter.get_total_flops())
        flops_source = "torch.utils.flop_counter.FlopCounterMode"
        if formula_counted and counted and abs(counted - formula_counted) > 0.01 * formula_counted:
            notes.append(f"FlopCounterMode counted {counted} GEMM/convolution FLOPs, kernelpro's "
                         f"shape formulas {formula_counted}; using FlopCounterMode's")
    if estimated:
        notes.append("elementwise, reduction, softmax and normalisation FLOPs are estimates "
                     "(~1 FLOP per output element per elementwise op, ~1 per input element per "
                     "reduction, ~5 per element for softmax and normalisation)")

    nbytes = lambda ts: sum(t.numel() * t.element_size() for t in ts if isinstance(t, torch.Tensor))
    params = (list(model.parameters()) + list(model.buffers())
              if hasattr(model, "parameters") else [])
    input_tensors = [t for t in inputs if isinstance(t, torch.Tensor)]

    # The dominant operation: the category with the most FLOPs (ties: the most input bytes).
    dominant = None
    for call in recorder.calls:
        score = (call["flops"], call["input_bytes"])
        if dominant is None or score > dominant[0]:
            dominant = (score, call)
    if dominant is not None and dominant[1]["dtype"]:
        dominant_dtype = dominant[1]["dtype"]
        dominant_category = dominant[1]["category"]
    else:
        largest = max(input_tensors + params, key=lambda t: t.numel() * t.element_size(),
                      default=None)
        dominant_dtype = str(largest.dtype).replace("torch.", "") if largest is not None else None
        dominant_category = dominant[1]["category"] if dominant is not None else None

    result = {
        "operations": sorted(ops.values(),
                             key=lambda o: (CATEGORIES.index(o["category"]), o["op"])),
        "categories": {c: v for c, v in categories.items() if v["count"]},
        "flops": int(counted + estimated),
        "flops_counted": int(counted),
        "flops_estimated": int(estimated),
        "flops_source": flops_source,
        "flops_notes": notes,
        "input_bytes": nbytes(input_tensors),
        "parameter_bytes": nbytes(params),
        "output_bytes": nbytes(outputs),
        "inputs": [{"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
                   for t in input_tensors],
        "outputs": [{"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
                    for t in outputs],
        "dominant_dtype": dominant_dtype,
        "dominant_category": dominant_category,
        "tf32_allowed": bool(torch.backends.cuda.matmul.allow_tf32),
        "seconds": time.monotonic() - started,
    }
    result["min_bytes"] = result["input_bytes"] + result["parameter_bytes"] + result["output_bytes"]
    return result


def analyze_program_bytes(torch, inputs, init_inputs, outputs, reference):
    """The analyze result of a Triton or CUDA program (analyze_step._analyze_program says where
    each part comes from).

    The launcher is called as ENTRY(*inputs, *init_inputs), so its tensors are exactly those:
    all read once, plus its outputs written once. `outputs` are the program's own output tensors
    (one real run), or None; `reference` is the analyze result of the PyTorch REFERENCE, whose
    operations, FLOPs and output shapes stand in for the program's, or None. With neither, the
    outputs and min_bytes are None (unknown). FLOPs are the reference's, else None: torch's
    counters see a Triton or CUDA launch as nothing."""
    def tensors(values):
        return [t for t in _tensors(torch, list(values))]

    def describe(ts):
        return [{"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")} for t in ts]

    nbytes = lambda ts: sum(t.numel() * t.element_size() for t in ts)
    input_tensors, init_tensors = tensors(inputs), tensors(init_inputs)
    if reference is not None:
        result = {k: reference[k] for k in (
            "operations", "categories", "flops", "flops_counted", "flops_estimated",
            "flops_notes", "outputs", "output_bytes", "dominant_dtype", "dominant_category")}
    else:
        largest = max(input_tensors + init_tensors, key=lambda t: t.numel() * t.element_size(),
                      default=None)
        result = {"operations": [], "categories": {}, "flops": None, "flops_counted": None,
                  "flops_estimated": None, "flops_notes": [],
                  "dominant_dtype": str(largest.dtype).replace("torch.", "") if largest is not None
                  else None,
                  "dominant_category": None}
        out = tensors(outputs) if outputs is not None else None
        result["outputs"] = describe(out) if out is not None else None
        result["output_bytes"] = nbytes(out) if out is not None else None
    result.update(
        input_bytes=nbytes(input_tensors),
        parameter_bytes=nbytes(init_tensors),
        inputs=describe(input_tensors),
        tf32_allowed=bool(torch.backends.cuda.matmul.allow_tf32),
    )
    result["min_bytes"] = (None if result["output_bytes"] is None else
                           result["input_bytes"] + result["parameter_bytes"]
                           + result["output_bytes"])
    return result
