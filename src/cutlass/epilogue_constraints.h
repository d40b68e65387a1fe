// The vectorised-epilogue constraints (paper §3.2.4 names four categories: barrier life-cycle,
// warp specialisation, vectorised epilogue patterns and tile swizzle; constraints.h holds the
// others). The mined side is constraints.h's: the static_asserts of CUTLASS's SM90 collective
// epilogues and their builders (category "epilogue"). The curated side, here, is what no assert
// states in a hand-written kernel, and what the builders' asserts say only after a long build:
//
//   epilogue.tma_alignment  an SM90 (TMA) epilogue's AlignmentC/AlignmentD, in elements, times
//                           the element's bits must be a multiple of 128 (16 bytes): 8 for
//                           16-bit types, 4 for 32-bit, 16 for 8-bit
//                           (cutlass/epilogue/collective/builders/sm90_common.inl, is_aligned)
//   epilogue.vector_access  a vectorised access (float4, int4, uint4: 16 bytes; float2, int2,
//                           half2, __nv_bfloat162 ...) must be aligned to its own width, so a
//                           scalar pointer cast to a vector type must be offset by a multiple of
//                           the vector's lanes
//
// The checks read the candidate's text with regular expressions (as constraints.h's do): literal
// alignments and offsets only; an expression such as 128 / sizeof_bits<T>::value is taken as
// right. Pure functions; thread-safe.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "cutlass/constraints.h"

namespace kernelpro::cutlass {

// The curated epilogue constraints, in the order above.
std::vector<Constraint> EpilogueConstraints();

// The violations of the epilogue constraints in `enabled` among `lines` (line i + 1 of the
// candidate, comments already blanked), added to `out`.
void CheckEpilogue(const std::vector<std::string>& lines, const std::set<std::string>& enabled,
                   std::vector<ConstraintViolation>* out);

}  // namespace kernelpro::cutlass
