// The SASS view of a built candidate: what the compiled machine code of each kernel looks like,
// read from cuobjdump and nm text (the record types are in profile/metrics.h).
//
// Four texts feed it, each with its own parser so tests and recorded artifacts can replay them:
//   cuobjdump --dump-sass   per-kernel static instruction histograms (ParseSassDump)
//   cuobjdump -res-usage    registers, shared, local and stack bytes per function
//   cuobjdump -symbols      which functions are kernel entry points
//   nm -D                   which cuBLAS / cuBLASLt / cuDNN functions the shared object uses
// AnalyzeSharedObject runs the tools on a .so and combines the texts; CombineSass does the same for
// texts read from files. Counts are static: an instruction in a loop counts once.
//
// Every parser reads untrusted text forgivingly: truncated, empty or garbled input never crashes or
// throws; it yields what could be read. All functions are free of shared state and safe to call
// from several threads at once.
//
// When a dump holds code for several architectures (a fat binary built for sm_80 and sm_90a), one
// architecture is kept so that a kernel is not counted twice: the one asked for, else the newest
// (highest sm number) present. SassView::arch says which.
//
// Categories (SassKernel::categories; counts of static instructions, keyed by the names below,
// every one of them present even when zero; "base" is the mnemonic before the first '.'):
//   tensor_wgmma        Hopper warpgroup MMA (wgmma.mma_async): base HGMMA (f16/bf16/tf32),
//                       IGMMA (s8/u8), QGMMA (fp8 e4m3/e5m2), BGMMA (b1)
//   tensor_hmma         warp-level fp16/bf16/tf32 MMA (mma.sync, wmma): HMMA
//   tensor_imma         warp-level integer MMA: IMMA
//   tensor_dmma         warp-level fp64 MMA: DMMA
//   tensor_bmma         warp-level 1-bit MMA: BMMA
//   ldgsts              Ampere async global->shared copies (cp.async): LDGSTS
//   async_barrier       commits of and waits for async copy groups: LDGDEPBAR (cp.async
//                       commit_group), DEPBAR (cp.async / cp.async.bulk wait_group), UTMACMDFLUSH
//                       (cp.async.bulk commit_group)
//   tma                 Hopper bulk copies (the Tensor Memory Accelerator): UTMALDG / UTMASTG
//                       (tensor-map load / store), UTMAPF (tensor prefetch), UTMAREDG (tensor
//                       reduce), UBLKCP (plain bulk copy, either direction), UBLKPF (bulk
//                       prefetch), UBLKRED (bulk reduce)
//   mbarrier            Hopper transaction barriers (mbarrier.init / arrive / try_wait): SYNCS
//   warpgroup_sync      wgmma.fence / wgmma.wait_group: WARPGROUP (.ARRIVE, .DEPBAR)
//   local_load          LDL (register spills and dynamically indexed per-thread arrays)
//   local_store         STL
//   mufu                special-function unit (exp2, rcp, rsqrt, sin, ...): MUFU
//   ffma / fadd / fmul  fp32 arithmetic: FFMA / FADD / FMUL, immediate forms (FFMA32I ...) included
//   barrier             CTA-wide barriers (__syncthreads, bar.sync / bar.arrive / bar.red): BAR
//   warp_sync           __syncwarp: WARPSYNC. Kept apart from `barrier` because it stalls one warp,
//                       not the block. BSSY/BSYNC (the compiler's reconvergence bookkeeping around
//                       any divergent branch) are deliberately not counted as barriers.
//   shuffle             warp shuffles: SHFL
//   global_load         LDG, all widths
//   global_load_128 / global_load_64 / global_load_32 / global_load_narrow
//                       LDG split by access width: a .128 or .64 modifier; no width modifier (or
//                       .32) is 32 bits; .U8 .S8 .U16 .S16 are narrow (under 32 bits)
//   global_store, global_store_128 / _64 / _32 / _narrow   the same for STG
//   shared_load         LDS (all widths)       shared_store   STS (all widths)
//   shared_load_matrix  LDSM (ldmatrix)        shared_store_matrix   STSM (stmatrix)
//   generic_load        LD (generic address, global or shared decided at run time)
//   generic_store       ST
//   atomic              global or generic atomics and reductions: ATOMG, ATOM, RED, REDG
//   atomic_shared       shared-memory atomics: ATOMS
// Present only when non-zero (their set is open-ended):
//   mufu_<function>     MUFU by function, lower case: mufu_rcp, mufu_ex2, mufu_rsq, mufu_lg2, ...
//   global_load_<bits> / global_store_<bits>   other width modifiers, e.g. Blackwell's .256
//
// total_instructions counts every instruction except NOP (the padding after the final EXIT);
// the never-reached `BRA self` that follows EXIT is counted, as it is a real instruction.
//
// Resource usage: cuobjdump puts a function's per-thread stack frame (where spilled registers and
// dynamically indexed local arrays live) in STACK, so spills show as stack_bytes; LOCAL is local
// memory outside the frame and is usually 0.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "profile/metrics.h"

