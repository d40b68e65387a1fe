"""Plain data files: what crosses between worker processes, and what the reader refuses."""

import io
import json
import math
import os
import struct
import tokenize

import pytest
import torch

from kernelpro_worker import plain
from kernelpro_worker.common import sha256_file

from conftest import ROOT


def roundtrip(tmp_path, value):
    path = str(tmp_path / "v.kpt")
    digest = plain.save(path, value)
    assert digest == sha256_file(path) == plain.digest(value)
    return plain.load(path, sha256=digest)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16,
                                   torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8,
                                   torch.bool, torch.complex64])
def test_tensors_of_every_common_dtype_come_back_bit_for_bit(tmp_path, dtype):
    x = (torch.randn(3, 5, dtype=torch.float64) * 100).to(dtype)
    y, = roundtrip(tmp_path, [x])
    assert type(y) is torch.Tensor and y.dtype == dtype and y.shape == x.shape
    assert torch.equal(y.reshape(-1).view(torch.uint8), x.reshape(-1).view(torch.uint8))


def test_special_shapes_layouts_and_values(tmp_path):
    scalar = torch.tensor(2.5)
    empty = torch.empty(0, 7)
    strided = torch.arange(24.0).reshape(4, 6).t()  # not contiguous: stored in C order
    nan = torch.tensor([float("nan"), float("inf"), -float("inf"), 1.0])
    value = [scalar, empty, strided, nan, 3, 2.5, float("nan"), float("-inf"), None, True, "s",
             (1, (2, 3)), {"k": [4, torch.float16]}, torch.Size([2, 3])]
    back = roundtrip(tmp_path, value)
    assert back[0].shape == () and float(back[0]) == 2.5
    assert back[1].shape == (0, 7)
    assert torch.equal(back[2], strided)
    assert torch.equal(torch.isnan(back[3]), torch.isnan(nan)) and back[3][1] == float("inf")
    assert back[4:6] == [3, 2.5] and type(back[4]) is int and type(back[5]) is float
    assert math.isnan(back[6]) and back[7] == -math.inf
    assert back[8:11] == [None, True, "s"]
    assert back[11] == (1, (2, 3)) and back[12] == {"k": [4, torch.float16]}
    assert back[13] == (2, 3)


def test_objects_that_are_not_data_are_refused(tmp_path):
    with pytest.raises(plain.PlainError, match="function"):
        plain.save(str(tmp_path / "f.kpt"), [lambda: 0])
    with pytest.raises(plain.PlainError, match="string keys"):
        plain.save(str(tmp_path / "d.kpt"), {1: 2})


def _file(tmp_path, header, data=b""):
    text = json.dumps(header).encode()
    path = tmp_path / "bad.kpt"
    path.write_bytes(plain.MAGIC + struct.pack("<Q", len(text)) + text + data)
    return str(path)


def good_header(**tensor):
    entry = {"dtype": "float32", "shape": [2], "offset": 0, "nbytes": 8}
    entry.update(tensor)
    return {"format": "kernelpro-plain", "version": 1, "value": [{"tensor": 0}], "tensors": [entry]}


@pytest.mark.parametrize("header,data,needle", [
    (good_header(), b"\0" * 8, None),
    (good_header(dtype="float128"), b"\0" * 8, "unknown dtype"),
    (good_header(dtype="object"), b"\0" * 8, "unknown dtype"),
    (good_header(), b"\0" * 7, "holds 7"),
    (good_header(), b"\0" * 9, "holds 9"),
    (good_header(nbytes=4), b"\0" * 4, "4 bytes for float32"),
    (good_header(shape=[-1]), b"", "not a list of sizes"),
    (good_header(offset=4), b"\0" * 12, "offset 4"),
    (dict(good_header(), value=[{"tensor": 0}, {"tensor": 0}]), b"\0" * 8, "referenced twice"),
    (dict(good_header(), value=[]), b"\0" * 8, "never referenced"),
    (dict(good_header(), value=[{"eval": "1"}, {"tensor": 0}]), b"\0" * 8, "malformed value"),
    (dict(good_header(), version=2), b"\0" * 8, "not a kernelpro-plain version 1"),
    (dict(good_header(), extra=1), b"\0" * 8, "not a kernelpro-plain version 1"),
])
def test_the_reader_is_strict(tmp_path, header, data, needle):
    path = _file(tmp_path, header, data)
    if needle is None:
        assert plain.load(path)[0].shape == (2,)
        return
    with pytest.raises(plain.PlainError, match=needle):
        plain.load(path)


