// The GPU hardware table the roofline reads: SM count, peak FLOP/s per precision on CUDA cores
// and on tensor cores, DRAM bandwidth, L2 size, memory size.
//
// Every number is a dense peak (no structured sparsity) at the boost clock, from NVIDIA's
// datasheets and architecture whitepapers; hardware.cc names the document beside each entry and
// marks the few derived values. A precision the GPU lacks has peak 0.
//
// Detection: FindGpu() takes the device name as torch reports it (torch.cuda.get_device_name:
// "NVIDIA H200", "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB") or a short key a user types
// with --gpu ("h200", "h100-sxm", "a100-80gb", "rtx4090"); matching ignores case, spaces,
// punctuation and a leading "NVIDIA". Unknown names are an error that lists the known devices.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace kernelpro::roofline {

// Where the arithmetic runs. CUDA-core precisions first, then tensor-core ones.
enum class Precision {
  kFp64,
  kFp32,
  kFp16,
  kBf16,  // CUDA cores
  kFp64Tensor,
  kTf32Tensor,
  kFp16Tensor,
  kBf16Tensor,
  kFp8Tensor,
  kInt8Tensor,  // tensor cores
};
// "fp64", "fp32", "fp16", "bf16", "fp64_tensor", "tf32_tensor", "fp16_tensor", "bf16_tensor",
// "fp8_tensor", "int8_tensor".
std::string_view PrecisionName(Precision precision);
Result<Precision> ParsePrecision(std::string_view name);
// "fp32 on CUDA cores", "fp16 on tensor cores".
std::string DescribePrecision(Precision precision);
bool IsTensorCore(Precision precision);

struct GpuSpec {
  std::string key;     // short name for --gpu: "h200", "h100-sxm"
  std::string name;    // human name: "NVIDIA H200 SXM 141GB"
  std::string source;  // the datasheet / whitepaper the numbers come from
  int sm_count = 0;
  std::string arch;  // "sm_90"
  // Peak FLOP/s (int8: OP/s), dense. 0: not supported.
  double fp64 = 0, fp32 = 0, fp16 = 0, bf16 = 0;
  double fp64_tensor = 0, tf32_tensor = 0, fp16_tensor = 0, bf16_tensor = 0, fp8_tensor = 0,
         int8_tensor = 0;
  double dram_bytes_per_s = 0;  // peak DRAM (HBM/GDDR) bandwidth
  double l2_bytes = 0;
  double memory_bytes = 0;
  std::vector<std::string> aliases;  // device names (as torch reports them) and keys that select it
};

const std::vector<GpuSpec>& KnownGpus();

// Peak FLOP/s of `precision` on `gpu`; 0 when the GPU has no such unit.
double PeakFlops(const GpuSpec& gpu, Precision precision);

// Looks up a torch device name or a --gpu key. NotFound lists the known devices.
Result<GpuSpec> FindGpu(std::string_view name);

// "a100-40gb (NVIDIA A100-SXM4-40GB), ..." for error messages and --help.
std::string KnownGpuList();

}  // namespace kernelpro::roofline
