"""A kernel kernelpro exported as a package: see README.md beside setup.py, and export.json.

    from PACKAGE import Model, OP       # Model: the problem's Model, its forward calls OP
    model = Model(*init_args).to("cuda")
    y = model(*inputs)                  # torch.ops.kernelpro.<op> under the hood
"""

from ._runtime import GUARDS, META, OP, STATS, Model, allowed, from_benchmark  # noqa: F401
from ._runtime import benchmark_init_inputs, benchmark_inputs, reference_module  # noqa: F401
