"""Builds a package kernelpro export wrote: the candidate's load_inline extensions (csrc/NAME/),
compiled at install time with torch's BuildExtension, plus the Python package beside this file.

    pip install --no-build-isolation .     # the build needs the torch already installed
"""

import json
import os

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = next(d for d in sorted(os.listdir(HERE))
               if os.path.isfile(os.path.join(HERE, d, "export.json")))
with open(os.path.join(HERE, PACKAGE, "export.json"), encoding="utf-8") as f:
    META = json.load(f)


def extensions():
    if not META["extensions"]:
        return [], {}
    from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension

    modules = []
    for e in META["extensions"]:
        kind = CUDAExtension if e["with_cuda"] else CppExtension
        args = {"cxx": e["cflags"]}
        if e["with_cuda"]:
            args["nvcc"] = e["cuda_cflags"]
        modules.append(kind(f"{PACKAGE}._ext.{e['name']}",
                            [os.path.join("csrc", e["name"], f) for f in e["files"]],
                            include_dirs=e["include_dirs"], extra_compile_args=args,
                            extra_link_args=e["ldflags"]))
    return modules, {"build_ext": BuildExtension}


ext_modules, cmdclass = extensions()
setup(name=META["distribution"], version=META["version"],
      description=f"kernelpro export of {META['problem_file']}: torch.ops.kernelpro."
                  f"{META['op_name']}",
      packages=[PACKAGE, PACKAGE + "._ext"], package_data={PACKAGE: ["*.json"]},
      ext_modules=ext_modules, cmdclass=cmdclass)
