// `kernelpro new-problem NAME [--device cpu|cuda] [--dir DIR]`: writes a problem and a candidate
// that evaluates correct as written, for a user to edit into their own:
//
//   DIR/NAME/problem.py                    Model, get_inputs(), get_init_inputs() (KernelBench)
//   DIR/NAME/candidates/<device>_NAME.py   ModelNew: the same computation in a C++ (cpu) or CUDA
//                                          (cuda) extension built with load_inline
//
// Both follow problems/README.md: inputs are CPU tensors the harness moves to the device, fp32,
// ModelNew keeps Model's constructor and calls only its extension. Nothing is overwritten.
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/option_groups.h"

namespace kernelpro::cli {
namespace {

namespace fs = std::filesystem;

constexpr char kProblem[] =
    R"PY("""@NAME@: a KernelBench-format problem (written by `kernelpro new-problem`).

Model is the reference: what every candidate must compute, to within atol 1e-2 and rtol 1e-3 on
several fresh inputs. Edit the three places marked EDIT, then the candidate in candidates/ so that
its ModelNew computes the same thing, and check it:

    kernelpro eval --device @DEVICE@ --problem @NAME@/problem.py \\
        --candidate @NAME@/candidates/@DEVICE@_@NAME@.py
"""
import torch
import torch.nn as nn

# Input sizes: large enough for the kernel's time to be measured, small enough for the device.
ROWS, COLS = 1024, 1024


class Model(nn.Module):
    def __init__(self, scale):
        # EDIT: the constructor takes what get_init_inputs() returns. Parameters created here
        # (nn.Linear, nn.Parameter) get the same values in ModelNew when it creates the same ones
        # in the same order: the harness seeds both alike.
        super().__init__()
        self.scale = scale

    def forward(self, x):
        # EDIT: the computation to make faster.
        return torch.relu(x) * self.scale


def get_inputs():
    # EDIT: forward's arguments. Return CPU tensors: the harness seeds the generator, calls this
    # once per trial and moves every tensor to the device itself (never call .cuda() here).
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    # Model's (and ModelNew's) constructor arguments.
    return [2.0]
)PY";

constexpr char kCpuCandidate[] =
    R"PY("""C++ candidate for @NAME@ on the CPU (written by `kernelpro new-problem`).

ModelNew computes what problem.py's Model computes, y = relu(x) * scale, in a C++ extension built
with load_inline. Keep its constructor and parameters identical to Model's, and let forward call
only the extension (and .contiguous()), never the reference's torch operators.

    kernelpro eval --device cpu --problem @NAME@/problem.py \\
        --candidate @NAME@/candidates/cpu_@NAME@.py
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>

// EDIT: the kernel, over a contiguous fp32 tensor.
torch::Tensor forward(torch::Tensor x, double scale) {
  TORCH_CHECK(x.device().is_cpu(), "x must be a CPU tensor");
  TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
  torch::Tensor y = torch::empty(x.sizes(), x.options());
  const float* xp = x.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  const float s = static_cast<float>(scale);
  at::parallel_for(0, x.numel(), 1 << 14, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) yp[i] = (xp[i] > 0.0f ? xp[i] : 0.0f) * s;
  });
  return y;
}
"""

_ext = load_inline(name="kp_@NAME@_cpu", cpp_sources=_CPP, functions=["forward"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return _ext.forward(x.contiguous(), self.scale)
)PY";

constexpr char kCudaCandidate[] =
    R"PY("""CUDA candidate for @NAME@ (written by `kernelpro new-problem`).

ModelNew computes what problem.py's Model computes, y = relu(x) * scale, in one CUDA kernel built
with load_inline: a grid-stride loop, one read and one write per element. Keep its constructor and
parameters identical to Model's, and let forward call only the extension (and .contiguous()),
never the reference's torch operators.

    kernelpro eval --device cuda --problem @NAME@/problem.py \\
        --candidate @NAME@/candidates/cuda_@NAME@.py
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_DECL = "torch::Tensor forward(torch::Tensor x, double scale);"

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <algorithm>

// EDIT: the kernel, over a contiguous fp32 tensor of n elements.
__global__ void @NAME@_kernel(const float* __restrict__ x, float* __restrict__ y, float scale,
                              int64_t n) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float v = x[i];
    y[i] = (v > 0.0f ? v : 0.0f) * scale;
  }
}

