"""Plain data files: how tensors and values cross between worker processes.

Every file the worker writes or reads (problem inputs, init inputs, expected outputs, a
candidate's outputs) is in this format, never a pickle: reading one builds tensors from raw bytes
and values from JSON, so a file a candidate wrote can at worst be wrong, never run code in the
process that reads it (torch.load on torch < 2.6 unpickles arbitrary objects).

Layout:

    8 bytes   magic b"KPPLAIN\\x01"
    8 bytes   header length H, little-endian unsigned
    H bytes   header, UTF-8 JSON: {"format": "kernelpro-plain", "version": 1,
                                   "value": <encoded value>, "tensors": [<tensor>, ...]}
              (the writer pads it with spaces so that the data starts at a multiple of 64)
    the rest  tensor data: each tensor's bytes, C order, little-endian, back to back

A <tensor> is {"dtype": "float32", "shape": [4096], "offset": 0, "nbytes": 16384}, its offset
counted from the start of the data. An encoded value is JSON null, true/false, an integer, a
string, a finite number (a Python float), a list, or an object with exactly one key:
{"float": "nan"|"inf"|"-inf"}, {"tuple": [...]}, {"dict": {"key": value}}, {"tensor": index}
or {"dtype": "float32"}. The reader is strict: a wrong magic, a header that is not this shape,
an unknown dtype, or sizes that do not add up to the file's length are an error naming what is
wrong, never a partial value.
"""

import hashlib
import json
import math
import os
import struct
import sys

MAGIC = b"KPPLAIN\x01"
FORMAT = "kernelpro-plain"
VERSION = 1
_PREFIX = len(MAGIC) + 8
_MAX_HEADER = 64 << 20
ALIGN = 64  # where the writer starts the data, counted from the file's first byte

# dtype names as torch spells them without "torch."; the ones a torch build lacks are skipped.
DTYPE_NAMES = (
    "float64", "float32", "float16", "bfloat16", "complex64", "complex128", "int64", "int32",
    "int16", "int8", "uint8", "bool", "uint16", "uint32", "uint64", "float8_e4m3fn",
    "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
)


class PlainError(ValueError):
    """A file that is not a well-formed plain data file."""


class ContentMismatch(PlainError):
    """A file whose bytes do not have the SHA-256 it was recorded with."""


def _torch():
    import torch

    return torch


def _dtypes():
    torch = _torch()
    found = {}
    for name in DTYPE_NAMES:
        dtype = getattr(torch, name, None)
        if isinstance(dtype, torch.dtype):
            found[name] = dtype
    return found


def dtype_name(dtype):
    """'float32' for torch.float32; PlainError for a dtype this format cannot hold."""
    name = str(dtype).replace("torch.", "")
    if name not in _dtypes():
        raise PlainError(f"dtype {name} cannot be stored as plain data")
    return name


def _encode(value, tensors):
    torch = _torch()
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if math.isnan(value):
            return {"float": "nan"}
        if math.isinf(value):
            return {"float": "inf" if value > 0 else "-inf"}
        return float(value)
    if isinstance(value, torch.Tensor):
        tensors.append(value)
        return {"tensor": len(tensors) - 1}
    if isinstance(value, torch.dtype):
        return {"dtype": dtype_name(value)}
    if isinstance(value, list):
        return [_encode(v, tensors) for v in value]
    if isinstance(value, tuple):  # torch.Size is a tuple
        return {"tuple": [_encode(v, tensors) for v in value]}
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise PlainError("only dicts with string keys can be stored as plain data")
        return {"dict": {k: _encode(v, tensors) for k, v in value.items()}}
    raise PlainError(f"a {type(value).__name__} cannot be stored as plain data")


def _tensor_bytes(t):
    """The tensor's elements as a uint8 numpy array (C order), without copying when possible."""
    torch = _torch()
    t = t.detach()
    if t.layout != torch.strided:
        raise PlainError(f"a {t.layout} tensor cannot be stored as plain data")
    t = t.cpu().contiguous().reshape(-1)
    return t.view(torch.uint8).numpy() if t.numel() else None


def _chunks(value):
    """The file's bytes for `value`, as a list of byte-like chunks (tensor data is not copied)."""
    if sys.byteorder != "little":
        raise PlainError("plain data files are little-endian; this machine is not")
    tensors = []
    encoded = _encode(value, tensors)
    entries, blobs, offset = [], [], 0
    for t in tensors:
        name = dtype_name(t.dtype)
        blob = _tensor_bytes(t)
        nbytes = 0 if blob is None else int(blob.nbytes)
        entries.append({"dtype": name, "shape": [int(s) for s in t.shape], "offset": offset,
                        "nbytes": nbytes})
        if blob is not None:
            blobs.append(memoryview(blob))
        offset += nbytes
    header = json.dumps({"format": FORMAT, "version": VERSION, "value": encoded,
                         "tensors": entries}, allow_nan=False, sort_keys=True).encode("utf-8")
    # Spaces (JSON whitespace) up to a multiple of ALIGN: the data then starts aligned, and a
    # reader can use its tensors in place instead of copying them.
    header += b" " * (-(_PREFIX + len(header)) % ALIGN)
    return [MAGIC, struct.pack("<Q", len(header)), header] + blobs


def save(path, value, hashed=True):
    """Writes `value` (tensors, numbers, strings, None, lists, tuples, str-keyed dicts) to
    `path`; returns the SHA-256 of the file's bytes as hex (None with `hashed` false: a
    candidate's outputs, read back unhashed, need none, and it costs a second per 2 GiB)."""
    chunks = _chunks(value)
    digest = hashlib.sha256() if hashed else None
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "wb") as f:
        for chunk in chunks:
            f.write(chunk)
            if digest is not None:
                digest.update(chunk)
    return digest.hexdigest() if digest is not None else None


