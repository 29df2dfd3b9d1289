// The paged attention kernel: persistent, warp-specialised, memory-bound.
// Included only by the per-(dtype, head_dim) .cu files.
//
// Its parts, in the order a K/V tile meets them:
//   kernel_traits.cuh      the instantiations, their rings, shared memory,
//                          threads and registers; a segment's words and tiles
//   kv_producer.cuh        the producer warp: page lookups, cp.async / TMA
//                          tiles, a member pair's walk over two segment lists
//   attend_tile.cuh        one warp's S = Q K^T, softmax and O += P V over a
//                          tile (RowState, UnitView, AttendTile)
//   consumer_steps.cuh     around a segment's tiles: its query tile, the key
//                          ways' fold, its rows' write, the fused merge
//   general_consumers.cuh  the general / tree / paired-tiles consumer loop
//   decode_consumers.cuh   the decode kernel's consumer loop
//   this file              the kernel entry (barriers, roles) and the host
//                          side: configuration, TMA descriptors, the variant
//                          a plan takes, the launch
//
// Each CTA is one worker of the plan (attention/planner/work_plan.h) and runs
// its segments in order with five warps:
//   - a producer warp streams the segment's K/V key tiles (16 KB each) through
//     the page table into a ring of kStages shared-memory stages, page ids
//     looked up one tile ahead: whole page rows by TMA for units of more than
//     32 rows (StreamsByTma) when every key of the tile is in the segment,
//     else 16-byte cp.async; each stage's "full" mbarrier completes when its
//     bytes land (TMA byte count, or cp.async.mbarrier.arrive);
//   - four consumer warps compute S = Q K^T, the online softmax and O += P V
//     with mma.sync m16n8k16 on the unit's packed query rows (query token x
//     query head of one KV head, so each K/V byte is read once for the whole
//     GQA group), and release each stage through its "empty" mbarrier; units
//     of 64 rows take wgmma as one warpgroup instead, for Q K^T and (head_dim
//     <= 128) for O += P V with P from registers.
// No CTA-wide barrier runs per tile: loads and math of different tiles overlap
// and the producer runs up to kStages tiles ahead. The consumers load each
// segment's query rows while the segment before it runs, into the other of
// two query tiles (KernelTraits::kQueryTiles).
//
// Consumer layout per unit (rows = packed rows, <= kUnitRows):
//   rows <= 16: one row block, the 4 warps take alternate key tiles;
//   rows <= 32: two row blocks x 2 key ways;   rows <= 64: four row blocks.
// Key ways are merged through shared memory (LSE-weighted) at the segment's
// end, so decode (a few rows) keeps all four warps busy. Plans whose units
// all have at most DecodeMaxRows rows (16; 8 at head_dim 256) run the decode
// instantiation (HasDecodeKernel; 16-row query tiles).
//
// A unit cut into pieces writes float32 partials. When it has at most
// kFusedMergeMaxRows rows (decode; twice that for KV head pairs), each worker counts its finished
// piece on the unit's MergeTask::arrivals and the one that finishes last merges the partials at
// once (the threadFenceReduction pattern: fence, atomic count, fence), so a split decode is one
// launch; larger units are left to the merge kernel. In the decode kernel launched cooperatively, a
// unit whose pieces all end their workers' lists (WorkSegment::merge_by_all) is merged by all of
// them: each waits for the count and merges a slice (MergeIfLastPiece). CTAs
// also zero the query tokens of CUDA-graph padding rows.
//
// Eager plans of co-read groups may run two workers per CTA (member pairs,
// WorkPlanView::member_pair_offset): two consumer warpgroups over one K/V
// stream, one CTA per SM (kGroups; PairWalk).
//
// K/V rows outside the segment's key range are never read (zero-filled), so
// NaN in unused pool slots cannot leak through 0 * NaN.
#ifndef ATTENTION_KERNEL_PAGED_ATTENTION_KERNEL_CUH_
#define ATTENTION_KERNEL_PAGED_ATTENTION_KERNEL_CUH_

