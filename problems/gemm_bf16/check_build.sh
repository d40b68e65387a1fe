#!/usr/bin/env bash
# Standalone build check of the CUTLASS candidate, without torch (no GPU needed).
#
# Takes the candidate's `_KERNELS` string (the CUTLASS code, exactly as load_inline compiles it),
# compiles it with nvcc for sm_90a, and counts the warpgroup MMA instructions (HGMMA) in the SASS
# with cuobjdump; also prints registers/spills. With --run (on a Hopper GPU) it also links a small
# host program that checks the kernel against a naive reference on a few shapes and times 4096^3.
#
#   problems/gemm_bf16/check_build.sh [--run] [--keep DIR]
#
# CUTLASS: $CUTLASS_DIR or $KERNELPRO_CUTLASS_DIR (checkout root, include/ folder or the
# nvidia-cutlass wheel's cutlass_library folder), else /work/.cutlass-pypi or .tools/cutlass.
# cuobjdump: $KERNELPRO_CUOBJDUMP, PATH, $CUDA_HOME/bin, /usr/local/cuda/bin, .tools/pypi (scripts/setup).
# Not used by any test. A compile takes about a minute on a 2-core machine.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
run=0
keep=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --run) run=1 ;;
    --keep) keep="$2"; shift ;;
    *) echo "usage: $0 [--run] [--keep DIR]" >&2; exit 2 ;;
  esac
  shift
done

find_include() {
  local d sub
  for d in "${CUTLASS_DIR:-}" "${KERNELPRO_CUTLASS_DIR:-}" /work/.cutlass-pypi "$root/.tools/cutlass"; do
    [[ -n "$d" ]] || continue
    for sub in include "" source/include cutlass_library/source/include; do
      if [[ -f "$d/$sub/cutlass/cutlass.h" ]]; then
        (cd "$d/$sub" && pwd)
        return 0
      fi
    done
  done
  return 1
}
include="$(find_include)" || { echo "CUTLASS not found: set CUTLASS_DIR" >&2; exit 2; }

