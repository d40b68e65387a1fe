"""Comparison, vacuity and input perturbation."""

import torch

from kernelpro_worker import tensors


def test_compare_reports_errors_and_mismatch_fraction():
    ref = torch.linspace(-1, 1, 1000)
    out = ref.clone()
    out[:10] += 0.5
    r = tensors.compare_output(out, ref, 1e-2, 1e-3)
    assert not r["passed"]
    assert abs(r["max_abs_err"] - 0.5) < 1e-6
    assert abs(r["mismatch_fraction"] - 0.01) < 1e-9
    assert "10 of 1000" in r["reason"]
    assert tensors.compare_output(ref.clone(), ref, 1e-2, 1e-3)["passed"]


def test_shape_dtype_and_nan_are_mismatches():
    ref = torch.zeros(4, 4)
    assert "shape" in tensors.compare_output(torch.zeros(16), ref, 1e-2, 1e-3)["reason"]
    assert "dtype" in tensors.compare_output(torch.zeros(4, 4, dtype=torch.float64), ref, 1e-2, 1e-3)["reason"]
    nan = ref.clone()
    nan[0, 0] = float("nan")
    assert not tensors.compare_output(nan, ref, 1e-2, 1e-3)["passed"]
    assert tensors.compare_output(nan, nan.clone(), 1e-2, 1e-3)["passed"]  # NaN where the reference has NaN


def test_vacuity_detects_tiny_and_constant_outputs():
    assert "all-zero" in tensors.vacuity([torch.randn(1000) * 1e-4], 1e-2, 1e-3)
    assert "constant" in tensors.vacuity([5.0 + torch.randn(1000) * 1e-4], 1e-2, 1e-3)
    assert tensors.vacuity([torch.randn(1000)], 1e-2, 1e-3) == ""


def test_signed_mixed_scale_keeps_zeros_shapes_and_integers():
    x = torch.tril(torch.rand(64, 64))
    idx = torch.arange(10)
    y, same_idx = tensors.signed_mixed_scale([x, idx], seed=3)
    assert y.shape == x.shape and y.dtype == x.dtype
    assert torch.equal(y == 0, x == 0)  # triangular structure survives
    assert (y < 0).any()  # inputs from torch.rand become signed
    assert torch.equal(same_idx, idx)
    assert torch.equal(y, tensors.signed_mixed_scale([x, idx], seed=3)[0])  # deterministic


def test_overlap_detects_views_and_not_separate_tensors():
    x = torch.randn(100)
    assert tensors.overlaps(x[10:20], x)
    assert not tensors.overlaps(x.clone(), x)


def test_same_values_treats_nan_as_equal_to_itself():
    a = torch.tensor([1.0, float("nan"), 3.0])
    assert tensors.same_values(a, a.clone())
    assert not torch.equal(a, a.clone())  # why same_values exists
    assert not tensors.same_values(a, torch.tensor([1.0, 2.0, 3.0]))


class _Problem:
    def __init__(self, get_inputs):
        self.get_inputs = get_inputs


def test_a_cuda_error_in_get_inputs_says_problems_return_cpu_tensors():
    def needs_cuda():
        raise AssertionError("Torch not compiled with CUDA enabled")

    try:
        tensors.generate_inputs(_Problem(needs_cuda), 1, "cpu")
    except RuntimeError as e:
        message = str(e)
    else:
        raise AssertionError("no error")
    assert "AssertionError: Torch not compiled with CUDA enabled" in message
    assert "get_inputs() returns CPU tensors (kernelpro moves them to the device itself)" in message
    # Other errors are the problem's own, passed on as they are.
    try:
        tensors.generate_inputs(_Problem(lambda: [][1]), 1, "cpu")
    except IndexError:
        pass


def test_a_tensor_off_the_cpu_under_device_cpu_is_named():
    class Meta:
        def get_inputs(self):
            return [torch.zeros(2), torch.empty(2, device="meta")]

    try:
        tensors.generate_inputs(Meta(), 1, "cpu")
    except ValueError as e:
        assert "input 1 is on meta under --device cpu" in str(e)
    else:
        raise AssertionError("no error")
    assert len(tensors.generate_inputs(Meta(), 1)) == 2  # not on cpu: nothing said
