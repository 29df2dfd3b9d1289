// Device primitives of the attention kernels: element types, cp.async,
// mbarriers, named barriers, ldmatrix and mma.sync (sm_80+; mbarrier try_wait
// and arrive-with-count need sm_90). Included only by .cu files.
#ifndef ATTENTION_KERNEL_TILE_MATH_CUH_
#define ATTENTION_KERNEL_TILE_MATH_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "attention/base/dtype.h"

namespace paged_attention {
namespace attention_kernel {

template <DType kDType>
struct CudaType;
template <>
struct CudaType<DType::kBFloat16> {
  using Type = __nv_bfloat16;
};
template <>
struct CudaType<DType::kFloat16> {
  using Type = __half;
};

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// Every lane of a warp, for the *_sync intrinsics.
constexpr uint32_t kFullMask = 0xffffffffu;

__device__ __forceinline__ uint32_t SmemAddress(const void* pointer) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}

// Element offset of 16-byte chunk `chunk` (0 .. kHeadDim / 8 - 1) of row
// `row` in a tile of kRows rows: 64-column blocks of kRows rows x 128 bytes,
// chunks XOR-swizzled by row % 8 within each row. That is the 128-byte
// swizzled K-major layout wgmma reads (tiles start 1024-byte aligned), and the
// 8 row addresses of an ldmatrix (same chunk, 8 consecutive rows) hit 8
// different bank groups.
template <int kHeadDim, int kRows>
__device__ __forceinline__ int TileOffset(int row, int chunk) {
  return (chunk >> 3) * (kRows * 64) + row * 64 + (((chunk & 7) ^ (row & 7)) << 3);
}

// 16-byte async copy global -> shared; copies nothing and zero-fills when
// !valid (the source is then never dereferenced).
__device__ __forceinline__ void CpAsync16(uint32_t smem, const void* gmem, bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem), "l"(gmem),
               "r"(src_bytes)
               : "memory");
}

// fence.acq_rel at GPU scope: what a release before, or an acquire after, a
// relaxed atomic needs (the PTX memory model's fence-atomic patterns).
// __threadfence() is fence.sc.gpu, which orders more than that; on the H200
// the two measured the same (NOTES.md, Variants `F`).
__device__ __forceinline__ void FenceAcqRelGpu() {
  asm volatile("fence.acq_rel.gpu;\n" ::: "memory");
}

__device__ __forceinline__ void CpAsyncCommit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

__device__ __forceinline__ void CpAsyncWaitAll() {
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}

// Waits for all but this thread's most recent cp.async group.
__device__ __forceinline__ void CpAsyncWaitAllButLast() {
  asm volatile("cp.async.wait_group 1;\n" ::: "memory");
}

// Arrives on `barrier` (without raising its expected count) once every
// cp.async this thread issued so far has landed.
__device__ __forceinline__ void CpAsyncMbarrierArrive(uint64_t* barrier) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(SmemAddress(barrier))
               : "memory");
}

__device__ __forceinline__ void MbarrierInit(uint64_t* barrier, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(SmemAddress(barrier)),
               "r"(arrivals)
               : "memory");
}

// Waits until the phase of `barrier` with parity `parity` has completed.
__device__ __forceinline__ void MbarrierWait(uint64_t* barrier, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred wait_done;\n"
      "WAIT_PHASE:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 wait_done, [%0], %1;\n"
      "@!wait_done bra WAIT_PHASE;\n"
      "}\n" ::"r"(SmemAddress(barrier)),
      "r"(parity)
      : "memory");
}

// `count` arrivals on `barrier` (release: this thread's earlier shared-memory
// reads are ordered before the phase completes).
__device__ __forceinline__ void MbarrierArrive(uint64_t* barrier, uint32_t count) {
  asm volatile(
      "{\n"
      ".reg .b64 state;\n"
      "mbarrier.arrive.shared::cta.b64 state, [%0], %1;\n"
      "}\n" ::"r"(SmemAddress(barrier)),
      "r"(count)
      : "memory");
}

// Every lane of a warp arrives on `barrier`, which counts threads, not warps:
// each lane releases its own shared-memory accesses. One lane arriving after
// __syncwarp would be as correct, but compute-sanitizer's racecheck follows
// an mbarrier per arriving thread and reports the other lanes' accesses as
// races (attention/kernel/NOTES.md, `ALE`); this way racecheck runs clean.
// The __syncwarp keeps the warp's collective reads (ldmatrix reads the rows
// other lanes address) before any lane's release. The arrival sits behind a
// branch the compiler cannot fold (every lane id is < 32): unconditional, it
// let NVVM reshape the general kernel's tile loop, and ptxas spilled the
// head_dim 256 tree kernel's 192 B to 452 B and the general kernel's 132 B to
// 152 B (head_dim 256 verify 3% slower on the H200; NOTES.md, `AL`).
__device__ __forceinline__ void WarpArrive(uint64_t* barrier, uint32_t count) {
  __syncwarp();
  uint32_t lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  if (lane < 32) MbarrierArrive(barrier, count);
}