# cuobjdump found the way kernelpro finds it (src/core/tool_paths.cc FindTool).
find_cuobjdump() {
  if [[ -n "${KERNELPRO_CUOBJDUMP:-}" ]]; then echo "$KERNELPRO_CUOBJDUMP"; return 0; fi
  local d
  for d in $(command -v cuobjdump || true) "${CUDA_HOME:-/nonexistent}/bin/cuobjdump" \
           /usr/local/cuda/bin/cuobjdump "$root"/.tools/pypi/nvidia/*/bin/cuobjdump; do
    if [[ -x "$d" ]]; then echo "$d"; return 0; fi
  done
  return 1
}
cuobjdump="$(find_cuobjdump)" || { echo "cuobjdump not found: run scripts/setup or set KERNELPRO_CUOBJDUMP" >&2; exit 2; }
python="${PYTHON:-$(command -v python3 || echo /usr/bin/python3)}"

work="${keep:-$(mktemp -d)}"
mkdir -p "$work"
[[ -n "$keep" ]] || trap 'rm -rf "$work"' EXIT

# The kernel source, read from the candidate without importing it (importing would build it).
"$python" - "$here/candidates/cuda_gemm_cutlass.py" "$work/kernels.cu" <<'EOF'
import ast, sys
tree = ast.parse(open(sys.argv[1]).read())
for node in tree.body:
    if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "_KERNELS" for t in node.targets):
        open(sys.argv[2], "w").write(node.value.value)
        break
else:
    sys.exit("no _KERNELS string in " + sys.argv[1])
EOF

flags=(-std=c++17 --expt-relaxed-constexpr -O3 -DNDEBUG -gencode=arch=compute_90a,code=sm_90a
       -I"$include")
echo "CUTLASS include: $include"
echo "nvcc: $(nvcc --version | tail -1)"
start=$SECONDS
nvcc "${flags[@]}" -c "$work/kernels.cu" -o "$work/kernels.o"
echo "compiled in $((SECONDS - start)) s"

"$cuobjdump" --dump-sass "$work/kernels.o" > "$work/kernels.sass"
hgmma=$(grep -c 'HGMMA' "$work/kernels.sass" || true)
echo "HGMMA instructions: $hgmma"
grep -o 'HGMMA\.[A-Za-z0-9x.]*' "$work/kernels.sass" | sort | uniq -c || true
"$cuobjdump" -res-usage "$work/kernels.o" | grep -o 'REG:[0-9]* STACK:[0-9]* SHARED:[0-9]* LOCAL:[0-9]*' || true
if [[ "$hgmma" -eq 0 ]]; then
  echo "FAIL: no warpgroup MMA in the SASS" >&2
  exit 1
fi

if [[ "$run" -eq 1 ]]; then
  cat > "$work/main.cu" <<'EOF'
// Checks kp_gemm_bf16_run against a naive fp32 reference and times 4096^3.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

int kp_gemm_bf16_check(int m, int n, int k, int sm_count);
size_t kp_gemm_bf16_workspace(int m, int n, int k, int sm_count);
int kp_gemm_bf16_run(const void* a, const void* b, void* d, int m, int n, int k, int sm_count,
                     void* workspace, cudaStream_t stream);

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); std::exit(1); } } while (0)

__global__ void naive(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c, int m, int n, int k) {
  int i = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m || j >= n) return;
  float s = 0.f;
  for (int p = 0; p < k; ++p) s += __bfloat162float(a[(size_t)i * k + p]) * __bfloat162float(b[(size_t)p * n + j]);
  c[(size_t)i * n + j] = s;
}

static int run_shape(int m, int n, int k, int sm, bool time) {
  std::vector<__nv_bfloat16> ha((size_t)m * k), hb((size_t)k * n);
  srand(m * 31 + n * 7 + k);
  for (auto& v : ha) v = __float2bfloat16((rand() / (float)RAND_MAX - 0.5f) * 0.125f);
  for (auto& v : hb) v = __float2bfloat16((rand() / (float)RAND_MAX - 0.5f) * 0.0625f);
  __nv_bfloat16 *a, *b, *d; float* ref; void* ws = nullptr;
  CK(cudaMalloc(&a, ha.size() * 2)); CK(cudaMalloc(&b, hb.size() * 2));
  CK(cudaMalloc(&d, (size_t)m * n * 2)); CK(cudaMalloc(&ref, (size_t)m * n * 4));
  CK(cudaMemcpy(a, ha.data(), ha.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b, hb.data(), hb.size() * 2, cudaMemcpyHostToDevice));
  int can = kp_gemm_bf16_check(m, n, k, sm);
  if (can != 0) { std::printf("%dx%dx%d: cannot implement (status %d)\n", m, n, k, can); return 1; }
  size_t wsb = kp_gemm_bf16_workspace(m, n, k, sm);
  if (wsb) CK(cudaMalloc(&ws, wsb));
  int st = kp_gemm_bf16_run(a, b, d, m, n, k, sm, ws, 0);
  CK(cudaDeviceSynchronize());
  if (st != 0) { std::printf("%dx%dx%d: run failed (status %d)\n", m, n, k, st); return 1; }
  naive<<<dim3((n + 15) / 16, (m + 15) / 16), dim3(16, 16)>>>(a, b, ref, m, n, k);
  CK(cudaDeviceSynchronize());
  std::vector<__nv_bfloat16> hd((size_t)m * n); std::vector<float> hr((size_t)m * n);
  CK(cudaMemcpy(hd.data(), d, hd.size() * 2, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hr.data(), ref, hr.size() * 4, cudaMemcpyDeviceToHost));
  double max_err = 0, max_ref = 0; size_t bad = 0;
  for (size_t i = 0; i < hr.size(); ++i) {
    double e = std::fabs((double)__bfloat162float(hd[i]) - hr[i]);
    max_err = std::fmax(max_err, e); max_ref = std::fmax(max_ref, std::fabs(hr[i]));
    if (e > 1e-3 + 8e-3 * std::fabs(hr[i])) ++bad;  // one bf16 rounding step plus fp32 noise
  }
  std::printf("%dx%dx%d: max |err| %.3g (max |ref| %.3g), %zu elements beyond one bf16 step: %s\n",
              m, n, k, max_err, max_ref, bad, bad ? "FAIL" : "ok");
  if (time) {
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    for (int i = 0; i < 10; ++i) kp_gemm_bf16_run(a, b, d, m, n, k, sm, ws, 0);
    const int iters = 50;
    CK(cudaEventRecord(e0));
    for (int i = 0; i < iters; ++i) kp_gemm_bf16_run(a, b, d, m, n, k, sm, ws, 0);
    CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
    float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); ms /= iters;
    std::printf("%dx%dx%d: %.4f ms per call, %.1f TFLOP/s\n", m, n, k, ms, 2.0 * m * n * k / (ms * 1e-3) / 1e12);
  }
  cudaFree(a); cudaFree(b); cudaFree(d); cudaFree(ref); if (ws) cudaFree(ws);
  return bad ? 1 : 0;
}

int main() {
  int sm = 0; CK(cudaDeviceGetAttribute(&sm, cudaDevAttrMultiProcessorCount, 0));
  int fails = 0;
  fails += run_shape(256, 512, 128, sm, false);
  fails += run_shape(1000, 1032, 520, sm, false);  // partial tiles in M, N and K
  fails += run_shape(4096, 4096, 4096, sm, true);
  return fails ? 1 : 0;
}
EOF
  nvcc "${flags[@]}" "$work/main.cu" "$work/kernels.o" -o "$work/check"
  "$work/check"
fi
