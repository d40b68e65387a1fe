#include "roofline/hardware.h"

#include <gtest/gtest.h>

namespace kernelpro::roofline {
namespace roofline_hardware_test {

TEST(HardwareTest, DetectsDevicesByTheNamesTorchReports) {
  const std::pair<const char*, const char*> cases[] = {
      {"NVIDIA H200", "h200"},
      {"NVIDIA H100 80GB HBM3", "h100-sxm"},
      {"NVIDIA H100 PCIe", "h100-pcie"},
      {"NVIDIA A100-SXM4-80GB", "a100-80gb"},
      {"NVIDIA A100-SXM4-40GB", "a100-40gb"},
      {"NVIDIA L40S", "l40s"},
      {"NVIDIA L4", "l4"},
      {"NVIDIA GeForce RTX 4090", "rtx4090"},
      {"NVIDIA B200", "b200"},
  };
  for (auto [name, key] : cases) {
    auto gpu = FindGpu(name);
    ASSERT_TRUE(gpu.ok()) << name << ": " << gpu.status().message();
    EXPECT_EQ(gpu->key, key) << name;
  }
}

TEST(HardwareTest, GpuOverrideAcceptsKeysInAnyCaseAndPunctuation) {
  EXPECT_EQ(FindGpu("H200")->key, "h200");
  EXPECT_EQ(FindGpu("h100_sxm")->key, "h100-sxm");
  EXPECT_EQ(FindGpu("A100 80GB")->key, "a100-80gb");
  EXPECT_EQ(FindGpu("RTX-4090")->key, "rtx4090");
  EXPECT_EQ(FindGpu("l40s")->key, "l40s");
}

TEST(HardwareTest, UnknownDeviceIsAnErrorListingTheKnownOnes) {
  for (const char* name : {"NVIDIA H200 NVL", "Tesla V100-SXM2-16GB", "", "cpu"}) {
    auto gpu = FindGpu(name);
    ASSERT_FALSE(gpu.ok()) << name;
    EXPECT_EQ(gpu.status().code(), Status::Code::kNotFound);
    const std::string& message = gpu.status().message();
    EXPECT_NE(message.find("unknown GPU"), std::string::npos);
    EXPECT_NE(message.find("--gpu"), std::string::npos);
    for (const GpuSpec& known : KnownGpus())
      EXPECT_NE(message.find(known.key), std::string::npos) << known.key;
  }
}

TEST(HardwareTest, H200IsAnH100SxmWithHbm3e) {
  GpuSpec h200 = *FindGpu("h200");
  GpuSpec h100 = *FindGpu("h100-sxm");
  EXPECT_EQ(h200.sm_count, 132);
  EXPECT_EQ(h200.sm_count, h100.sm_count);
  EXPECT_DOUBLE_EQ(h200.fp32, 67e12);
  EXPECT_DOUBLE_EQ(h200.fp16_tensor, 989.5e12);
  EXPECT_DOUBLE_EQ(h200.fp8_tensor, 1979e12);
  EXPECT_DOUBLE_EQ(h200.fp32, h100.fp32);
  EXPECT_DOUBLE_EQ(h200.fp16_tensor, h100.fp16_tensor);
  EXPECT_DOUBLE_EQ(h200.dram_bytes_per_s, 4.8e12);
  EXPECT_DOUBLE_EQ(h100.dram_bytes_per_s, 3.35e12);
  EXPECT_DOUBLE_EQ(h200.memory_bytes, 141e9);
}

TEST(HardwareTest, EveryEntryIsCompleteAndDense) {
  ASSERT_GE(KnownGpus().size(), 9u);
  for (const GpuSpec& g : KnownGpus()) {
    SCOPED_TRACE(g.key);
    EXPECT_GT(g.sm_count, 0);
    EXPECT_FALSE(g.source.empty());
    EXPECT_FALSE(g.aliases.empty());
    EXPECT_GT(g.fp64, 0);
    EXPECT_GT(g.fp32, 0);
    EXPECT_GE(g.fp16, g.fp32);
    EXPECT_GT(g.bf16, 0);
    EXPECT_GE(g.tf32_tensor, g.fp32);
    EXPECT_GT(g.fp16_tensor, g.tf32_tensor);
    EXPECT_DOUBLE_EQ(g.fp16_tensor, g.bf16_tensor);
    EXPECT_GE(g.int8_tensor, g.fp16_tensor);
    if (g.fp8_tensor > 0) EXPECT_GE(g.fp8_tensor, g.fp16_tensor);
    EXPECT_GT(g.dram_bytes_per_s, 1e11);
    EXPECT_GT(g.l2_bytes, 1e6);
    EXPECT_GT(g.memory_bytes, 1e9);
    EXPECT_EQ(FindGpu(g.key)->key, g.key);
  }
  EXPECT_DOUBLE_EQ(FindGpu("a100-80gb")->fp8_tensor, 0);  // Ampere has no FP8
}

TEST(HardwareTest, PrecisionNamesRoundTripAndPeaksIndexTheTable) {
  GpuSpec a100 = *FindGpu("NVIDIA A100-SXM4-40GB");
  EXPECT_DOUBLE_EQ(PeakFlops(a100, Precision::kFp32), 19.5e12);
  EXPECT_DOUBLE_EQ(PeakFlops(a100, Precision::kTf32Tensor), 156e12);
  EXPECT_DOUBLE_EQ(PeakFlops(a100, Precision::kBf16Tensor), 312e12);
  EXPECT_DOUBLE_EQ(PeakFlops(a100, Precision::kFp64Tensor), 19.5e12);
  EXPECT_DOUBLE_EQ(PeakFlops(a100, Precision::kInt8Tensor), 624e12);
  for (Precision p : {Precision::kFp64, Precision::kFp32, Precision::kFp16, Precision::kBf16,
                      Precision::kFp64Tensor, Precision::kTf32Tensor, Precision::kFp16Tensor,
                      Precision::kBf16Tensor, Precision::kFp8Tensor, Precision::kInt8Tensor}) {
    EXPECT_EQ(*ParsePrecision(PrecisionName(p)), p);
  }
  EXPECT_EQ(DescribePrecision(Precision::kFp32), "fp32 on CUDA cores");
  EXPECT_EQ(DescribePrecision(Precision::kFp16Tensor), "fp16 on tensor cores");
  EXPECT_FALSE(ParsePrecision("fp4").ok());
}

}  // namespace roofline_hardware_test
}  // namespace kernelpro::roofline