#include <cuda.h>  // CUtensorMap (types only: the encoder comes through cudart)
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "attention/kernel/decode_consumers.cuh"
#include "attention/kernel/general_consumers.cuh"
#include "attention/kernel/kernel_traits.cuh"
#include "attention/kernel/kv_producer.cuh"
#include "attention/kernel/merge_partials.cuh"
#include "attention/kernel/paged_attention_kernel.h"
#include "attention/kernel/tile_math.cuh"
#include "attention/planner/work_plan.h"

namespace paged_attention {
namespace attention_kernel {

// kTreeMasks: the instantiation for plans with tree masks
// (AttentionMetadata::tree_mask); the other one never looks at them.
// kDecode: the decode kernel (KernelTraits), for plans of units of at most
// DecodeMaxRows rows and no tree masks. kPairedTiles: two key tiles per
// softmax step for units of four row blocks (HasPairedTilesKernel); with
// kDeepRing, five stages and one query tile (kDeepRingStages) for plans whose
// units share K/V. The ring changes when tiles land, not what is computed.
// kKvHeadPairs: the head_dim 128 decode kernel over head_dim 64 plans of KV
// head pairs (WorkPlanView::kv_heads_per_unit): q, out and the partials have
// rows of 64, each in its KV head's half of the kernel's 128 columns.
// kGroups 2 (member pairs, the general deep ring): CTA c runs workers c and
// c + gridDim.x (WorkPlanView::member_pair_offset, the grid) as two consumer
// warpgroups over one K/V stream (KernelTraits, ConsumeSegments), one CTA
// per SM.
template <typename T, int kHeadDim, bool kTreeMasks, bool kDecode, bool kPairedTiles,
          bool kDeepRing, bool kKvHeadPairs = false, int kGroups = 1>
__global__ void __launch_bounds__((CtaThreads<kHeadDim, kDeepRing, kGroups>()),
                                  kGroups == 1 ? 2 : 1)
    PagedAttentionKernel(const __grid_constant__ PagedAttentionParams p) {
  using Traits = KernelTraits<kHeadDim, kDecode, kDeepRing, kGroups>;
  static_assert(!(kDecode && kTreeMasks), "tree plans take the general kernel");
  static_assert(!kKvHeadPairs || (kDecode && kHeadDim == 128),
                "KV head pairs: the head_dim 128 decode kernel");
  static_assert(kGroups == 1 || (kDeepRing && !kTreeMasks), "member pairs: the general deep ring");
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  // Tiles start 1024-byte aligned (the 128-byte swizzle's period), whatever
  // the dynamic shared memory's own alignment.
  uint8_t* smem = smem_raw + ((1024 - SmemAddress(smem_raw) % 1024) % 1024);
  // Query tiles, scratch, merge state and fused-merge flag: one set per
  // consumer group.
  T* q_smem = reinterpret_cast<T*>(smem);
  T* k_ring = q_smem + kGroups * Traits::kQueryTiles * Traits::kQElems;
  T* v_ring = k_ring + Traits::kStages * Traits::kTileElems;
  float* scratch = reinterpret_cast<float*>(v_ring + Traits::kStages * Traits::kTileElems);
  float* merge_state = scratch + kGroups * (Traits::kScratchBytes / 4);
  uint64_t* full =
      reinterpret_cast<uint64_t*>(merge_state + kGroups * 2 * Traits::kMergeStateFloats);
  uint64_t* empty = full + Traits::kStages;
  // The decode kernel's: query_full[2], fold_full, fold_free (ConsumeDecodeSegments).
  uint64_t* decode_barriers = empty + Traits::kStages;
  auto* merge_flag =
      reinterpret_cast<FusedMergeFlag*>(reinterpret_cast<uint8_t*>(full) + Traits::kBarrierBytes);

  // The merge step may launch now (it waits for this grid's end before it
  // reads anything): its launch overlaps this kernel instead of following it.
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  if (p.plan.max_zero_fill_tokens > 0) {  // a CUDA-graph capacity with padding rows
    ZeroFillPadding<T>(p, kKvHeadPairs ? kHeadDim / 2 : kHeadDim, blockIdx.x, gridDim.x,
                       CtaThreads<kHeadDim, kDeepRing, kGroups>(), threadIdx.x);
  }
  const int segment_begin = p.plan.worker_begin[blockIdx.x];
  const int segment_end = p.plan.worker_begin[blockIdx.x + 1];
  // The partner of a member pair (kGroups 2), or none.
  const int partner = blockIdx.x + gridDim.x;
  const bool has_partner = kGroups > 1 && partner < p.plan.num_workers;
  const int partner_begin = has_partner ? p.plan.worker_begin[partner] : 0;
  const int partner_end = has_partner ? p.plan.worker_begin[partner + 1] : 0;
  if (segment_begin >= segment_end && partner_begin >= partner_end) return;  // idle (whole CTA)

  if (threadIdx.x == 0) {
#pragma unroll
    for (int stage = 0; stage < Traits::kStages; ++stage) {
      MbarrierInit(&full[stage], 32);  // one cp.async arrival per producer lane
      // Every consumer lane of every group (WarpArrive).
      MbarrierInit(&empty[stage], kGroups * Traits::kConsumerThreads);
    }
    if constexpr (kDecode) {
      MbarrierInit(&decode_barriers[0], 32);  // a query tile: one cp.async arrival per lane
      MbarrierInit(&decode_barriers[1], 32);  // of the warp that loads it
      MbarrierInit(&decode_barriers[2], Traits::kConsumerThreads);  // fold_full: every key way
      MbarrierInit(&decode_barriers[3], 32);  // fold_free: the folder's lanes (WarpArrive)
    }
  }
  __syncthreads();  // the last CTA-wide barrier: roles split below
  constexpr bool kSplitRegisters = SplitsRegisters(kHeadDim, kDeepRing);
  constexpr int kConsumers = kGroups * Traits::kConsumerThreads;  // threads 0 .. kConsumers - 1
  if (threadIdx.x >= kConsumers) {
    if constexpr (kSplitRegisters) {
#if PA_HAS_WGMMA
      asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(ProducerRegisters(kDeepRing)));
#endif
      if (threadIdx.x >= kConsumers + 32) return;  // one warp produces
    }
    if (p.tma_box_rows > 0 && threadIdx.x == kConsumers) {
      PrefetchTmaDescriptor(&p.k_tma);
      PrefetchTmaDescriptor(&p.v_tma);
    }
    ProduceSegments<T, kHeadDim, kDecode, kDeepRing, kGroups>(
        p, segment_begin, segment_end, partner_begin, partner_end, k_ring, v_ring, full, empty);
  } else {
#if PA_HAS_WGMMA
    if constexpr (kSplitRegisters) {
      asm volatile(
          "setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(ConsumerRegisters(kDeepRing, kGroups)));
    }
#endif
    if constexpr (kDecode) {
      ConsumeDecodeSegments<T, kHeadDim, kKvHeadPairs>(p, segment_begin, segment_end, q_smem,
                                                       k_ring, v_ring, scratch, merge_state, full,
                                                       empty, decode_barriers, merge_flag);
    } else if constexpr (kGroups == 1) {
      ConsumeSegments<T, kHeadDim, kTreeMasks, kPairedTiles, kDeepRing>(
          p, segment_begin, segment_end, 0, 0, q_smem, k_ring, v_ring, scratch, merge_state, full,
          empty, merge_flag);
    } else {
      // Group 1 runs the partner's segments, with the CTA's worker as its partner.
      const int group = threadIdx.x / Traits::kConsumerThreads;
      ConsumeSegments<T, kHeadDim, kTreeMasks, kPairedTiles, kDeepRing, kGroups>(
          p, group == 0 ? segment_begin : partner_begin, group == 0 ? segment_end : partner_end,
          group == 0 ? partner_begin : segment_begin, group == 0 ? partner_end : segment_end,
          q_smem + group * Traits::kQueryTiles * Traits::kQElems, k_ring, v_ring,
          scratch + group * (Traits::kScratchBytes / 4),
          merge_state + group * 2 * Traits::kMergeStateFloats, full, empty, merge_flag + group);
    }
  }
}

}  // namespace attention_kernel

// The kernel of (kDType, kHeadDim, kTreeMasks, kDecode, kPairedTiles,
// kDeepRing) and its dynamic shared memory, allowed once per process (not a
// stream operation: also fine during graph capture).
template <DType kDType, int kHeadDim, bool kTreeMasks, bool kDecode, bool kPairedTiles = false,
          bool kDeepRing = false, bool kKvHeadPairs = false, int kGroups = 1>
cudaError_t ConfiguredKernel(void (**kernel)(PagedAttentionParams), int* threads, int* smem_bytes) {
  using T = typename attention_kernel::CudaType<kDType>::Type;
  *kernel = attention_kernel::PagedAttentionKernel<T, kHeadDim, kTreeMasks, kDecode, kPairedTiles,
                                                   kDeepRing, kKvHeadPairs, kGroups>;
  *threads = attention_kernel::CtaThreads<kHeadDim, kDeepRing, kGroups>();
  *smem_bytes = attention_kernel::KernelTraits<kHeadDim, kDecode, kDeepRing, kGroups>::kSmemBytes;
  static const cudaError_t configured =
      cudaFuncSetAttribute(*kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, *smem_bytes);
  return configured;
}

// The instantiations a (dtype, head_dim) has (*DeepRing: the paired-tiles
// kernels with kDeepRing, for compute-bound plans; *MemberPairs: the general
// one's CTAs of two consumer warpgroups, for eager plans with member pairs;
// kDecodeKvHeadPairs: head_dim 64's plans of KV head pairs, run by the
// head_dim 128 decode kernel).
enum class KernelVariant {
  kGeneral,
  kGeneralPaired,
  kGeneralPairedDeepRing,
  kGeneralPairedDeepRingMemberPairs,
  kTreeMasks,
  kTreeMasksPaired,
  kTreeMasksPairedDeepRing,
  kDecode,
  kDecodeKvHeadPairs
};
constexpr KernelVariant kKernelVariants[] = {KernelVariant::kGeneral,
                                             KernelVariant::kGeneralPaired,
                                             KernelVariant::kGeneralPairedDeepRing,
                                             KernelVariant::kGeneralPairedDeepRingMemberPairs,
                                             KernelVariant::kTreeMasks,
                                             KernelVariant::kTreeMasksPaired,
                                             KernelVariant::kTreeMasksPairedDeepRing,
                                             KernelVariant::kDecode,
                                             KernelVariant::kDecodeKvHeadPairs};

template <DType kDType, int kHeadDim>
cudaError_t ConfiguredVariant(KernelVariant variant, void (**kernel)(PagedAttentionParams),
                              int* threads, int* smem_bytes) {
  constexpr bool kPaired = attention_kernel::HasPairedTilesKernel(kHeadDim);
  switch (variant) {
    case KernelVariant::kTreeMasksPairedDeepRing:
      if constexpr (kPaired) {
        return ConfiguredKernel<kDType, kHeadDim, true, false, true, true>(kernel, threads,
                                                                           smem_bytes);
      }
      [[fallthrough]];  // no paired kernels at this head_dim: the plain tree kernel
    case KernelVariant::kTreeMasksPaired:
      if constexpr (kPaired) {
        return ConfiguredKernel<kDType, kHeadDim, true, false, true>(kernel, threads, smem_bytes);
      } else {
        return ConfiguredKernel<kDType, kHeadDim, true, false>(kernel, threads, smem_bytes);
      }
    case KernelVariant::kTreeMasks:
      return ConfiguredKernel<kDType, kHeadDim, true, false>(kernel, threads, smem_bytes);
    case KernelVariant::kGeneralPairedDeepRingMemberPairs:
      if constexpr (kPaired) {
        return ConfiguredKernel<kDType, kHeadDim, false, false, true, true, false, 2>(
            kernel, threads, smem_bytes);
      }
      break;
    case KernelVariant::kGeneralPairedDeepRing:
      if constexpr (kPaired) {
        return ConfiguredKernel<kDType, kHeadDim, false, false, true, true>(kernel, threads,
                                                                            smem_bytes);
      }
      break;
    case KernelVariant::kGeneralPaired:
      if constexpr (kPaired) {
        return ConfiguredKernel<kDType, kHeadDim, false, false, true>(kernel, threads, smem_bytes);
      }
      break;
    case KernelVariant::kDecode:
      if constexpr (attention_kernel::HasDecodeKernel(kHeadDim)) {
        return ConfiguredKernel<kDType, kHeadDim, false, true>(kernel, threads, smem_bytes);
      }
      break;
    case KernelVariant::kDecodeKvHeadPairs:
      if constexpr (kHeadDim == 64) {
        return ConfiguredKernel<kDType, 2 * kHeadDim, false, true, false, false, true>(
            kernel, threads, smem_bytes);
      }
      break;
    case KernelVariant::kGeneral:
      break;
  }
  return ConfiguredKernel<kDType, kHeadDim, false, false>(kernel, threads, smem_bytes);
}

// The instantiation for `params`: with tree masks exactly when it has them,
// else the decode kernel when every unit fits it (max_unit_rows), else the
// general one; the paired-tiles form of the general and tree kernels when a
// unit may have four row blocks, with the deep ring when a request's units
// may share K/V (max_request_rows > kUnitRows: compute-bound). A unit of at
// most 32 rows runs the same arithmetic in every kernel, and a larger one
// always runs a paired kernel where the head_dim has one (a CUDA-graph
// capacity's max_unit_rows is at least the live batch's), whose two rings
// compute alike, so the choice does not change results (an eager launch and
// a replay at a larger capacity can choose differently).
//
// Plans of KV head pairs (head_dim 64, kv_heads_per_unit 2) take the head_dim
// 128 decode kernel's pairs instantiation, whatever else holds: nothing else
// runs them (the planner and CanImplement allow pairs only for units the
// decode kernel folds and merges itself, without tree masks).
template <int kHeadDim>
KernelVariant VariantFor(const PagedAttentionParams& params) {
  if (kHeadDim == 64 && params.kv_heads_per_unit == 2) return KernelVariant::kDecodeKvHeadPairs;
  const bool paired = attention_kernel::HasPairedTilesKernel(kHeadDim) &&
                      params.max_unit_rows >= attention_kernel::kPairedTilesMinRows;
  const bool deep_ring = paired && params.max_request_rows > kUnitRows;
  if (params.tree_mask != nullptr) {
    return deep_ring ? KernelVariant::kTreeMasksPairedDeepRing
           : paired  ? KernelVariant::kTreeMasksPaired
                     : KernelVariant::kTreeMasks;
  }
  if (attention_kernel::HasDecodeKernel(kHeadDim) &&
      params.max_unit_rows <= attention_kernel::DecodeMaxRows(kHeadDim)) {
    return KernelVariant::kDecode;
  }
  // Member pairs launch member_pair_offset CTAs, CTA c running workers c and
  // c + member_pair_offset: that covers every worker only if the offset is at
  // least half of them. The planner's offsets are (its workers past twice the
  // offset are idle, and an eager view's num_workers ends at the last busy
  // one); a caller's smaller one runs one worker per CTA instead.
  if (deep_ring && params.plan.member_pair_offset > 0 &&
      2 * int64_t{params.plan.member_pair_offset} >= params.plan.num_workers) {
    return KernelVariant::kGeneralPairedDeepRingMemberPairs;
  }
  return deep_ring ? KernelVariant::kGeneralPairedDeepRing
         : paired  ? KernelVariant::kGeneralPaired
                   : KernelVariant::kGeneral;
}

// Workers one CTA of `variant` runs.
constexpr int WorkersPerCta(KernelVariant variant) {
  return variant == KernelVariant::kGeneralPairedDeepRingMemberPairs ? 2 : 1;
}

// The fewest workers per SM over the instantiations, as CTAs per SM (the
// planner's geometry must hold for each).
template <DType kDType, int kHeadDim>
cudaError_t PagedAttentionKernelOccupancy(int* ctas_per_sm) {
  int fewest = 1 << 30;
  for (const KernelVariant variant : kKernelVariants) {
    void (*kernel)(PagedAttentionParams) = nullptr;
    int threads = 0;
    int smem_bytes = 0;
    if (const cudaError_t error =
            ConfiguredVariant<kDType, kHeadDim>(variant, &kernel, &threads, &smem_bytes);
        error != cudaSuccess) {
      return error;
    }
    int ctas = 0;
    if (const cudaError_t error =
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&ctas, kernel, threads, smem_bytes);
        error != cudaSuccess) {
      return error;
    }
    if (attention_kernel::HasPairedTilesKernel(kHeadDim)) ctas *= WorkersPerCta(variant);
    fewest = ctas < fewest ? ctas : fewest;
  }
  *ctas_per_sm = fewest;
  return cudaSuccess;
}