torch::Tensor forward(torch::Tensor x, double scale) {
  TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
  TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
  const c10::cuda::CUDAGuard guard(x.device());
  torch::Tensor y = torch::empty(x.sizes(), x.options());
  const int64_t n = x.numel();
  if (n == 0) return y;
  const int threads = 256;
  const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, 65535);
  @NAME@_kernel<<<(unsigned)blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), static_cast<float>(scale), n);
  C10_CUDA_CHECK(cudaGetLastError());
  return y;
}
"""

_ext = load_inline(name="kp_@NAME@_cuda", cpp_sources=_DECL, cuda_sources=_CUDA,
                   functions=["forward"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return _ext.forward(x.contiguous(), self.scale)
)PY";

std::string Fill(std::string text, const std::string& name, const std::string& device) {
  for (const auto& [key, value] :
       {std::pair<std::string, std::string>{"@NAME@", name}, {"@DEVICE@", device}}) {
    for (std::size_t at = text.find(key); at != std::string::npos;
         at = text.find(key, at + value.size())) {
      text.replace(at, key.size(), value);
    }
  }
  return text;
}

// A Python identifier (it names the extension module and the kernel), ASCII only.
constexpr std::size_t kMaxNameLength = 64;

// Why `name` cannot name the problem's extension module; "" when it can.
std::string NameProblem(const std::string& name) {
  if (name.size() > kMaxNameLength) {
    return "is " + std::to_string(name.size()) + " characters long: at most " +
           std::to_string(kMaxNameLength);
  }
  bool usable = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
  for (unsigned char c : name) usable = usable && (std::isalnum(c) || c == '_');
  return usable ? "" : "is not a usable name: letters, digits and _, not starting with a digit";
}

struct NewProblemArgs {
  std::string name;
  std::string device = "cuda";
  std::string dir = ".";
};

int Write(const NewProblemArgs& args) {
  if (const std::string why = NameProblem(args.name); !why.empty()) {
    std::cerr << "kernelpro new-problem: '" << args.name << "' " << why
              << " (it names the extension module)\n";
    return 2;
  }
  // "relu_scale/problem.py" rather than "./relu_scale/problem.py" in what it prints.
  const fs::path root = args.dir == "." ? fs::path(args.name) : fs::path(args.dir) / args.name;
  const fs::path problem = root / "problem.py";
  const fs::path candidate = root / "candidates" / (args.device + "_" + args.name + ".py");
  std::error_code ec;
  for (const fs::path& path : {problem, candidate}) {
    if (fs::exists(fs::symlink_status(path, ec))) {
      std::cerr << "kernelpro new-problem: " << path.string()
                << " already exists; nothing was written (choose another NAME or --dir)\n";
      return 2;
    }
  }
  fs::create_directories(candidate.parent_path(), ec);
  if (ec) {
    std::cerr << "kernelpro new-problem: cannot create " << candidate.parent_path().string() << ": "
              << ec.message() << "\n";
    return 2;
  }
  const std::pair<fs::path, std::string> files[] = {
      {problem, Fill(kProblem, args.name, args.device)},
      {candidate,
       Fill(args.device == "cpu" ? kCpuCandidate : kCudaCandidate, args.name, args.device)}};
  for (const auto& [path, text] : files) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    out.close();
    if (!out) {
      std::cerr << "kernelpro new-problem: cannot write " << path.string() << "\n";
      return 2;
    }
  }
  std::cout << "wrote " << problem.string() << "\n"
            << "wrote " << candidate.string() << "\n"
            << "check it: kernelpro eval --device " << args.device << " --problem "
            << problem.string() << " --candidate " << candidate.string() << "\n";
  return 0;
}

}  // namespace

CommandRunner RegisterNewProblemCommand(CLI::App& app) {
  auto args = std::make_shared<NewProblemArgs>();
  CLI::App* command = app.add_subcommand(
      "new-problem", "Write a problem template and a candidate that evaluates correct as written");
  command->footer(
      "Writes DIR/NAME/problem.py (Model, get_inputs(), get_init_inputs()) and "
      "DIR/NAME/candidates/DEVICE_NAME.py (ModelNew with a C++ or CUDA kernel computing the same). "
      "Existing files are never overwritten.");
  command->add_option("name", args->name, "The problem's name (a Python identifier)")->required();
  AddDeviceOption(*command, args->device);
  command->add_option("--dir", args->dir, "Where the NAME folder goes")->capture_default_str();
  return [args] { return Write(*args); };
}

}  // namespace kernelpro::cli