def digest(value):
    """The SHA-256 that save() would return for `value`, without writing anything."""
    h = hashlib.sha256()
    for chunk in _chunks(value):
        h.update(chunk)
    return h.hexdigest()


def load(path, sha256=None):
    """Reads a plain data file. With `sha256`, the bytes must have that hash (ContentMismatch
    otherwise), checked before anything in them is interpreted. Errors do not repeat the path."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        data = bytearray(size)
        if f.readinto(data) != size:
            raise PlainError("the file changed size while being read")
    if sha256 is not None:
        actual = hashlib.sha256(data).hexdigest()
        if actual != sha256:
            raise ContentMismatch(f"its content hash is {actual[:12]}..., {sha256[:12]}... was "
                                  "recorded")
    return loads(data)


def _reject_constant(name):
    raise PlainError(f"the header holds the non-JSON number {name}")


def loads(data):
    """Parses the bytes of a plain data file (a bytearray is used without copying)."""
    torch = _torch()
    if not isinstance(data, bytearray):
        data = bytearray(data)
    if len(data) < _PREFIX or bytes(data[:len(MAGIC)]) != MAGIC:
        raise PlainError("not a kernelpro plain data file (wrong magic bytes)")
    (header_len,) = struct.unpack("<Q", bytes(data[len(MAGIC):_PREFIX]))
    if header_len > min(_MAX_HEADER, len(data) - _PREFIX):
        raise PlainError(f"header length {header_len} exceeds the file ({len(data)} bytes)")
    try:
        header = json.loads(bytes(data[_PREFIX:_PREFIX + header_len]).decode("utf-8"),
                            parse_constant=_reject_constant)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise PlainError(f"malformed header: {e}") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT or \
            header.get("version") != VERSION or \
            set(header) != {"format", "version", "value", "tensors"}:
        raise PlainError(f"the header is not a {FORMAT} version {VERSION} header")
    entries = header["tensors"]
    if not isinstance(entries, list):
        raise PlainError("the header's 'tensors' is not a list")
    dtypes = _dtypes()
    data_start = _PREFIX + header_len
    expected_offset = 0
    tensors = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "offset", "nbytes"}:
            raise PlainError(f"tensor {i}: the entry is not {{dtype, shape, offset, nbytes}}")
        dtype = dtypes.get(entry["dtype"]) if isinstance(entry["dtype"], str) else None
        if dtype is None:
            raise PlainError(f"tensor {i}: unknown dtype {entry['dtype']!r}")
        shape, offset, nbytes = entry["shape"], entry["offset"], entry["nbytes"]
        if not isinstance(shape, list) or not all(_is_count(s) for s in shape):
            raise PlainError(f"tensor {i}: the shape {shape!r} is not a list of sizes")
        if not _is_count(offset) or not _is_count(nbytes):
            raise PlainError(f"tensor {i}: offset and nbytes must be non-negative integers")
        numel = math.prod(shape)
        itemsize = torch.empty((), dtype=dtype).element_size()
        if nbytes != numel * itemsize:
            raise PlainError(f"tensor {i}: {nbytes} bytes for {entry['dtype']} of shape "
                             f"{shape} ({numel * itemsize} expected)")
        if offset != expected_offset:
            raise PlainError(f"tensor {i}: offset {offset} where {expected_offset} was expected")
        expected_offset += nbytes
        if data_start + expected_offset > len(data):
            raise PlainError(f"the tensors take at least {expected_offset} bytes but the file "
                             f"holds {len(data) - data_start} after the header")
        if numel == 0:
            tensors.append(torch.empty(shape, dtype=dtype))
        else:
            flat = torch.frombuffer(data, dtype=dtype, count=numel, offset=data_start + offset)
            if flat.data_ptr() % flat.element_size():
                flat = flat.clone()  # an unaligned element (older files): a copy of its own
            tensors.append(flat.reshape(shape))
    if data_start + expected_offset != len(data):
        raise PlainError(f"the tensors take {expected_offset} bytes but the file holds "
                         f"{len(data) - data_start} after the header")
    used = set()
    value = _decode(header["value"], tensors, used)
    if len(used) != len(tensors):
        raise PlainError(f"{len(tensors) - len(used)} tensors are stored but never referenced")
    return value


def _is_count(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _decode(value, tensors, used):
    if value is None or isinstance(value, (bool, str, int, float)):
        return value
    if isinstance(value, list):
        return [_decode(v, tensors, used) for v in value]
    if not isinstance(value, dict) or len(value) != 1:
        raise PlainError(f"malformed value {str(value)[:80]!r}")
    (tag, inner), = value.items()
    if tag == "float" and inner in ("nan", "inf", "-inf"):
        return float(inner)
    if tag == "tuple" and isinstance(inner, list):
        return tuple(_decode(v, tensors, used) for v in inner)
    if tag == "dict" and isinstance(inner, dict):
        return {k: _decode(v, tensors, used) for k, v in inner.items()}
    if tag == "tensor" and _is_count(inner) and inner < len(tensors):
        if inner in used:
            raise PlainError(f"tensor {inner} is referenced twice")
        used.add(inner)
        return tensors[inner]
    if tag == "dtype" and isinstance(inner, str) and inner in _dtypes():
        return _dtypes()[inner]
    raise PlainError(f"malformed value {str(value)[:80]!r}")