static_assert(sizeof(TmaDescriptor) == sizeof(CUtensorMap) &&
                  alignof(TmaDescriptor) == alignof(CUtensorMap),
              "TmaDescriptor mirrors CUtensorMap");

// Fills params->{k,v}_tma and tma_box_rows when TMA can stream this call's
// pools, else leaves tma_box_rows 0 (every tile by cp.async). The maps of the
// last pools seen on this thread are reused: encoding is host work only, but
// it is not free, and an engine launches on the same pools every step.
template <typename T, int kHeadDim>
void PrepareTma(PagedAttentionParams* params) {
  using Traits = attention_kernel::KernelTraits<kHeadDim>;
  params->tma_box_rows = 0;
  const int box_rows = TmaBoxRows(params->page_size, Traits::kKeysPerTile);
  const uint64_t slots = uint64_t(params->num_pages) * uint64_t(params->page_size);
  if (params->use_tma == 0 || box_rows == 0 || slots == 0 || slots > (uint64_t{1} << 32)) return;

  static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      cudaGetLastError();  // no TMA encoder: cp.async only, and no sticky error
      fn = nullptr;
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  if (encode == nullptr) return;

  struct Cached {
    const void* k = nullptr;
    const void* v = nullptr;
    uint64_t slots = 0;
    int32_t kv_heads = 0;
    int32_t box_rows = 0;
    TmaDescriptor k_tma, v_tma;
  };
  static thread_local Cached cached;
  if (cached.k != params->k_cache || cached.v != params->v_cache || cached.slots != slots ||
      cached.kv_heads != params->num_kv_heads || cached.box_rows != box_rows) {
    // (head_dim, kv_head, slot) with the pool's strides; boxes of one
    // 64-column block x one head x box_rows slots, 128-byte swizzled.
    const cuuint64_t dims[3] = {cuuint64_t(kHeadDim), cuuint64_t(params->num_kv_heads), slots};
    const cuuint64_t strides[2] = {cuuint64_t(kHeadDim) * sizeof(T),
                                   cuuint64_t(params->num_kv_heads) * kHeadDim * sizeof(T)};
    const cuuint32_t box[3] = {64, 1, cuuint32_t(box_rows)};
    const cuuint32_t element_strides[3] = {1, 1, 1};
    const CUtensorMapDataType type = std::is_same<T, __half>::value
                                         ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                         : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    for (const bool is_v : {false, true}) {
      void* pool = const_cast<void*>(is_v ? params->v_cache : params->k_cache);
      auto* map = reinterpret_cast<CUtensorMap*>(is_v ? &cached.v_tma : &cached.k_tma);
      if (encode(map, type, 3, pool, dims, strides, box, element_strides,
                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
        cached = Cached{};
        return;
      }
    }
    cached.k = params->k_cache;
    cached.v = params->v_cache;
    cached.slots = slots;
    cached.kv_heads = params->num_kv_heads;
    cached.box_rows = box_rows;
  }
  params->k_tma = cached.k_tma;
  params->v_tma = cached.v_tma;
  params->tma_box_rows = box_rows;
}

// CTAs of the (kDType, kHeadDim) decode kernel `kVariant` the current device
// holds at once (occupancy x SMs), asked once per process; 0 when the query
// fails (no cooperative launch then).
template <DType kDType, int kHeadDim, KernelVariant kVariant>
int ResidentDecodeCtas(void (*kernel)(PagedAttentionParams), int threads, int smem_bytes) {
  static const int resident = [&] {
    int device = 0, sms = 0, per_sm = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem_bytes) !=
            cudaSuccess) {
      cudaGetLastError();  // the failed query leaves no sticky error
      return 0;
    }
    return per_sm * sms;
  }();
  return resident;
}