// One arrival on `barrier` that also raises the bytes its phase waits for by
// `bytes` (the TMA copies that complete them may land before or after).
__device__ __forceinline__ void MbarrierArriveExpectTx(uint64_t* barrier, uint32_t bytes) {
  asm volatile(
      "{\n"
      ".reg .b64 state;\n"
      "mbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n"
      "}\n" ::"r"(SmemAddress(barrier)),
      "r"(bytes)
      : "memory");
}

// TMA: copies the box of the 3-D tensor map `map` (a __grid_constant__ param)
// at coordinates (c0, c1, c2) into shared memory at `smem` and completes its
// bytes on `barrier`.
__device__ __forceinline__ void TmaLoad3d(uint32_t smem, const void* map, int c0, int c1, int c2,
                                          uint64_t* barrier) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(smem),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(SmemAddress(barrier))
      : "memory");
}

__device__ __forceinline__ void PrefetchTmaDescriptor(const void* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// Orders this thread's earlier generic-proxy shared-memory writes (and the
// cp.async data an mbarrier wait made visible) before async-proxy reads
// (wgmma).
__device__ __forceinline__ void FenceProxyAsync() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Barrier 1 over the four consumer warps (threads 0..127); the producer warp
// never joins it.
__device__ __forceinline__ void ConsumerBarrier() {
  asm volatile("bar.sync 1, 128;\n" ::: "memory");
}

// A CTA of kGroups consumer warpgroups (threads 0-127 and 128-255 when two;
// paged_attention_kernel.cuh's member pairs): each group's own barrier (named
// barrier 1 + group) and its threads' index within the group. With one group
// they are ConsumerBarrier and threadIdx.x themselves.
template <int kGroups>
__device__ __forceinline__ void GroupBarrier() {
  if constexpr (kGroups == 1) {
    ConsumerBarrier();
  } else {
    asm volatile("bar.sync %0, 128;\n" ::"r"(1 + static_cast<int>(threadIdx.x) / 128) : "memory");
  }
}
template <int kGroups>
__device__ __forceinline__ unsigned GroupThread() {
  return kGroups == 1 ? threadIdx.x : threadIdx.x % 128;
}

__device__ __forceinline__ void LdMatrixX4(uint32_t (&r)[4], uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

// Two 8x8 matrices (lanes 0-15 give the row addresses): an m16n8k16 A
// fragment's rows 0-7 (r[0]: k 0-7, r[1]: k 8-15).
__device__ __forceinline__ void LdMatrixX2(uint32_t (&r)[2], uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(address));
}

__device__ __forceinline__ void LdMatrixX4Trans(uint32_t (&r)[4], uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

// D (16x8 f32) += A (16x16) * B (16x8).
template <typename T>
__device__ __forceinline__ void Mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1);

template <>
__device__ __forceinline__ void Mma16816<__nv_bfloat16>(float (&d)[4], const uint32_t (&a)[4],
                                                        uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <>
__device__ __forceinline__ void Mma16816<__half>(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                                 uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Mma16816 for an accumulator of rows 0-7 only (d: this thread's row lane /
// 4): rows 8-15 start from zero and their results are discarded, so an O of
// 8 rows holds half the registers. Rows 0-7 come out as Mma16816's (each
// output is its own row's dot product).
// (`discarded` is only ever written, by the asm: nvcc's warning 550 is off
// for these two functions.)
#pragma nv_diag_suppress 550
template <typename T>
__device__ __forceinline__ void Mma16816TopRows(float (&d)[2], const uint32_t (&a)[4], uint32_t b0,
                                                uint32_t b1);

template <>
__device__ __forceinline__ void Mma16816TopRows<__nv_bfloat16>(float (&d)[2],
                                                               const uint32_t (&a)[4], uint32_t b0,
                                                               uint32_t b1) {
  float discarded[2];
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %10, %10};\n"
      : "+f"(d[0]), "+f"(d[1]), "=f"(discarded[0]), "=f"(discarded[1])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(0.0f));
}

template <>
__device__ __forceinline__ void Mma16816TopRows<__half>(float (&d)[2], const uint32_t (&a)[4],
                                                        uint32_t b0, uint32_t b1) {
  float discarded[2];
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %10, %10};\n"
      : "+f"(d[0]), "+f"(d[1]), "=f"(discarded[0]), "=f"(discarded[1])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(0.0f));
}
#pragma nv_diag_default 550

