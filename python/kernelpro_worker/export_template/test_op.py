"""pytest tests/ (or python -m PACKAGE.selftest): the exported operator against the reference."""

import importlib
import os

import pytest

PACKAGE = next(d for d in sorted(os.listdir(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))) if os.path.isfile(os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d, "export.json")))


def test_operator_matches_the_reference():
    selftest = importlib.import_module(PACKAGE + ".selftest")
    lines = []
    assert selftest.run(out=lines.append) == 0, "\n".join(lines)
    assert lines, "no check ran"


if __name__ == "__main__":
    raise SystemExit(pytest.main([__file__, "-q"]))
