// The paged varlen attention kernel (FlashAttention-2 style, mma.sync +
// ldmatrix + cp.async multi-stage pipeline) and the split-KV combine kernel.
// Included only by the per-(dtype, head_dim) .cu files.
//
// One CTA (4 warps, 128 threads) owns one (request, KV head, query-row tile,
// KV split). Its 64 query rows are the request's query tokens x the query heads
// sharing the KV head (row = token * group + head-in-group), so each K/V byte
// is read once per (request, KV head) however many query heads share it. Each
// warp owns 16 rows; a warp whose rows are all padding skips the math but still
// helps load. K/V rows are gathered through the page table one row at a time
// with 16-byte cp.async; rows outside the CTA's visible key range are never read
// (zero-filled instead), so NaN in unused pool slots cannot leak in.
#ifndef ATTENTION_KERNEL_PAGED_ATTENTION_KERNEL_CUH_
#define ATTENTION_KERNEL_PAGED_ATTENTION_KERNEL_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "attention/kernel/paged_attention_kernel.h"

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

template <int kHeadDim>
struct KernelTraits {
  static_assert(kHeadDim == 64 || kHeadDim == 128 || kHeadDim == 256, "unsupported head_dim");
  static constexpr int kBlockM = kAttentionBlockM;
  static constexpr int kBlockN = kHeadDim == 256 ? 32 : 64;
  static constexpr int kStages = kHeadDim == 256 ? 2 : 3;
  static constexpr int kWarps = 4;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kChunksPerRow = kHeadDim / 8;  // 16-byte chunks of one row
  static constexpr int kRowsPerPass = kThreads / kChunksPerRow;
  static constexpr int kQElems = kBlockM * kHeadDim;
  static constexpr int kKvElems = kBlockN * kHeadDim;
  static constexpr int kSmemBytes = (kQElems + 2 * kStages * kKvElems) * 2;
  static_assert(kBlockM == kWarps * 16, "one m16 MMA row block per warp");
  static_assert(kBlockM % kRowsPerPass == 0 && kBlockN % kRowsPerPass == 0, "load passes");
  static_assert(kSplitKeyGranularity % kBlockN == 0, "key tiles must not straddle splits");
  static_assert(kStages >= 2, "pipeline");
};

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

__device__ __forceinline__ uint32_t SmemAddress(const void* pointer) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}

// 16-byte async copy; copies nothing and zero-fills when !valid (the source
// is then never dereferenced).
__device__ __forceinline__ void CpAsync16(uint32_t smem, const void* gmem, bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem), "l"(gmem),
               "r"(src_bytes));
}

__device__ __forceinline__ void CpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int kPending>
__device__ __forceinline__ void CpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

