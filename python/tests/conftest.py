import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

FAKE_NVML_SOURCE = os.path.join(ROOT, "tests", "fixtures", "fake_nvml", "fake_nvml.c")


@pytest.fixture(scope="session")
def fake_nvml(tmp_path_factory):
    """The fake NVML library (tests/fixtures/fake_nvml): the one CMake built
    (KERNELPRO_FAKE_NVML), else compiled here."""
    built = os.environ.get("KERNELPRO_FAKE_NVML", "")
    if built and os.path.exists(built):
        return built
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the fake NVML library")
    out = str(tmp_path_factory.mktemp("fake_nvml") / "libfake_nvml.so")
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", out, FAKE_NVML_SOURCE], check=True)
    return out