template <typename T>
__device__ __forceinline__ uint32_t PackPair(float lo, float hi);

template <>
__device__ __forceinline__ uint32_t PackPair<__nv_bfloat16>(float lo, float hi) {
  __nv_bfloat162 pair = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&pair);
}

template <>
__device__ __forceinline__ uint32_t PackPair<__half>(float lo, float hi) {
  __half2 pair = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&pair);
}

// 2^x with subnormal results flushed to zero: one MUFU.EX2. exp2f keeps
// subnormals, which costs a range test and two predicated multiplies around
// every MUFU (a sixth of the paired softmax step's instructions, ncu); a
// probability below 2^-126 adds nothing an fp32 row sum or a bf16/fp16
// output can hold.
__device__ __forceinline__ float Exp2FlushSubnormal(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// tanh(x) by one MUFU.TANH (sm_75+), max relative error ~2^-11, as
// FlashAttention and FlashInfer cap logits. tanhf took a polynomial or an
// exponential and a division per logit, with a branch between them: verify
// q64 with a cap ran 1.55x its time without one, 1.15-1.18x with this (NOTES.md,
// `TA`). Capped logits stay within the tests' bound where tanh bends and
// saturates (SoftcapWhereTanhSaturates: caps of 50 / 5 / 1 that the logits
// pass); an exact form by ex2 and rcp (`TE`) passed too, 22% slower.
__device__ __forceinline__ float TanhApprox(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// ---------------------------------------------------------------------------
// wgmma (sm_90a only): a warpgroup's 64 x N x 16 product with both operands in
// shared memory, 128-byte swizzled K-major tiles (TileOffset).

// Descriptor of the K-major operand whose first element (row 0, column k0 of
// a 64-column block) is at shared address `address`: 8-row groups 1024 bytes
// apart (SBO), 128-byte swizzle; the leading offset is unused for it.
__device__ __forceinline__ uint64_t WgmmaDescriptor(uint32_t address) {
  return (uint64_t{(address & 0x3FFFF) >> 4}) | (uint64_t{1} << 16) | (uint64_t{1024 >> 4} << 32) |
         (uint64_t{1} << 62);
}

// The descriptor of the operand `byte_offset` bytes past `descriptor`'s:
// only the address field (address / 16, bits 0-13) moves, and it cannot carry
// out of its 14 bits inside a CTA's shared memory, so one add does it.
__device__ __forceinline__ uint64_t WgmmaDescriptorPlus(uint64_t descriptor, uint32_t byte_offset) {
  return descriptor + byte_offset / 16;
}

__device__ __forceinline__ void WgmmaFence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void WgmmaCommit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void WgmmaWaitAll() {
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}
// Waits until at most kPending of this thread's latest wgmma groups are in
// flight (the groups before them complete in order).
template <int kPending>
__device__ __forceinline__ void WgmmaWait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define PA_HAS_WGMMA 1
#else
#define PA_HAS_WGMMA 0
#endif

// D (64 x N f32, this thread's N / 2 values in mma m16n8 accumulator order per
// 8-column block) = A (64 x 16) * B (N x 16)^T (+ D when accumulate).
template <typename T, int N>
struct Wgmma;

#define PA_WGMMA_TYPE(T, ptx_type)                                                       \
  template <>                                                                            \
  struct Wgmma<T, 16> {                                                                  \
    static __device__ __forceinline__ void Run(float (&d)[2][4], uint64_t a, uint64_t b, \
                                               int accumulate) {                         \
      asm volatile(                                                                      \
          "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"                                   \
          "wgmma.mma_async.sync.aligned.m64n16k16.f32." ptx_type "." ptx_type            \
          " {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1, 0, 0;\n}\n"               \
          : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]),   \
            "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3])                                  \
          : "l"(a), "l"(b), "r"(accumulate));                                            \
    }                                                                                    \
  };                                                                                     \
  template <>                                                                            \
  struct Wgmma<T, 32> {                                                                  \
    static __device__ __forceinline__ void Run(float (&d)[4][4], uint64_t a, uint64_t b, \
                                               int accumulate) {                         \
      asm volatile(                                                                      \
          "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"                                   \
          "wgmma.mma_async.sync.aligned.m64n32k16.f32." ptx_type "." ptx_type            \
          " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15},"     \
          " %16, %17, p, 1, 1, 0, 0;\n}\n"                                               \
          : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]),   \
            "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]),   \
            "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]),   \
            "+f"(d[3][3])                                                                \
          : "l"(a), "l"(b), "r"(accumulate));                                            \
    }                                                                                    \
  };                                                                                     \
  template <>                                                                            \
  struct Wgmma<T, 64> {                                                                  \
    static __device__ __forceinline__ void Run(float (&d)[8][4], uint64_t a, uint64_t b, \
                                               int accumulate) {                         \
      asm volatile(                                                                      \
          "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                   \
          "wgmma.mma_async.sync.aligned.m64n64k16.f32." ptx_type "." ptx_type            \
          " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"      \
          " %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30,"  \
          " %31}, %32, %33, p, 1, 1, 0, 0;\n}\n"                                         \
          : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]),   \
            "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]),   \
            "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]),   \
            "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]),   \
            "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]),   \
            "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]),   \
            "+f"(d[7][2]), "+f"(d[7][3])                                                 \
          : "l"(a), "l"(b), "r"(accumulate));                                            \
    }                                                                                    \
  };

