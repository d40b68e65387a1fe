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


def _whole_and_chunked(monkeypatch, fn, *args):
    whole = fn(*args)
    monkeypatch.setattr(tensors, "CHUNK", 7)  # many pieces, the last one short
    return whole, fn(*args)


def test_a_comparison_in_pieces_reports_what_the_whole_one_does(monkeypatch):
    ref = torch.linspace(-3, 3, 1000)
    out = ref.clone()
    out[:10] += 0.5
    out[500] = float("nan")
    out[501] = float("inf")
    whole, chunked = _whole_and_chunked(monkeypatch, tensors.compare_output, out, ref, 1e-2, 1e-3)
    assert not chunked["passed"]
    assert chunked == whole
    assert "1 NaN and 1 infinite values (of 1000)" in chunked["reason"]
    close = ref + 1e-4
    whole, chunked = _whole_and_chunked(monkeypatch, tensors.compare_output, close, ref, 1e-2, 0)
    assert chunked["passed"] and chunked["max_abs_err"] == whole["max_abs_err"]


def test_mismatches_are_counted_across_pieces(monkeypatch):
    monkeypatch.setattr(tensors, "CHUNK", 10)
    ref = torch.zeros(100)
    out = ref.clone()
    out[::10] = 1.0  # one bad element in each piece
    r = tensors.compare_output(out, ref, 1e-2, 1e-3)
    assert "10 of 100 elements (10%)" in r["reason"] and r["mismatch_fraction"] == 0.1


def test_l2_error_and_vacuity_agree_in_pieces(monkeypatch):
    ref = torch.randn(999)
    out = ref + 1e-3 * torch.randn(999)
    whole, chunked = _whole_and_chunked(monkeypatch, tensors.relative_l2_error, out, ref)
    assert abs(whole - chunked) < 1e-12 * whole
    assert "all-zero" in tensors.vacuity([torch.randn(1000) * 1e-4], 1e-2, 1e-3)
    assert "constant" in tensors.vacuity([5.0 + torch.randn(1000) * 1e-4], 1e-2, 1e-3)
    assert tensors.vacuity([torch.randn(1000)], 1e-2, 1e-3) == ""


def test_a_fingerprint_sees_every_bit_dtype_and_shape():
    x = torch.randn(1001)
    fp = tensors.fingerprint([x])
    assert fp.startswith("fp1:") and fp == tensors.fingerprint([x.clone()])
    for i in (0, 500, 1000):
        y = x.clone()
        y.view(torch.int32)[i] ^= 1  # the lowest bit of one element
        assert tensors.fingerprint([y]) != fp
    assert tensors.fingerprint([x.reshape(7, 143)]) != fp
    assert tensors.fingerprint([x.double()]) == tensors.fingerprint([x.double().clone()])
    odd = torch.arange(7, dtype=torch.uint8)  # 7 bytes: a tail past the last whole word
    changed = odd.clone()
    changed[6] = 99
    assert tensors.fingerprint([odd]) != tensors.fingerprint([changed])
    assert tensors.fingerprint([x[1:]]) == tensors.fingerprint([x[1:].clone()])  # offset view


def test_a_fingerprint_is_the_same_in_pieces(monkeypatch):
    x = torch.randn(1000)
    whole, chunked = _whole_and_chunked(monkeypatch, tensors.fingerprint, [x])
    assert whole == chunked


def test_the_device_sums_see_every_word_and_do_not_depend_on_the_pieces(monkeypatch):
    """word_sums is what a CUDA tensor's fingerprint uses; it runs the same on the host."""
    x = torch.randn(1001)
    raw = x.view(torch.uint8)
    sums = tensors.word_sums(raw)
    assert sums == tensors.word_sums(raw.clone())
    for i in (0, 500, 1000):
        y = x.clone()
        y.view(torch.int32)[i] ^= 1
        assert tensors.word_sums(y.view(torch.uint8)) != sums
    monkeypatch.setattr(tensors, "CHUNK", 7)
    assert tensors.word_sums(raw) == sums
    odd = torch.arange(7, dtype=torch.uint8)
    changed = odd.clone()
    changed[6] = 99  # in the tail past the last whole word
    assert tensors.word_sums(odd) != tensors.word_sums(changed)