def test_wrong_magic_truncated_header_and_nan_in_the_header_are_errors(tmp_path):
    path = tmp_path / "x.kpt"
    path.write_bytes(b"\x80\x04\x95" + b"\0" * 20)  # the start of a pickle
    with pytest.raises(plain.PlainError, match="magic"):
        plain.load(str(path))
    path.write_bytes(plain.MAGIC + struct.pack("<Q", 1000) + b"{}")
    with pytest.raises(plain.PlainError, match="header length"):
        plain.load(str(path))
    text = b'{"format": "kernelpro-plain", "version": 1, "value": NaN, "tensors": []}'
    path.write_bytes(plain.MAGIC + struct.pack("<Q", len(text)) + text)
    with pytest.raises(plain.PlainError, match="NaN"):
        plain.load(str(path))


def test_a_changed_file_fails_its_content_hash_before_it_is_read(tmp_path):
    path = str(tmp_path / "v.kpt")
    digest = plain.save(path, [torch.ones(4)])
    plain.save(path, [torch.zeros(4)])
    with pytest.raises(plain.ContentMismatch, match="content hash"):
        plain.load(path, sha256=digest)


def test_the_worker_never_pickles():
    """No torch.save, torch.load or pickle anywhere in the worker: every file it reads could have
    been written by a candidate (docstrings and comments may mention them)."""
    banned = {("torch", "save"), ("torch", "load"), ("pickle",), ("cPickle",), ("dill",),
              ("cloudpickle",), ("marshal",), ("shelve",), ("joblib",), ("np", "load"),
              ("numpy", "load"), ("torch", "serialization")}
    package = os.path.join(ROOT, "python", "kernelpro_worker")
    found = []
    for name in sorted(os.listdir(package)):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(package, name)) as f:
            tokens = [t for t in tokenize.generate_tokens(io.StringIO(f.read()).readline)
                      if t.type == tokenize.NAME or t.string == "."]
        words = [t.string for t in tokens]
        for i, word in enumerate(words):
            if (word,) in banned or (i + 2 < len(words) and words[i + 1] == "." and
                                     (word, words[i + 2]) in banned):
                found.append(f"{name}:{tokens[i].start[0]}: {word}")
    assert found == []


def test_the_data_starts_aligned_and_is_read_in_place(tmp_path):
    import struct

    path = str(tmp_path / "a.kpt")
    x = torch.arange(1000, dtype=torch.float32)
    plain.save(path, [x, torch.ones(3, dtype=torch.float64)])
    raw = open(path, "rb").read()
    (header_len,) = struct.unpack("<Q", raw[8:16])
    assert (16 + header_len) % plain.ALIGN == 0
    data = bytearray(raw)
    loaded = plain.loads(data)
    assert torch.equal(loaded[0], x)
    data[16 + header_len] ^= 0xFF  # the tensors are views of the bytes read, not copies
    assert not torch.equal(loaded[0], x)


def test_a_file_without_the_padding_still_loads(tmp_path):
    import json
    import struct

    header = json.dumps({"format": "kernelpro-plain", "version": 1, "value": {"tensor": 0},
                         "tensors": [{"dtype": "float32", "shape": [3], "offset": 0,
                                      "nbytes": 12}]}).encode()
    header = header + b" " * (1 - (16 + len(header)) % 2)  # an odd start: unaligned floats
    data = bytearray(plain.MAGIC + struct.pack("<Q", len(header)) + header
                     + torch.tensor([1.0, 2.0, 3.0]).numpy().tobytes())
    assert (16 + len(header)) % 4
    assert torch.equal(plain.loads(data), torch.tensor([1.0, 2.0, 3.0]))