#if PA_HAS_WGMMA
PA_WGMMA_TYPE(__nv_bfloat16, "bf16")
PA_WGMMA_TYPE(__half, "f16")
#endif
#undef PA_WGMMA_TYPE

// Descriptor of an N-major B operand in TileOffset's layout: the V tile of
// O += P V, whose key rows (K) hold the head_dim columns (N) contiguously in
// 64-column blocks `block_bytes` apart (LBO), 8-key groups 1024 bytes apart
// (SBO), 128-byte swizzle (the canonical MN-major SW128 layout).
__device__ __forceinline__ uint64_t WgmmaDescriptorNMajor(uint32_t address, uint32_t block_bytes) {
  return (uint64_t{(address & 0x3FFFF) >> 4}) | (uint64_t{(block_bytes & 0x3FFFF) >> 4} << 16) |
         (uint64_t{1024 >> 4} << 32) | (uint64_t{1} << 62);
}

// D (64 x N f32, mma m16n8 accumulator order per 8-column block) = A (64 x 16,
// from registers: each warp its 16 rows in mma.sync m16n8k16's A fragment
// layout) * B (16 x N, N-major in shared memory) (+ D when accumulate).
template <typename T, int N>
struct WgmmaRegisterA;

#define PA_WGMMA_REGISTER_A_TYPE(T, ptx_type)                                               \
  template <>                                                                               \
  struct WgmmaRegisterA<T, 64> {                                                            \
    static __device__ __forceinline__ void Run(float (&d)[8][4], const uint32_t (&a)[4],    \
                                               uint64_t b, int accumulate) {                \
      asm volatile(                                                                         \
          "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"                                      \
          "wgmma.mma_async.sync.aligned.m64n64k16.f32." ptx_type "." ptx_type               \
          " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11,"                             \
          " %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23,"                    \
          " %24, %25, %26, %27, %28, %29, %30, %31},"                                       \
          " {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"                                    \
          : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]),      \
            "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]),      \
            "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]),      \
            "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]),      \
            "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]),      \
            "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]),      \
            "+f"(d[7][2]), "+f"(d[7][3])                                                    \
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));           \
    }                                                                                       \
  };                                                                                        \
  template <>                                                                               \
  struct WgmmaRegisterA<T, 128> {                                                           \
    static __device__ __forceinline__ void Run(float (&d)[16][4], const uint32_t (&a)[4],   \
                                               uint64_t b, int accumulate) {                \
      asm volatile(                                                                         \
          "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"                                      \
          "wgmma.mma_async.sync.aligned.m64n128k16.f32." ptx_type "." ptx_type              \
          " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11,"                             \
          " %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23,"                    \
          " %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35,"                    \
          " %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"                    \
          " %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59,"                    \
          " %60, %61, %62, %63},"                                                           \
          " {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"                                    \
          : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]),      \
            "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]),      \
            "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]),      \
            "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]),      \
            "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]),      \
            "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]),      \
            "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]),      \
            "+f"(d[8][3]), "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]),      \
            "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]), \
            "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]), "+f"(d[12][0]), "+f"(d[12][1]), \
            "+f"(d[12][2]), "+f"(d[12][3]), "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), \
            "+f"(d[13][3]), "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]), \
            "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3])                  \
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));           \
    }                                                                                       \
  };

#if PA_HAS_WGMMA
PA_WGMMA_REGISTER_A_TYPE(__nv_bfloat16, "bf16")
PA_WGMMA_REGISTER_A_TYPE(__half, "f16")
#endif
#undef PA_WGMMA_REGISTER_A_TYPE

// Keeps the compiler from moving reads or writes of `x` across this point
// (after WgmmaWaitAll: the registers an asynchronous wgmma wrote).
__device__ __forceinline__ void PinRegister(float& x) { asm volatile("" : "+f"(x)::"memory"); }

}  // namespace attention_kernel
}  // namespace paged_attention

#endif  // ATTENTION_KERNEL_TILE_MATH_CUH_