__device__ __forceinline__ void LdMatrixX4(uint32_t (&r)[4], uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
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

// Element offset of 16-byte chunk `chunk` of tile row `row`: chunks are XOR-
// swizzled within each group of 8 so the 8 row addresses of an ldmatrix (same
// logical chunk, 8 consecutive rows) hit 8 different bank groups.
template <int kHeadDim>
__device__ __forceinline__ int SwizzledOffset(int row, int chunk) {
  return row * kHeadDim + ((chunk ^ (row & 7)) << 3);
}

template <typename T, int kHeadDim>
__global__ void __launch_bounds__(KernelTraits<kHeadDim>::kThreads)
    PagedAttentionKernel(const PagedAttentionParams p) {
  using Traits = KernelTraits<kHeadDim>;
  constexpr int kBlockM = Traits::kBlockM;
  constexpr int kBlockN = Traits::kBlockN;
  constexpr int kStages = Traits::kStages;
  constexpr int kChunksPerRow = Traits::kChunksPerRow;
  constexpr int kRowsPerPass = Traits::kRowsPerPass;

  extern __shared__ uint4 smem_words[];
  T* q_smem = reinterpret_cast<T*>(smem_words);
  T* k_smem = q_smem + Traits::kQElems;             // [kStages][kBlockN][kHeadDim]
  T* v_smem = k_smem + kStages * Traits::kKvElems;  // [kStages][kBlockN][kHeadDim]

  // Block -> (request, KV head, query-row tile); the last tiles (most keys under
  // the causal mask) are scheduled first.
  int block = blockIdx.x;
  const int m_tile = p.num_m_tiles - 1 - block % p.num_m_tiles;
  block /= p.num_m_tiles;
  const int kv_head = block % p.num_kv_heads;
  const int request = block / p.num_kv_heads;
  const int split = blockIdx.y;

  const int q_begin = p.cu_seqlens_q[request];
  const int q_len = p.cu_seqlens_q[request + 1] - q_begin;
  const int k_len = p.cache_seqlens[request];
  const int group = p.group;
  const int num_rows = q_len * group;
  const int row0 = m_tile * kBlockM;
  if (row0 >= num_rows) return;

  const int split_chunk = SplitKeyChunk(k_len, p.num_kv_splits);
  const int active_splits = NumActiveSplits(k_len, split_chunk);
  if (split >= active_splits) return;
  const bool write_direct = active_splits == 1;
  const int split_lo = split * split_chunk;
  const int split_hi = min(k_len, split_lo + split_chunk);

  // Keys any row of this tile may see, within this split.
  const int diag_offset = k_len - q_len;  // query j's diagonal key: j + diag_offset
  const int row_last = min(row0 + kBlockM, num_rows) - 1;
  const int first_token = row0 / group;
  const int last_token = row_last / group;
  const bool causal = p.causal != 0;
  const int window = causal ? p.window_left : -1;
  int kv_lo = split_lo;
  int kv_hi = split_hi;
  if (causal) {
    kv_hi = min(kv_hi, last_token + diag_offset + 1);
    if (window >= 0) kv_lo = max(kv_lo, first_token + diag_offset - window);
  }
  const int tile_begin = kv_lo / kBlockN * kBlockN;  // >= split_lo: splits are tile-aligned
  const int num_tiles = kv_hi > kv_lo ? (kv_hi - tile_begin + kBlockN - 1) / kBlockN : 0;

  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int load_chunk = tid % kChunksPerRow;
  const int load_row = tid / kChunksPerRow;

  // Query tile: rows past the request are zero-filled.
  {
    const T* q = static_cast<const T*>(p.q);
#pragma unroll
    for (int pass = 0; pass < kBlockM / kRowsPerPass; ++pass) {
      const int row = load_row + pass * kRowsPerPass;
      const int packed = row0 + row;
      const bool valid = packed < num_rows;
      const T* src = q;
      if (valid) {
        const int token = q_begin + packed / group;
        const int head = kv_head * group + packed % group;
        src = q + (int64_t{token} * p.num_q_heads + head) * kHeadDim + load_chunk * 8;
      }
      CpAsync16(SmemAddress(q_smem + SwizzledOffset<kHeadDim>(row, load_chunk)), src, valid);
    }
  }

  const T* k_cache = static_cast<const T*>(p.k_cache);
  const T* v_cache = static_cast<const T*>(p.v_cache);
  const int32_t* page_row = p.page_table + int64_t{request} * p.max_pages_per_request;
  const int page_size = p.page_size;
  const int64_t kv_head_stride = p.num_kv_heads;

  // Gathers key tile `tile` into pipeline stage `stage`, one 16-byte chunk of a
  // row per thread and pass; keys at or past kv_hi are zero-filled, not read.
  auto load_kv_tile = [&](int tile, int stage) {
    const int key0 = tile_begin + tile * kBlockN;
    T* k_stage = k_smem + stage * Traits::kKvElems;
    T* v_stage = v_smem + stage * Traits::kKvElems;
#pragma unroll
    for (int pass = 0; pass < kBlockN / kRowsPerPass; ++pass) {
      const int row = load_row + pass * kRowsPerPass;
      const int key = key0 + row;
      const bool valid = key < kv_hi;
      int64_t offset = 0;
      if (valid) {
        const int page = __ldg(page_row + key / page_size);
        const int64_t slot = int64_t{page} * page_size + key % page_size;
        offset = (slot * kv_head_stride + kv_head) * kHeadDim + load_chunk * 8;
      }
      const int smem_offset = SwizzledOffset<kHeadDim>(row, load_chunk);
      CpAsync16(SmemAddress(k_stage + smem_offset), k_cache + offset, valid);
      CpAsync16(SmemAddress(v_stage + smem_offset), v_cache + offset, valid);
    }
  };

  // Prologue: Q joins the first group; kStages - 1 key tiles in flight.
#pragma unroll
  for (int stage = 0; stage < kStages - 1; ++stage) {
    if (stage < num_tiles) load_kv_tile(stage, stage);
    CpAsyncCommit();
  }

  const bool warp_active = row0 + warp * 16 < num_rows;
  // This thread's two rows of the warp's m16 block: lane/4 and lane/4 + 8.
  int row_diag[2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int packed = min(row0 + warp * 16 + lane / 4 + 8 * i, num_rows - 1);
    row_diag[i] = packed / group + diag_offset;
  }
  const int min_diag = first_token + diag_offset;
  const int max_diag = last_token + diag_offset;

  float o_acc[kHeadDim / 8][4];
#pragma unroll
  for (int d = 0; d < kHeadDim / 8; ++d) {
#pragma unroll
    for (int e = 0; e < 4; ++e) o_acc[d][e] = 0.0f;
  }
  float row_max[2] = {-INFINITY, -INFINITY};  // running max, log2 units
  float row_sum[2] = {0.0f, 0.0f};            // this thread's share of the running sum

  const uint32_t q_base = SmemAddress(q_smem);
  const int ldm_row = lane % 8;
  const int ldm_hi8 = (lane / 8) % 2;
  const int ldm_hi16 = lane / 16;

  for (int tile = 0; tile < num_tiles; ++tile) {
    CpAsyncWait<kStages - 2>();
    __syncthreads();
    // The stage refilled here was consumed in the previous iteration, which
    // every warp has finished (barrier above).
    if (tile + kStages - 1 < num_tiles) {
      load_kv_tile(tile + kStages - 1, (tile + kStages - 1) % kStages);
    }
    CpAsyncCommit();
    if (!warp_active) continue;

    const int stage = tile % kStages;
    const uint32_t k_base = SmemAddress(k_smem + stage * Traits::kKvElems);
    const uint32_t v_base = SmemAddress(v_smem + stage * Traits::kKvElems);
    const int key0 = tile_begin + tile * kBlockN;

    // S = Q K^T for this warp's 16 rows.
    float s[kBlockN / 8][4];
#pragma unroll
    for (int n = 0; n < kBlockN / 8; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) s[n][e] = 0.0f;
    }
#pragma unroll
    for (int ks = 0; ks < kHeadDim / 16; ++ks) {
      uint32_t a[4];
      {
        const int row = warp * 16 + ldm_row + ldm_hi8 * 8;
        LdMatrixX4(a, q_base + 2 * SwizzledOffset<kHeadDim>(row, ks * 2 + ldm_hi16));
      }
#pragma unroll
      for (int nb = 0; nb < kBlockN / 16; ++nb) {
        uint32_t b[4];
        const int row = nb * 16 + ldm_row + ldm_hi16 * 8;
        LdMatrixX4(b, k_base + 2 * SwizzledOffset<kHeadDim>(row, ks * 2 + ldm_hi8));
        Mma16816<T>(s[2 * nb], a, b[0], b[1]);
        Mma16816<T>(s[2 * nb + 1], a, b[2], b[3]);
      }
    }

    // Logits in log2 units, then the mask (only on tiles that need one).
    const bool needs_mask =
        key0 + kBlockN > split_hi ||
        (causal && (key0 + kBlockN - 1 > min_diag || (window >= 0 && key0 < max_diag - window)));
#pragma unroll
    for (int n = 0; n < kBlockN / 8; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float x = s[n][e];
        if (p.softcap_log2 != 0.0f) {
          x = p.softcap_log2 * tanhf(x * p.scale_over_softcap);
        } else {
          x *= p.scale_log2;
        }
        if (needs_mask) {
          const int key = key0 + n * 8 + (lane % 4) * 2 + (e % 2);
          const int diag = row_diag[e / 2];
          const bool visible =
              key < split_hi && (!causal || (key <= diag && (window < 0 || key >= diag - window)));
          if (!visible) x = -INFINITY;
        }
        s[n][e] = x;
      }
    }

    // Online softmax; a row that has seen no key yet keeps max -inf and uses 0
    // as its reference so no -inf - -inf appears.
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      float tile_max = row_max[i];
#pragma unroll
      for (int n = 0; n < kBlockN / 8; ++n) {
        tile_max = fmaxf(tile_max, fmaxf(s[n][2 * i], s[n][2 * i + 1]));
      }
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
      const float reference = tile_max == -INFINITY ? 0.0f : tile_max;
      const float rescale = exp2f(row_max[i] - reference);
      row_max[i] = tile_max;
      float sum = 0.0f;
#pragma unroll
      for (int n = 0; n < kBlockN / 8; ++n) {
        s[n][2 * i] = exp2f(s[n][2 * i] - reference);
        s[n][2 * i + 1] = exp2f(s[n][2 * i + 1] - reference);
        sum += s[n][2 * i] + s[n][2 * i + 1];
      }
      row_sum[i] = row_sum[i] * rescale + sum;
#pragma unroll
      for (int d = 0; d < kHeadDim / 8; ++d) {
        o_acc[d][2 * i] *= rescale;
        o_acc[d][2 * i + 1] *= rescale;
      }
    }

    // O += P V: the S accumulators of two n8 blocks form one A fragment.
