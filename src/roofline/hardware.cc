#include "roofline/hardware.h"

#include <array>
#include <cctype>
#include <optional>
#include <utility>

#include "core/enum_names.h"

namespace kernelpro::roofline {
namespace {

// Stored with each reference analysis (its precision field): never rename.
constexpr std::array<std::pair<Precision, const char*>, 10> kPrecisionNames = {
    {{Precision::kFp64, "fp64"},
     {Precision::kFp32, "fp32"},
     {Precision::kFp16, "fp16"},
     {Precision::kBf16, "bf16"},
     {Precision::kFp64Tensor, "fp64_tensor"},
     {Precision::kTf32Tensor, "tf32_tensor"},
     {Precision::kFp16Tensor, "fp16_tensor"},
     {Precision::kBf16Tensor, "bf16_tensor"},
     {Precision::kFp8Tensor, "fp8_tensor"},
     {Precision::kInt8Tensor, "int8_tensor"}}};

constexpr double T = 1e12;   // TFLOP/s
constexpr double GBs = 1e9;  // GB/s (decimal, as datasheets give bandwidth)
constexpr double MiB = 1024.0 * 1024.0;
constexpr double GB = 1e9;

// Lower case, letters and digits only, without a leading "nvidia": "NVIDIA A100-SXM4-80GB"
// and "a100 sxm4 80gb" both become "a100sxm480gb".
std::string Normalise(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (out.starts_with("nvidia")) out.erase(0, 6);
  return out;
}

// ---- The table's entries: one function per GPU (or per chip, when memory sizes share it), each
// naming its sources. Dense peaks: where a datasheet gives "X | 2X*" (the starred figure with
// sparsity), X is used; where it gives only the sparse figure, half of it. Tensor-core
// fp16/bf16/fp8 figures are the FP32-accumulate rates (what PyTorch's GEMMs use).

// NVIDIA A100 Tensor Core GPU datasheet (SXM columns) and the NVIDIA A100 Tensor Core GPU
// Architecture whitepaper (table 1: FP16 78 and BF16 39 TFLOPS on CUDA cores). No FP8.
// Two memory sizes share the chip: 40 GB of HBM2 and 80 GB of HBM2e.
std::vector<GpuSpec> AmpereA100s() {
  GpuSpec a100;
  a100.sm_count = 108;
  a100.arch = "sm_80";
  a100.fp64 = 9.7 * T;
  a100.fp32 = 19.5 * T;
  a100.fp16 = 78 * T;
  a100.bf16 = 39 * T;
  a100.fp64_tensor = 19.5 * T;
  a100.tf32_tensor = 156 * T;
  a100.fp16_tensor = 312 * T;
  a100.bf16_tensor = 312 * T;
  a100.fp8_tensor = 0;
  a100.int8_tensor = 624 * T;
  a100.l2_bytes = 40 * MiB;
  a100.source =
      "NVIDIA A100 Tensor Core GPU datasheet (SXM4) + A100 architecture whitepaper table 1";

  GpuSpec a100_40 = a100;
  a100_40.key = "a100-40gb";
  a100_40.name = "NVIDIA A100 SXM4 40GB";
  a100_40.dram_bytes_per_s = 1555 * GBs;  // HBM2
  a100_40.memory_bytes = 40 * GB;
  a100_40.aliases = {"NVIDIA A100-SXM4-40GB", "a100-sxm4-40gb", "a100-40gb"};

  GpuSpec a100_80 = a100;
  a100_80.key = "a100-80gb";
  a100_80.name = "NVIDIA A100 SXM4 80GB";
  a100_80.dram_bytes_per_s = 2039 * GBs;  // HBM2e
  a100_80.memory_bytes = 80 * GB;
  a100_80.aliases = {"NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb", "a100-80gb"};
  return {a100_40, a100_80};
}

// NVIDIA H100 Tensor Core GPU datasheet (H100 SXM column; tensor figures there are with
// sparsity: TF32 989, FP16/BF16 1979, FP8/INT8 3958 -> halved). CUDA-core FP16/BF16: twice the
// FP32 rate (H100 whitepaper, table 3) — derived, the datasheet does not list it.
GpuSpec HopperH100Sxm() {
  GpuSpec h100;
  h100.key = "h100-sxm";
  h100.name = "NVIDIA H100 SXM5 80GB";
  h100.source =
      "NVIDIA H100 Tensor Core GPU datasheet (SXM) + H100 architecture whitepaper table 3";
  h100.sm_count = 132;
  h100.arch = "sm_90";
  h100.fp64 = 34 * T;
  h100.fp32 = 67 * T;
  h100.fp16 = 134 * T;
  h100.bf16 = 134 * T;
  h100.fp64_tensor = 67 * T;
  h100.tf32_tensor = 494.5 * T;
  h100.fp16_tensor = 989.5 * T;
  h100.bf16_tensor = 989.5 * T;
  h100.fp8_tensor = 1979 * T;
  h100.int8_tensor = 1979 * T;
  h100.dram_bytes_per_s = 3350 * GBs;  // HBM3
  h100.l2_bytes = 50 * MiB;
  h100.memory_bytes = 80 * GB;
  h100.aliases = {"NVIDIA H100 80GB HBM3", "h100-sxm", "h100-sxm5", "h100"};
  return h100;
}

// Same datasheet, H100 PCIe column (114 SMs; TF32 756, FP16/BF16 1513, FP8/INT8 3026 sparse).
GpuSpec HopperH100Pcie() {
  GpuSpec h100p;
  h100p.key = "h100-pcie";
  h100p.name = "NVIDIA H100 PCIe 80GB";
  h100p.source =
      "NVIDIA H100 Tensor Core GPU datasheet (PCIe) + H100 architecture whitepaper table 3";
  h100p.sm_count = 114;
  h100p.arch = "sm_90";
  h100p.fp64 = 26 * T;
  h100p.fp32 = 51 * T;
  h100p.fp16 = 102 * T;
  h100p.bf16 = 102 * T;
  h100p.fp64_tensor = 51 * T;
  h100p.tf32_tensor = 378 * T;
  h100p.fp16_tensor = 756.5 * T;
  h100p.bf16_tensor = 756.5 * T;
  h100p.fp8_tensor = 1513 * T;
  h100p.int8_tensor = 1513 * T;
  h100p.dram_bytes_per_s = 2000 * GBs;  // HBM2e
  h100p.l2_bytes = 50 * MiB;
  h100p.memory_bytes = 80 * GB;
  h100p.aliases = {"NVIDIA H100 PCIe", "h100-pcie"};
  return h100p;
}

// NVIDIA H200 Tensor Core GPU datasheet (H200 SXM column): the H100 SXM's SMs and clocks with
// 141 GB of HBM3e at 4.8 TB/s. Tensor figures there are with sparsity, halved as for H100.
GpuSpec HopperH200() {
  GpuSpec h200 = HopperH100Sxm();
  h200.key = "h200";
  h200.name = "NVIDIA H200 SXM 141GB";
  h200.source = "NVIDIA H200 Tensor Core GPU datasheet (SXM); CUDA-core FP16/BF16 as H100 SXM";
  h200.dram_bytes_per_s = 4800 * GBs;  // HBM3e
  h200.memory_bytes = 141 * GB;
  h200.aliases = {"NVIDIA H200", "h200", "h200-sxm", "NVIDIA H200 141GB HBM3e"};
  return h200;
}

// NVIDIA L40S datasheet (dense | sparse pairs: TF32 183, FP16/BF16 362.05, FP8/INT8 733).
// FP64 is 1/64 of FP32 and CUDA-core FP16 equals FP32 on Ada (Ada Lovelace whitepaper) — derived.
GpuSpec AdaL40s() {
  GpuSpec l40s;
  l40s.key = "l40s";
  l40s.name = "NVIDIA L40S 48GB";
  l40s.source =
      "NVIDIA L40S datasheet + Ada Lovelace architecture whitepaper (FP64 and CUDA-core FP16 "
      "ratios)";
  l40s.sm_count = 142;
  l40s.arch = "sm_89";
  l40s.fp64 = 91.6 / 64 * T;
  l40s.fp32 = 91.6 * T;
  l40s.fp16 = 91.6 * T;
  l40s.bf16 = 91.6 * T;
  l40s.fp64_tensor = 0;
  l40s.tf32_tensor = 183 * T;
  l40s.fp16_tensor = 362.05 * T;
  l40s.bf16_tensor = 362.05 * T;
  l40s.fp8_tensor = 733 * T;
  l40s.int8_tensor = 733 * T;
  l40s.dram_bytes_per_s = 864 * GBs;  // GDDR6
  l40s.l2_bytes = 96 * MiB;
  l40s.memory_bytes = 48 * GB;
  l40s.aliases = {"NVIDIA L40S", "l40s"};
  return l40s;
}

// NVIDIA L4 Tensor Core GPU datasheet (tensor figures with sparsity: TF32 120, FP16/BF16 242,
// FP8/INT8 485 -> halved). FP64 and CUDA-core FP16 ratios as for L40S (Ada) — derived.
GpuSpec AdaL4() {
  GpuSpec l4;
  l4.key = "l4";
  l4.name = "NVIDIA L4 24GB";
  l4.source = "NVIDIA L4 Tensor Core GPU datasheet + Ada Lovelace architecture whitepaper (ratios)";
  l4.sm_count = 58;
  l4.arch = "sm_89";
  l4.fp64 = 30.3 / 64 * T;
  l4.fp32 = 30.3 * T;
  l4.fp16 = 30.3 * T;
  l4.bf16 = 30.3 * T;
  l4.fp64_tensor = 0;
  l4.tf32_tensor = 60 * T;
  l4.fp16_tensor = 121 * T;
  l4.bf16_tensor = 121 * T;
  l4.fp8_tensor = 242.5 * T;
  l4.int8_tensor = 242.5 * T;
  l4.dram_bytes_per_s = 300 * GBs;  // GDDR6
  l4.l2_bytes = 48 * MiB;
  l4.memory_bytes = 24 * GB;
  l4.aliases = {"NVIDIA L4", "l4"};
  return l4;
}

// NVIDIA Ada Lovelace GPU architecture whitepaper, appendix table (GeForce RTX 4090): FP32 and
// CUDA-core FP16/BF16 82.6, FP64 1.3, TF32 tensor 82.6, FP16/BF16 tensor 165.2 with FP32
// accumulate (330.3 with FP16 accumulate), FP8 330.3 with FP32 accumulate, INT8 660.6.
GpuSpec AdaRtx4090() {
  GpuSpec rtx4090;
  rtx4090.key = "rtx4090";
  rtx4090.name = "NVIDIA GeForce RTX 4090 24GB";
  rtx4090.source = "NVIDIA Ada Lovelace GPU architecture whitepaper, appendix A (RTX 4090)";
  rtx4090.sm_count = 128;
  rtx4090.arch = "sm_89";
  rtx4090.fp64 = 1.3 * T;
  rtx4090.fp32 = 82.6 * T;
  rtx4090.fp16 = 82.6 * T;
  rtx4090.bf16 = 82.6 * T;
  rtx4090.fp64_tensor = 0;
  rtx4090.tf32_tensor = 82.6 * T;
  rtx4090.fp16_tensor = 165.2 * T;
  rtx4090.bf16_tensor = 165.2 * T;
  rtx4090.fp8_tensor = 330.3 * T;
  rtx4090.int8_tensor = 660.6 * T;
  rtx4090.dram_bytes_per_s = 1008 * GBs;  // GDDR6X
  rtx4090.l2_bytes = 72 * MiB;
  rtx4090.memory_bytes = 24 * GB;
  rtx4090.aliases = {"NVIDIA GeForce RTX 4090", "rtx4090", "rtx-4090", "4090"};
  return rtx4090;
}

// NVIDIA HGX B200 datasheet, per GPU (the 8-GPU board's figures / 8; tensor figures with
// sparsity, halved): FP64 37, FP32 75, TF32 1125, FP16/BF16 2250, FP8 4500, INT8 4500;
// 180 GB HBM3e at 8 TB/s. 148 SMs and the 126 MiB L2 are what the CUDA runtime reports on a
// B200 (not in the datasheet); CUDA-core FP16/BF16 at twice FP32 is derived, as for Hopper.
GpuSpec BlackwellB200() {
  GpuSpec b200;
  b200.key = "b200";
  b200.name = "NVIDIA B200 180GB";
  b200.source = "NVIDIA HGX B200 datasheet (per GPU); SM count and L2 from the CUDA runtime";
  b200.sm_count = 148;
  b200.arch = "sm_100";
  b200.fp64 = 37 * T;
  b200.fp32 = 75 * T;
  b200.fp16 = 150 * T;
  b200.bf16 = 150 * T;
  b200.fp64_tensor = 37 * T;
  b200.tf32_tensor = 1125 * T;
  b200.fp16_tensor = 2250 * T;
  b200.bf16_tensor = 2250 * T;
  b200.fp8_tensor = 4500 * T;
  b200.int8_tensor = 4500 * T;
  b200.dram_bytes_per_s = 8000 * GBs;  // HBM3e
  b200.l2_bytes = 126 * MiB;
  b200.memory_bytes = 180 * GB;
  b200.aliases = {"NVIDIA B200", "b200"};
  return b200;
}

// The table in the order KnownGpus lists it (KnownGpuList and --help print it in this order).
std::vector<GpuSpec> BuildTable() {
  std::vector<GpuSpec> gpus = AmpereA100s();
  gpus.push_back(HopperH100Sxm());
  gpus.push_back(HopperH100Pcie());
  gpus.push_back(HopperH200());
  gpus.push_back(AdaL40s());
  gpus.push_back(AdaL4());
  gpus.push_back(AdaRtx4090());
  gpus.push_back(BlackwellB200());
  return gpus;
}

}  // namespace

std::string_view PrecisionName(Precision precision) { return NameOf(kPrecisionNames, precision); }

Result<Precision> ParsePrecision(std::string_view name) {
  if (std::optional<Precision> precision = ValueOf(kPrecisionNames, name)) return *precision;
  return Status::InvalidArgument("unknown precision '" + std::string(name) + "'");
}

bool IsTensorCore(Precision precision) { return precision >= Precision::kFp64Tensor; }

std::string DescribePrecision(Precision precision) {
  std::string name(PrecisionName(precision));
  if (!IsTensorCore(precision)) return name + " on CUDA cores";
  return name.substr(0, name.find('_')) + " on tensor cores";
}

const std::vector<GpuSpec>& KnownGpus() {
  static const std::vector<GpuSpec> table = BuildTable();
  return table;
}

double PeakFlops(const GpuSpec& gpu, Precision precision) {
  switch (precision) {
    case Precision::kFp64:
      return gpu.fp64;
    case Precision::kFp32:
      return gpu.fp32;
    case Precision::kFp16:
      return gpu.fp16;
    case Precision::kBf16:
      return gpu.bf16;
    case Precision::kFp64Tensor:
      return gpu.fp64_tensor;
    case Precision::kTf32Tensor:
      return gpu.tf32_tensor;
    case Precision::kFp16Tensor:
      return gpu.fp16_tensor;
    case Precision::kBf16Tensor:
      return gpu.bf16_tensor;
    case Precision::kFp8Tensor:
      return gpu.fp8_tensor;
    case Precision::kInt8Tensor:
      return gpu.int8_tensor;
  }
  return 0;
}

std::string KnownGpuList() {
  std::string list;
  for (const GpuSpec& gpu : KnownGpus()) {
    if (!list.empty()) list += ", ";
    list += gpu.key + " (" + gpu.aliases.front() + ")";
  }
  return list;
}

Result<GpuSpec> FindGpu(std::string_view name) {
  std::string wanted = Normalise(name);
  if (!wanted.empty()) {
    for (const GpuSpec& gpu : KnownGpus()) {
      if (Normalise(gpu.key) == wanted) return gpu;
      for (const std::string& alias : gpu.aliases) {
        if (Normalise(alias) == wanted) return gpu;
      }
    }
  }
  return Status::NotFound("unknown GPU '" + std::string(name) +
                          "'; kernelpro's hardware table knows " + KnownGpuList() +
                          " (pick one with --gpu NAME)");
}

}  // namespace kernelpro::roofline
