// check_smem_layout: answers "does this CuTe shared-memory layout compile, and what is it?" in
// seconds, before a candidate spends a minute-long build on it.
//
// The programmer describes a layout the way it would write it in a kernel: an element type, a
// layout atom (`GMMA::Layout_K_SW128_Atom<cute::half_t>{}`, or
// `composition(Swizzle<3,3,3>{}, Layout<Shape<_8,_64>,Stride<_64,_1>>{})`) and a tile shape
// (`Shape<_128,_64>`, or `Shape<_128,_64,_4>` with a stage count). CheckSmemLayout pastes them
// into a minimal probe that does `tile_to_shape(atom, shape)`, compiles it with nvcc against the
// CUTLASS include folder and runs the (host-only, GPU-free) result to print the layout. The answer
// is one line for the model: "compiles: layout ... over 8192 elements (16 KiB of cute::half_t)",
// or the first static_assert or error in plain words ("the tile shape (100,64) is not a multiple
// of the atom's (8,64) in mode 0").
//
// The expressions come from a model and end up in C++ source that is compiled and run, so they
// are held to a small grammar (identifiers, `::`, `<>`, `()`, empty `{}`, commas, digits, spaces)
// and pasted only inside `decltype(...)` or `using` declarations: nothing of theirs is evaluated
// at run time. Anything else is refused with InvalidArgument before nvcc starts.
//
// Results are cached by the content of the probe, the compiler flags and the CUTLASS version, so
// asking twice costs one compile. Safe to call from several threads (each call has its own
// scratch folder; the cache is written atomically).
#pragma once

#include <cstdint>
#include <string>

#include "core/json_io.h"
#include "core/status.h"

namespace kernelpro::cutlass {

// What the model asks about. Only `atom` and `tile_shape` are required.
struct SmemLayoutQuery {
  // The element type; the probe declares `using Element = <element_type>;`, so the atom may say
  // `GMMA::Layout_K_SW128_Atom<Element>{}`. Also gives the answer's byte count.
  std::string element_type = "cute::half_t";
  // A layout atom: an expression (`...{}`, `composition(...)`) or a type (`GMMA::Layout_..<T>`).
  std::string atom;
  // The tile shape as a type (`Shape<_128,_64,_4>`) or an expression (`make_shape(_128{},_64{})`).
  std::string tile_shape;
};

struct SmemProbeOptions {
  // The folder holding cute/ and cutlass/ (a checkout's include/, or the wheel's
  // cutlass_library/source/include). Required.
  std::string include_dir;
  // Where answers are cached (a folder smem_probe/ is made inside); empty: no cache.
  std::string cache_dir;
  // nvcc to run; empty: found like the other CUDA tools (KERNELPRO_NVCC, PATH, CUDA_HOME...).
  std::string nvcc;
  // The architecture the probe compiles for: GMMA layouts need the `a` of sm_90a.
  std::string arch = "sm_90a";
  // Wall-clock limit for the compile (a CuTe probe takes 6-10 s on a quiet core).
  int timeout_seconds = 180;
};

struct SmemLayoutDiagnosis {
  bool compiles = false;
  // One line for the model: "compiles: layout ... over N elements (B KiB of T)" or
  // "does not compile: <first problem in plain words>".
  std::string summary;
  // When it compiles: CuTe's print() of the layout, its size and cosize (elements) and the bytes
  // of shared memory cosize elements take.
  std::string layout;
  std::int64_t size = 0;
  std::int64_t cosize = 0;
  std::int64_t smem_bytes = 0;
  // When it does not: the first compiler error as nvcc wrote it (one line, bounded), for people.
  std::string first_error;
  bool from_cache = false;

  Json ToJson() const;
  static SmemLayoutDiagnosis FromJson(const Json& json);
};

// Refuses an expression the probe will not paste into C++ (see the header comment); the message
// says which character or construct and what is allowed. `what` names the field in the message.
Status CheckProbeExpression(const std::string& expression, const std::string& what);

// The probe's C++ source for a query (exposed for tests and for people debugging a diagnosis).
// The query must already have passed CheckProbeExpression.
std::string SmemProbeSource(const SmemLayoutQuery& query);

// Turns nvcc's output for a failed probe into one plain-words line. `probe_file` is the name nvcc
// reported for the probe (its lines map back to the query's fields); paths under `include_dir`
// are shown relative to it.
std::string DiagnoseProbeErrors(const std::string& nvcc_output, const std::string& probe_file,
                                const std::string& include_dir);

// Compiles and runs the probe (or answers from the cache). A layout that does not compile is a
// diagnosis, not an error; errors are: a refused expression (InvalidArgument), no nvcc or no
// include folder (Unavailable / NotFound), a compile past the timeout (Timeout).
Result<SmemLayoutDiagnosis> CheckSmemLayout(const SmemLayoutQuery& query,
                                            const SmemProbeOptions& options);

}  // namespace kernelpro::cutlass