#pragma unroll
    for (int kb = 0; kb < kBlockN / 16; ++kb) {
      uint32_t a[4];
      a[0] = PackPair<T>(s[2 * kb][0], s[2 * kb][1]);
      a[1] = PackPair<T>(s[2 * kb][2], s[2 * kb][3]);
      a[2] = PackPair<T>(s[2 * kb + 1][0], s[2 * kb + 1][1]);
      a[3] = PackPair<T>(s[2 * kb + 1][2], s[2 * kb + 1][3]);
      const int row = kb * 16 + ldm_row + ldm_hi8 * 8;
#pragma unroll
      for (int db = 0; db < kHeadDim / 16; ++db) {
        uint32_t b[4];
        LdMatrixX4Trans(b, v_base + 2 * SwizzledOffset<kHeadDim>(row, db * 2 + ldm_hi16));
        Mma16816<T>(o_acc[2 * db], a, b[0], b[1]);
        Mma16816<T>(o_acc[2 * db + 1], a, b[2], b[3]);
      }
    }
  }
  CpAsyncWait<0>();

  if (!warp_active) return;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    float sum = row_sum[i];
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    const int packed = row0 + warp * 16 + lane / 4 + 8 * i;
    if (packed >= num_rows) continue;
    const int token = q_begin + packed / group;
    const int head = kv_head * group + packed % group;
    // No visible key: zeros and lse = -inf.
    const float inv_sum = sum > 0.0f ? 1.0f / sum : 0.0f;
    const float lse = sum > 0.0f ? row_max[i] * kLn2 + logf(sum) : -INFINITY;
    if (write_direct) {
      T* out = static_cast<T*>(p.out) + (int64_t{token} * p.num_q_heads + head) * kHeadDim;
#pragma unroll
      for (int d = 0; d < kHeadDim / 8; ++d) {
        *reinterpret_cast<uint32_t*>(out + d * 8 + (lane % 4) * 2) =
            PackPair<T>(o_acc[d][2 * i] * inv_sum, o_acc[d][2 * i + 1] * inv_sum);
      }
      if (p.lse != nullptr && lane % 4 == 0) {
        p.lse[int64_t{head} * p.total_q_tokens + token] = lse;
      }
    } else {
      const int64_t partial_row =
          (int64_t{split} * p.total_q_tokens + token) * p.num_q_heads + head;
      float* out = p.partial_out + partial_row * kHeadDim;
#pragma unroll
      for (int d = 0; d < kHeadDim / 8; ++d) {
        *reinterpret_cast<float2*>(out + d * 8 + (lane % 4) * 2) =
            make_float2(o_acc[d][2 * i] * inv_sum, o_acc[d][2 * i + 1] * inv_sum);
      }
      if (lane % 4 == 0) p.partial_lse[partial_row] = lse;
    }
  }
}

}  // namespace attention_kernel

template <DType kDType, int kHeadDim>
cudaError_t LaunchPagedAttentionKernel(const PagedAttentionParams& params, cudaStream_t stream) {
  using T = typename attention_kernel::CudaType<kDType>::Type;
  using Traits = attention_kernel::KernelTraits<kHeadDim>;
  auto* kernel = attention_kernel::PagedAttentionKernel<T, kHeadDim>;
  // Not a stream operation: allowed during graph capture.
  cudaError_t error =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Traits::kSmemBytes);
  if (error != cudaSuccess) return error;
  const dim3 grid(
      static_cast<unsigned>(params.num_m_tiles) * params.batch_size * params.num_kv_heads,
      params.num_kv_splits);
  kernel<<<grid, Traits::kThreads, Traits::kSmemBytes, stream>>>(params);
  return cudaGetLastError();
}

}  // namespace paged_attention

#endif  // ATTENTION_KERNEL_PAGED_ATTENTION_KERNEL_CUH_
