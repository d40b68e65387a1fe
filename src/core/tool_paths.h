// Finding external programs kernelpro runs: ncu, cuobjdump, nvdisasm, nm, nsys.
#pragma once

#include <string>

namespace kernelpro {

// Full path of `name`, or "" when it is nowhere. Looks in order at $KERNELPRO_<NAME> (upper case,
// e.g. KERNELPRO_CUOBJDUMP), PATH, $CUDA_HOME/bin, /usr/local/cuda/bin, and the PyPI copies that
// scripts/setup installs under <source tree>/.tools/pypi/nvidia/*/bin.
std::string FindTool(const std::string& name);

}  // namespace kernelpro
