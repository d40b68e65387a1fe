#include "cutlass/epilogue_constraints.h"

#include <map>
#include <regex>

namespace kernelpro::cutlass {
namespace {

// Bits of the element types an epilogue names, by their spellings in CUTLASS and CUDA.
int ElementBits(const std::string& type) {
  static const std::map<std::string, int> kBits = {
      {"half_t", 16},        {"bfloat16_t", 16},  {"__half", 16},       {"half", 16},
      {"__nv_bfloat16", 16}, {"float", 32},       {"tfloat32_t", 32},   {"int32_t", 32},
      {"uint32_t", 32},      {"double", 64},      {"int8_t", 8},        {"uint8_t", 8},
      {"float_e4m3_t", 8},   {"float_e5m2_t", 8}, {"__nv_fp8_e4m3", 8}, {"__nv_fp8_e5m2", 8},
  };
  const std::size_t colon = type.rfind("::");
  auto it = kBits.find(colon == std::string::npos ? type : type.substr(colon + 2));
  return it == kBits.end() ? 0 : it->second;
}

void CheckTmaAlignment(const std::vector<std::string>& lines,
                       std::vector<ConstraintViolation>* out) {
  // Only an SM90 collective epilogue (a TMA one) has the 16-byte rule.
  static const std::regex kSm90Epilogue(R"re(CollectiveBuilder\s*<\s*(cutlass::)?arch::Sm90|)re"
                                        R"re(TmaWarpSpecialized|Sm90TmaWarpSpecialized)re");
  bool sm90 = false;
  for (const std::string& line : lines) sm90 = sm90 || std::regex_search(line, kSm90Epilogue);
  if (!sm90) return;
  static const std::regex kElement(R"re(using\s+Element([CD])\s*=\s*([A-Za-z_][\w:]*)\s*;)re");
  static const std::regex kAlignment(
      R"re((?:constexpr\s+)?(?:static\s+)?(?:int|size_t|unsigned|auto)\s+)re"
      R"re(Alignment([CD])\s*=\s*(\d+)\s*;)re");
  std::map<char, int> bits;
  std::map<char, std::pair<int, int>> alignment;  // C or D -> (value, line)
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (std::regex_search(lines[i], m, kElement)) bits[m[1].str()[0]] = ElementBits(m[2].str());
    if (std::regex_search(lines[i], m, kAlignment)) {
      alignment[m[1].str()[0]] = {std::stoi(m[2].str()), static_cast<int>(i) + 1};
    }
  }
  for (const auto& [which, value_line] : alignment) {
    const auto [value, line] = value_line;
    const int element_bits = bits.count(which) ? bits[which] : 0;
    if (element_bits == 0 || (value * element_bits) % 128 == 0) continue;
    const std::string name = std::string("Alignment") + which;
    out->push_back({"epilogue.tma_alignment", line,
                    "make " + name + " " + std::to_string(128 / element_bits) +
                        " (or a multiple): " + std::to_string(value) + " elements of " +
                        std::to_string(element_bits) + " bits are " +
                        std::to_string(value * element_bits) +
                        " bits, and an SM90 TMA epilogue moves whole 16-byte (128-bit) vectors "
                        "(\"C/D Should meet TMA alignment requirement\")"});
  }
}

void CheckVectorAccess(const std::vector<std::string>& lines,
                       std::vector<ConstraintViolation>* out) {
  static const std::map<std::string, int> kLanes = {
      {"float4", 4},  {"int4", 4},           {"uint4", 4},     {"double2", 2},
      {"float2", 2},  {"int2", 2},           {"uint2", 2},     {"half2", 2},
      {"__half2", 2}, {"__nv_bfloat162", 2}, {"longlong2", 2}, {"char4", 4},
  };
  // reinterpret_cast<[const ]V*>(pointer + N) or (&pointer[N]) with a literal N.
  static const std::regex kCast(
      R"re(reinterpret_cast\s*<\s*(?:const\s+)?(\w+)\s*\*\s*>\s*\(\s*)re"
      R"re((?:[\w.\->]+\s*\+\s*(\d+)|&\s*[\w.\->]+\s*\[\s*(\d+)\s*\])\s*\))re");
  for (std::size_t i = 0; i < lines.size(); ++i) {
    for (auto it = std::sregex_iterator(lines[i].begin(), lines[i].end(), kCast);
         it != std::sregex_iterator(); ++it) {
      const std::smatch& m = *it;
      auto lanes = kLanes.find(m[1].str());
      if (lanes == kLanes.end()) continue;
      const int offset = std::stoi(m[2].matched ? m[2].str() : m[3].str());
      if (offset % lanes->second == 0) continue;
      out->push_back({"epilogue.vector_access", static_cast<int>(i) + 1,
                      "offset this " + m[1].str() + " access by a multiple of " +
                          std::to_string(lanes->second) + " elements (it is offset by " +
                          std::to_string(offset) +
                          "): a vector load or store must be aligned "
                          "to its own width, or it faults with a misaligned address"});
    }
  }
}

}  // namespace

std::vector<Constraint> EpilogueConstraints() {
  return {
      {"epilogue.tma_alignment", "epilogue",
       "In an SM90 (TMA) collective epilogue, make AlignmentC and AlignmentD (in elements) times "
       "the element's bits a multiple of 128: 8 for half/bfloat16, 4 for float, 16 for 8-bit "
       "types (128 / cutlass::sizeof_bits<Element>::value).",
       "", ""},
      {"epilogue.vector_access", "epilogue",
       "Align every vectorised load or store to its own width (16 bytes for float4/int4/uint4, 8 "
       "for float2, 4 for half2/__nv_bfloat162): offset a scalar pointer cast to a vector type by "
       "a multiple of the vector's lanes, and give row strides that keep each row aligned.",
       "", ""},
  };
}

void CheckEpilogue(const std::vector<std::string>& lines, const std::set<std::string>& enabled,
                   std::vector<ConstraintViolation>* out) {
  if (enabled.count("epilogue.tma_alignment")) CheckTmaAlignment(lines, out);
  if (enabled.count("epilogue.vector_access")) CheckVectorAccess(lines, out);
}

}  // namespace kernelpro::cutlass