template <DType kDType, int kHeadDim>
cudaError_t LaunchPagedAttentionKernel(const PagedAttentionParams& params, cudaStream_t stream) {
  using T = typename attention_kernel::CudaType<kDType>::Type;
  void (*kernel)(PagedAttentionParams) = nullptr;
  int threads = 0;
  int smem_bytes = 0;
  if (const cudaError_t error = ConfiguredVariant<kDType, kHeadDim>(VariantFor<kHeadDim>(params),
                                                                    &kernel, &threads, &smem_bytes);
      error != cudaSuccess) {
    return error;
  }
  if (params.plan.num_workers == 0) return cudaSuccess;
  PagedAttentionParams launch_params = params;
  const KernelVariant variant = VariantFor<kHeadDim>(params);
  // (Decode kernels stream by cp.async only; the pairs' params describe head
  // pairs, which no head_dim 64 tensor map would.)
  if (variant != KernelVariant::kDecodeKvHeadPairs) PrepareTma<T, kHeadDim>(&launch_params);
  const bool decode =
      variant == KernelVariant::kDecode || variant == KernelVariant::kDecodeKvHeadPairs;
  const int resident_decode_ctas =
      !decode ? 0
      : variant == KernelVariant::kDecode
          ? ResidentDecodeCtas<kDType, kHeadDim, KernelVariant::kDecode>(kernel, threads,
                                                                         smem_bytes)
          : ResidentDecodeCtas<kDType, kHeadDim, KernelVariant::kDecodeKvHeadPairs>(kernel, threads,
                                                                                    smem_bytes);
  // A decode plan whose merges all stay in this kernel (no merge kernel after
  // it) and whose grid fits on the GPU at once launches cooperatively: every
  // CTA is then resident, so the pieces of a unit may wait for each other and
  // spread its merge (MergeIfLastPiece). Else the unit's last piece merges it.
  if (decode && params.plan.max_merge_tasks > 0 &&
      MergedByAttentionKernel(params.max_unit_rows, params.kv_heads_per_unit) &&
      params.plan.num_workers <= resident_decode_ctas) {
    launch_params.cooperative = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(params.plan.num_workers);
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = smem_bytes;
    config.stream = stream;
    cudaLaunchAttribute attribute;
    attribute.id = cudaLaunchAttributeCooperative;
    attribute.val.cooperative = 1;
    config.attrs = &attribute;
    config.numAttrs = 1;
    const cudaError_t error = cudaLaunchKernelEx(&config, kernel, launch_params);
    // A GPU that holds fewer CTAs than the occupancy query said (another
    // device, a partitioned one): launch without the waits instead.
    if (error != cudaErrorCooperativeLaunchTooLarge) return error;
    cudaGetLastError();
    launch_params.cooperative = 0;
  }
  // Member pairs: CTA c runs workers c and c + member_pair_offset.
  const int ctas = variant == KernelVariant::kGeneralPairedDeepRingMemberPairs
                       ? params.plan.member_pair_offset
                       : params.plan.num_workers;
  kernel<<<ctas, threads, smem_bytes, stream>>>(launch_params);
  return cudaGetLastError();
}

#define PA_DEFINE_ATTENTION_KERNEL(dtype, head_dim)                                             \
  template cudaError_t LaunchPagedAttentionKernel<dtype, head_dim>(const PagedAttentionParams&, \
                                                                   cudaStream_t);               \
  template cudaError_t PagedAttentionKernelOccupancy<dtype, head_dim>(int*)

}  // namespace paged_attention

#endif  // ATTENTION_KERNEL_PAGED_ATTENTION_KERNEL_CUH_