namespace kernelpro::profile {

// The fixed category names above, in the order the list gives them.
const std::vector<std::string>& SassCategoryNames();

// Parses `cuobjdump --dump-sass` text (one or several "Fatbin elf code" sections, "Function :
// <mangled>" blocks, instruction lines like `/*0070*/  @P0 EXIT ;  /* 0x... */`) into per-kernel
// histograms. `arch` ("sm_90a") picks one architecture of a multi-architecture dump; empty picks
// the newest present. An instruction line counts only when complete (it has its ';'), so a dump
// cut mid-line loses that line and nothing else. Never crashes or throws on truncated, empty or
// garbage text: returns what it could read, or InvalidArgument when nothing resembles SASS (or
// `arch` is not in the dump).
Result<SassView> ParseSassDump(std::string_view text, std::string_view arch = {});

// `cuobjdump -res-usage`: " Function NAME:\n  REG:18 STACK:0 SHARED:0 LOCAL:0 ..." -> fills
// registers / stack / shared / local of the kernels of that name (appending kernels not yet
// present). Sections for another architecture than view.arch are skipped; when view.arch is
// empty the newest architecture in the text is used and recorded in view.arch.
void ApplyResourceUsage(std::string_view text, SassView& view);

// `cuobjdump -symbols`: names of kernel entry points, in order of appearance, without repeats.
// Reads both cuobjdump formats: "STT_FUNC STB_GLOBAL STO_ENTRY name" (CUDA 13.0) and
// "FUNC GLOBAL DEFAULT ENTRY name" (CUDA 13.5).
std::vector<std::string> ParseEntryPoints(std::string_view text);

// `nm -D` output: symbols, undefined or defined, of cuBLAS, cuBLASLt and cuDNN (names starting
// with cublas, cublasLt or cudnn), with any @VERSION / @@VERSION suffix stripped; sorted, unique.
std::vector<std::string> ParseLibraryCalls(std::string_view text);

// Combines the four texts (any may be empty) the way AnalyzeSharedObject does: the dump's
// histograms (no kernels when the dump is empty or unreadable), resource usage, entry points and
// library calls, with entry kernels first in `kernels` (each group in dump order).
SassView CombineSass(std::string_view dump, std::string_view res_usage, std::string_view symbols,
                     std::string_view nm, std::string_view arch = {});

// Runs cuobjdump (--dump-sass, -res-usage, -symbols) and `nm -D` on a built shared object (or
// cubin / fatbin) and combines them. A file without device code gives a view without kernels
// (its library calls may still matter). Errors: NotFound for a missing file; Unavailable when
// cuobjdump is missing; Timeout / IoError when cuobjdump fails or prints more than kernelpro
// reads (64 MiB). A missing or failing nm only leaves library_calls empty.
Result<SassView> AnalyzeSharedObject(const std::string& so_path, std::string_view arch = {});

// The raw tool outputs AnalyzeSharedObject combines, for callers that also keep them (kernelpro
// profile --save). A .so without device code gives empty texts and no_device_code, not an error.
struct SharedObjectDump {
  std::string sass, res_usage, symbols, nm;
  bool no_device_code = false;
};
Result<SharedObjectDump> DumpSharedObject(const std::string& so_path);

}  // namespace kernelpro::profile
