// The one-tile floor: how long does the shortest correct kernel take to answer
// the benchmark's one-tile call (BM_PagedAttentionOneTile: batch 1, q 1, 32/8
// heads, head_dim 128, 64 keys in 4 pages of 16, bf16, L2 warm), timed as the
// benchmark times it (a CUDA graph of the launch, events around each replay,
// median)? The issue's bar is 6 us; ours takes 7.2 (NOTES.md "Speed").
//
// Kernels, each on a grid of 8 CTAs (one per KV head, as our plan's 8 workers)
// unless said:
//   empty       nothing: the launch floor of this timing (one config as ours,
//               160 threads and 91 KB of dynamic shared memory; one as
//               `direct`'s, 256 threads); and on 264 CTAs of ours, the grid
//               of a graph captured with DeviceMetadata's capacity view (every
//               worker gets a CTA; the benchmark's graphs launch the plan's
//               worker span, 8 CTAs for this call)
//   chain       one thread walks our plan's dependent loads: worker_begin,
//               its segment, the page id, one K element, one store
//   direct      the whole answer by plain code, 256 threads: each issues its
//               K and V loads at once (a quarter row of a key each, 8 x 16
//               bytes in flight), S by scalar FMAs with K in registers and the
//               query's quarter read by a whole warp at once (one shared-memory
//               wavefront), the softmax by two warps, O by column pairs over
//               four key groups; bf16 out
//   direct_plan `direct` behind the plan's two dependent loads (worker_begin,
//               then the segment), as a graph-replayable plan reads them
//   split2/4    `direct`'s arithmetic over 2 or 4 CTAs a KV head (16 or 32
//               CTAs in clusters of 2 or 4), merged in distributed shared
//               memory (Split, below)
// `direct`, `direct_plan` and `split` are checked against a float64 reference
// before they are timed. Each
// kernel is timed three ways: `warm` (nothing before the start event: the
// benchmark's warm timing before `QW`, which also timed the host's graph
// submission), `held` (behind a 50-us stream hold: its warm timing since) and
// `flush` (behind an L2 flush: its cold timing).
//
// Not part of the build: on this machine
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a \
//       -o one_tile_floor tools/benchmarks/probes/one_tile_floor.cu
// then run the binary on the GPU machine (h200_2026-12-05_one_tile/,
// h200_2026-12-06_peers_at_head/).
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "check_cuda.h"

namespace {

constexpr int kQHeads = 32, kKvHeads = 8, kGroup = kQHeads / kKvHeads;
constexpr int kHeadDim = 128, kPageSize = 16, kKeys = 64, kPages = kKeys / kPageSize;
constexpr int kPoolPages = 4096;  // pages of the pool; the request's 4 are shuffled in it
constexpr int kThreads = 256;     // `direct`: four threads per key (a quarter row each)
static_assert(kThreads == 4 * kKeys && kGroup == 4 && kThreads / 64 == kGroup, "thread roles");

// The plan words `direct_plan` and `chain` read (the fields our WorkSegment
// has that this call needs).
struct Segment {
  int32_t request, kv_head, key_begin, key_end, q_begin, q_len, k_len, reserved;
};

// `direct`'s steps, stamped by thread 0 (clock64): entry, loads in shared
// memory (first barrier), its S values (a branch on their sum, so the stamp
// waits for them), row maxima, P and sums, O's groups, store issued.
constexpr int kStamps = 7;
constexpr const char* kStampNames[kStamps] = {"entry", "loads",    "s",    "max",
                                              "p+sum", "o groups", "store"};

struct Args {
  const int* worker_begin;   // [9]
  const Segment* segments;   // [8]
  const int* page_table;     // [1][kPages]
  const int* cache_seqlens;  // [1]
  const __nv_bfloat16* q;    // [1][kQHeads][kHeadDim]
  const __nv_bfloat16* k;    // [kPoolPages][kPageSize][kKvHeads][kHeadDim]
  const __nv_bfloat16* v;
  __nv_bfloat16* out;        // [1][kQHeads][kHeadDim]
  float softmax_scale_log2;  // scale * log2(e)
  long long* stamps;         // [CTA][kStamps]: `direct`'s clock64 at its steps
};

__global__ void Empty(Args a) {
  if (threadIdx.x == 0 && blockIdx.x == 100000) a.out[0] = __float2bfloat16(1.f);
}

__global__ void Chain(Args a) {
  if (threadIdx.x != 0) return;
  const int s = a.worker_begin[blockIdx.x];
  const Segment seg = a.segments[s];
  const int page = a.page_table[seg.request * kPages + seg.key_begin / kPageSize];
  const __nv_bfloat16 key = a.k[(int64_t{page} * kPageSize * kKvHeads + seg.kv_head) * kHeadDim];
  a.out[(seg.q_begin * kQHeads + seg.kv_head * kGroup) * kHeadDim] = key;
}

// What `direct` and `split` share: a CTA's answer for keys first_key ..
// first_key + kCtaKeys - 1 of one KV head, four threads a key, left in `sh`
// unnormalised: O by key group, each warp's row maxima and the row sums at
// the CTA's maxima.
template <int kCtaKeys>
struct OneTileShared {
  static constexpr int kThreads = 4 * kCtaKeys;
  static constexpr int kQuarter = kHeadDim / 4;           // a thread's slice of a K or V row
  static constexpr int kKeyWarps = (kCtaKeys + 31) / 32;  // the softmax's warps
  static constexpr int kKeyGroups = kThreads / 64;        // O: 64 column pairs x key groups
  static_assert(kThreads % 64 == 0 && kCtaKeys % kKeyGroups == 0, "thread roles");
  // The query by quarter of its columns: the threads of quarter q read only
  // q_s[q], every lane the same float4 (one shared-memory wavefront).
  __align__(16) float q_s[4][kGroup][kQuarter];
  __align__(16) __nv_bfloat16 v_s[kCtaKeys][kHeadDim];
  __align__(16) float s_part[4][kCtaKeys][kGroup];  // S by quarter of the columns
  __align__(16) float p_s[kCtaKeys][kGroup];
  __align__(16) float o_s[kKeyGroups][kGroup][kHeadDim];
  float max_s[kKeyWarps][kGroup], sum_s[kKeyWarps][kGroup];
};

// `stamp` (thread 0's clock64 at each step) or nullptr.
template <int kCtaKeys>
__device__ __forceinline__ void AttendKeys(const Args& a, int kv_head, int first_key, int k_len,
                                           int q_token, OneTileShared<kCtaKeys>& sh,
                                           long long* stamp) {
  using Sh = OneTileShared<kCtaKeys>;
  constexpr int kQuarter = Sh::kQuarter, kKeyWarps = Sh::kKeyWarps, kKeyGroups = Sh::kKeyGroups;
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  // Loads, all at once: quarter t / kCtaKeys of key t % kCtaKeys's K row into
  // registers; quarter t % 4 of key t / 4's V row into shared memory (a layout
  // with fewer bank conflicts for its stores); threads 0-63 the query, 16
  // bytes each.
  const int k_key = t % kCtaKeys, k_quarter = t / kCtaKeys;
  const int v_key = t / 4, v_quarter = t % 4;
  auto row_of = [&](int key, int quarter) {
    const int page = a.page_table[key / kPageSize];
    return ((int64_t{page} * kPageSize + key % kPageSize) * kKvHeads + kv_head) * kHeadDim +
           quarter * kQuarter;
  };
  const bool k_live = first_key + k_key < k_len, v_live = first_key + v_key < k_len;
  const int64_t k_row_at = row_of(first_key + k_key, k_quarter);
  const int64_t v_row_at = row_of(first_key + v_key, v_quarter);
  uint4 k_row[4], v_row[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    k_row[i] = k_live ? reinterpret_cast<const uint4*>(a.k + k_row_at)[i] : make_uint4(0, 0, 0, 0);
    v_row[i] = v_live ? reinterpret_cast<const uint4*>(a.v + v_row_at)[i] : make_uint4(0, 0, 0, 0);
  }
  if (t < kGroup * kHeadDim / 8) {
    const int r = t / (kHeadDim / 8), c = (t % (kHeadDim / 8)) * 8;
    const uint4 raw = *reinterpret_cast<const uint4*>(
        a.q + (int64_t{q_token} * kQHeads + kv_head * kGroup + r) * kHeadDim + c);
    const __nv_bfloat16* e = reinterpret_cast<const __nv_bfloat16*>(&raw);
#pragma unroll
    for (int j = 0; j < 8; ++j) sh.q_s[c / kQuarter][r][c % kQuarter + j] = __bfloat162float(e[j]);
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    reinterpret_cast<uint4*>(&sh.v_s[v_key][v_quarter * kQuarter])[i] = v_row[i];
  }
  __syncthreads();
  if (stamp && t == 0) stamp[1] = clock64();

  // S for the thread's key over its quarter of the columns.
  float s[kGroup] = {};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const __nv_bfloat162* e = reinterpret_cast<const __nv_bfloat162*>(&k_row[i]);
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const float2 k01 = __bfloat1622float2(e[2 * j]), k23 = __bfloat1622float2(e[2 * j + 1]);
#pragma unroll
      for (int r = 0; r < kGroup; ++r) {
        const float4 qv = *reinterpret_cast<const float4*>(&sh.q_s[k_quarter][r][i * 8 + j * 4]);
        s[r] = fmaf(qv.x, k01.x, fmaf(qv.y, k01.y, fmaf(qv.z, k23.x, fmaf(qv.w, k23.y, s[r]))));
      }
    }
  }
  *reinterpret_cast<float4*>(sh.s_part[k_quarter][k_key]) = make_float4(s[0], s[1], s[2], s[3]);
  if (stamp && t == 0 && s[0] + s[1] + s[2] + s[3] != 12345.f) stamp[2] = clock64();
  __syncthreads();

  // The softmax by the first kKeyWarps warps (lane t is key t; lanes past the
  // CTA's keys hold -inf so that every lane of a warp takes the shuffles).
  const int key = t;
  const bool live = key < kCtaKeys && first_key + key < k_len;
  float m[kGroup], p[kGroup], l[kGroup];
  if (warp < kKeyWarps) {
    float whole[kGroup] = {};
    if (key < kCtaKeys) {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const float4 part = *reinterpret_cast<const float4*>(sh.s_part[q][key]);
        whole[0] += part.x;
        whole[1] += part.y;
        whole[2] += part.z;
        whole[3] += part.w;
      }
    }
#pragma unroll
    for (int r = 0; r < kGroup; ++r) {
      s[r] = live ? whole[r] * a.softmax_scale_log2 : -INFINITY;
      m[r] = s[r];
#pragma unroll
      for (int o = 1; o < 32; o *= 2) m[r] = fmaxf(m[r], __shfl_xor_sync(~0u, m[r], o));
    }
    if (lane == 0) {
#pragma unroll
      for (int r = 0; r < kGroup; ++r) sh.max_s[warp][r] = m[r];
    }
  }
  __syncthreads();
  if (stamp && t == 0) stamp[3] = clock64();
  if (warp < kKeyWarps) {
#pragma unroll
    for (int r = 0; r < kGroup; ++r) {
      m[r] = sh.max_s[0][r];
#pragma unroll
      for (int w = 1; w < kKeyWarps; ++w) m[r] = fmaxf(m[r], sh.max_s[w][r]);
      p[r] = live ? exp2f(s[r] - m[r]) : 0.f;
      l[r] = p[r];
#pragma unroll
      for (int o = 1; o < 32; o *= 2) l[r] += __shfl_xor_sync(~0u, l[r], o);
    }
    if (key < kCtaKeys) {
      *reinterpret_cast<float4*>(sh.p_s[key]) = make_float4(p[0], p[1], p[2], p[3]);
    }
    if (lane == 0) {
#pragma unroll
      for (int r = 0; r < kGroup; ++r) sh.sum_s[warp][r] = l[r];
    }
  }
  __syncthreads();
  if (stamp && t == 0) stamp[4] = clock64();

  // O, unnormalised: thread t is columns 2 (t % 64) + {0, 1} over key group
  // t / 64 (dead keys have p 0 and V 0).
  const int pair = t % 64, group = t / 64;
  float2 o[kGroup] = {};
#pragma unroll
  for (int j = 0; j < kCtaKeys / kKeyGroups; ++j) {
    const int k = group * (kCtaKeys / kKeyGroups) + j;
    const float2 vk =
        __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&sh.v_s[k][2 * pair]));
    const float4 pk = *reinterpret_cast<const float4*>(sh.p_s[k]);
    const float pr[kGroup] = {pk.x, pk.y, pk.z, pk.w};
#pragma unroll
    for (int r = 0; r < kGroup; ++r) {
      o[r].x = fmaf(pr[r], vk.x, o[r].x);
      o[r].y = fmaf(pr[r], vk.y, o[r].y);
    }
  }
#pragma unroll
  for (int r = 0; r < kGroup; ++r) *reinterpret_cast<float2*>(&sh.o_s[group][r][2 * pair]) = o[r];
}

template <bool kUsePlan>
__global__ void __launch_bounds__(kThreads) Direct(Args a) {
  __shared__ OneTileShared<kKeys> sh;
  const int t = threadIdx.x;
  long long* stamp = a.stamps + blockIdx.x * kStamps;
  if (t == 0) stamp[0] = clock64();
  int kv_head = blockIdx.x, k_len, q_token = 0;
  if constexpr (kUsePlan) {
    const Segment seg = a.segments[a.worker_begin[blockIdx.x]];
    kv_head = seg.kv_head;
    k_len = seg.k_len;
    q_token = seg.q_begin;
  } else {
    k_len = a.cache_seqlens[0];
  }
  AttendKeys<kKeys>(a, kv_head, 0, k_len, q_token, sh, stamp);
  __syncthreads();
  if (t == 0) stamp[5] = clock64();
  {
    const int r = t / 64, pair = t % 64;  // row t / 64, columns 2 (t % 64) + {0, 1}
    const float total = sh.sum_s[0][r] + sh.sum_s[1][r];
    float2 sum = {0, 0};
#pragma unroll
    for (int g = 0; g < kThreads / 64; ++g) {
      const float2 part = *reinterpret_cast<const float2*>(&sh.o_s[g][r][2 * pair]);
      sum.x += part.x;
      sum.y += part.y;
    }
    *reinterpret_cast<__nv_bfloat162*>(
        a.out + (int64_t{q_token} * kQHeads + kv_head * kGroup + r) * kHeadDim + 2 * pair) =
        __floats2bfloat162_rn(sum.x / total, sum.y / total);
  }
  if (t == 0) stamp[6] = clock64();
}

// `split`: `direct`'s arithmetic over a thread block cluster of kSplit CTAs a
// KV head, each on kKeys / kSplit keys (four threads a key, as `direct`), so
// each SM loads and computes 1/kSplit of `direct`'s share. The CTAs' softmax
// states (row maxima and sums by warp, O by key group, all in shared memory)
// merge through distributed shared memory: after a cluster barrier CTA `rank`
// reads every CTA's state for its 1/kSplit of the columns, weighs by
// exp2(m_j - max m) and writes them; a second cluster barrier keeps each CTA's
// shared memory alive until the others have read it. No plan loads (compare
// with `direct`).
template <int kSplit>
__global__ void __cluster_dims__(kSplit, 1, 1) __launch_bounds__(4 * kKeys / kSplit) Split(Args a) {
  namespace cg = cooperative_groups;
  constexpr int kCtaKeys = kKeys / kSplit;
  using Sh = OneTileShared<kCtaKeys>;
  constexpr int kMergeCols = kHeadDim / kSplit;
  static_assert(kGroup * kMergeCols / 2 == Sh::kThreads, "one column pair a thread in the merge");
  __shared__ Sh sh;
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const int t = threadIdx.x, kv_head = blockIdx.x / kSplit;
  AttendKeys<kCtaKeys>(a, kv_head, rank * kCtaKeys, a.cache_seqlens[0], 0, sh, nullptr);
  cluster.sync();  // every CTA's state is in its shared memory

  // The merge of this CTA's columns: thread t is row r, columns c and c + 1.
  const int r = t / (kMergeCols / 2);
  const int c = rank * kMergeCols + 2 * (t % (kMergeCols / 2));
  float m_of[kSplit], l_of[kSplit];
  float2 o_of[kSplit];
#pragma unroll
  for (int j = 0; j < kSplit; ++j) {
    const Sh* other = cluster.map_shared_rank(&sh, j);
    m_of[j] = other->max_s[0][r];
    l_of[j] = other->sum_s[0][r];
#pragma unroll
    for (int w = 1; w < Sh::kKeyWarps; ++w) {
      m_of[j] = fmaxf(m_of[j], other->max_s[w][r]);  // the CTA's max, at which
      l_of[j] += other->sum_s[w][r];                 // every warp's sum was taken
    }
    o_of[j] = make_float2(0.f, 0.f);
#pragma unroll
    for (int g = 0; g < Sh::kKeyGroups; ++g) {
      const float2 part = *reinterpret_cast<const float2*>(&other->o_s[g][r][c]);
      o_of[j].x += part.x;
      o_of[j].y += part.y;
    }
  }
  float top = m_of[0];
#pragma unroll
  for (int j = 1; j < kSplit; ++j) top = fmaxf(top, m_of[j]);
  float total = 0.f;
  float2 sum = {0.f, 0.f};
#pragma unroll
  for (int j = 0; j < kSplit; ++j) {
    const float w = m_of[j] == -INFINITY ? 0.f : exp2f(m_of[j] - top);
    total += w * l_of[j];
    sum.x += w * o_of[j].x;
    sum.y += w * o_of[j].y;
  }
  *reinterpret_cast<__nv_bfloat162*>(a.out + (int64_t{kv_head} * kGroup + r) * kHeadDim + c) =
      __floats2bfloat162_rn(sum.x / total, sum.y / total);
  cluster.sync();  // no CTA leaves while another reads its shared memory
}

// The benchmark's warm timing since `QW` (testing/random_fill.cu's HoldStream):
// one thread spins on %globaltimer so that the host has submitted the graph
// before the start event is reached, and the events time the GPU alone.
__global__ void Hold(uint64_t nanoseconds) {
  uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(500);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}

__global__ void ReadFlush(const int4* p, size_t n, int* sink) {
  int4 acc = {0, 0, 0, 0};
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    acc.x ^= p[i].x;
  }
  if (acc.x == 0x12345) sink[0] = acc.x;
}

template <typename T>
T* Upload(const std::vector<T>& host) {
  T* device = nullptr;
  CHECK_CUDA(cudaMalloc(&device, host.size() * sizeof(T)));
  CHECK_CUDA(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return device;
}

}  // namespace

int main() {
  const unsigned seed = std::random_device{}();  // fresh data each run (the seed is printed)
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  const size_t pool_elems = size_t{kPoolPages} * kPageSize * kKvHeads * kHeadDim;
  // Every pool element is NaN but the request's rows: a read past them shows.
  std::vector<__nv_bfloat16> q(kQHeads * kHeadDim), k(pool_elems, __float2bfloat16(NAN)),
      v(pool_elems, __float2bfloat16(NAN));
  for (auto& x : q) x = __float2bfloat16(normal(rng));
  std::vector<int> pages(kPoolPages);
  for (int i = 0; i < kPoolPages; ++i) pages[i] = i;
  std::shuffle(pages.begin(), pages.end(), rng);
  std::vector<int> page_table(pages.begin(), pages.begin() + kPages);
  // Pool element of (key, KV head, column 0) for the request.
  auto pool_row = [&](int key, int h) {
    return ((static_cast<size_t>(page_table[key / kPageSize]) * kPageSize + key % kPageSize) *
                kKvHeads +
            h) *
           kHeadDim;
  };
  for (int key = 0; key < kKeys; ++key) {
    for (int h = 0; h < kKvHeads; ++h) {
      for (int d = 0; d < kHeadDim; ++d) {
        k[pool_row(key, h) + d] = __float2bfloat16(normal(rng));
        v[pool_row(key, h) + d] = __float2bfloat16(normal(rng));
      }
    }
  }
  std::vector<int> worker_begin(kKvHeads + 1);
  std::vector<Segment> segments(kKvHeads);
  for (int w = 0; w <= kKvHeads; ++w) worker_begin[w] = w;
  for (int h = 0; h < kKvHeads; ++h) segments[h] = Segment{0, h, 0, kKeys, 0, 1, kKeys, 0};

  Args args{};
  args.worker_begin = Upload(worker_begin);
  args.segments = Upload(segments);
  args.page_table = Upload(page_table);
  args.cache_seqlens = Upload(std::vector<int>{kKeys});
  args.q = Upload(q);
  args.k = Upload(k);
  args.v = Upload(v);
  CHECK_CUDA(cudaMalloc(&args.out, q.size() * sizeof(__nv_bfloat16)));
  CHECK_CUDA(cudaMalloc(&args.stamps, kKvHeads * kStamps * sizeof(long long)));
  const double scale = 1.0 / std::sqrt(double{kHeadDim});
  args.softmax_scale_log2 = static_cast<float>(scale / std::log(2.0));

  // float64 reference of every query head's output.
  std::vector<double> expected(q.size());
  for (int head = 0; head < kQHeads; ++head) {
    const int h = head / kGroup;
    std::vector<double> logits(kKeys);
    double max_logit = -INFINITY;
    for (int key = 0; key < kKeys; ++key) {
      const size_t row = pool_row(key, h);
      double dot = 0;
      for (int d = 0; d < kHeadDim; ++d) {
        dot += double{__bfloat162float(q[head * kHeadDim + d])} * __bfloat162float(k[row + d]);
      }
      logits[key] = dot * scale;
      max_logit = std::max(max_logit, logits[key]);
    }
    double total = 0;
    for (double& x : logits) total += (x = std::exp(x - max_logit));
    for (int d = 0; d < kHeadDim; ++d) {
      double acc = 0;
      for (int key = 0; key < kKeys; ++key) {
        const size_t row = pool_row(key, h);
        acc += logits[key] * __bfloat162float(v[row + d]);
      }
      expected[head * kHeadDim + d] = acc / total;
    }
  }

  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  constexpr int kOurSmem = 91 * 1024;  // the decode kernel's dynamic shared memory
  CHECK_CUDA(cudaFuncSetAttribute(Empty, cudaFuncAttributeMaxDynamicSharedMemorySize, kOurSmem));
  size_t flush_bytes = size_t{256} << 20;
  int4* flush = nullptr;
  int* sink = nullptr;
  CHECK_CUDA(cudaMalloc(&flush, flush_bytes));
  CHECK_CUDA(cudaMemset(flush, 0, flush_bytes));
  CHECK_CUDA(cudaMalloc(&sink, 4));

  auto check = [&](const char* name, auto launch) {
    CHECK_CUDA(cudaMemset(args.out, 0xff, q.size() * sizeof(__nv_bfloat16)));  // NaN
    launch();
    CHECK_CUDA(cudaStreamSynchronize(stream));
    std::vector<__nv_bfloat16> out(q.size());
    CHECK_CUDA(
        cudaMemcpy(out.data(), args.out, out.size() * sizeof(out[0]), cudaMemcpyDeviceToHost));
    double worst = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      const double error = std::fabs(double{__bfloat162float(out[i])} - expected[i]);
      worst = std::isnan(error) ? INFINITY : std::max(worst, error);
    }
    // bf16 output: half an ulp of values below 4 is <= 2^-7.
    std::printf("%-12s max abs error %.3g against float64 (%s)\n", name, worst,
                worst <= 1.0 / 128 ? "ok" : "FAILED");
    return worst <= 1.0 / 128;
  };
  // Before each timed replay: nothing (`warm`, the benchmark's warm timing
  // before `QW`), a 50-us hold (`held`, its warm timing since), or an L2 flush
  // (`flush`, its cold timing).
  enum class Before { kNothing, kHold, kFlush };
  constexpr const char* kBeforeNames[] = {"warm", "held", "flush"};
  auto measure = [&](const char* name, auto launch, Before before) {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    launch();
    CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
    CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    for (int i = 0; i < 5; ++i) CHECK_CUDA(cudaGraphLaunch(exec, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    std::vector<float> us;
    for (int i = 0; i < 101; ++i) {
      if (before == Before::kFlush)
        ReadFlush<<<264, 256, 0, stream>>>(flush, flush_bytes / 16, sink);
      if (before == Before::kHold) Hold<<<1, 1, 0, stream>>>(50'000);
      CHECK_CUDA(cudaEventRecord(start, stream));
      CHECK_CUDA(cudaGraphLaunch(exec, stream));
      CHECK_CUDA(cudaEventRecord(stop, stream));
      CHECK_CUDA(cudaEventSynchronize(stop));
      float ms;
      CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
      us.push_back(ms * 1000);
    }
    std::sort(us.begin(), us.end());
    std::printf("%-40s %-6s median %.2f us (p10 %.2f, p90 %.2f)\n", name,
                kBeforeNames[static_cast<int>(before)], us[50], us[10], us[90]);
    CHECK_CUDA(cudaEventDestroy(start));
    CHECK_CUDA(cudaEventDestroy(stop));
    CHECK_CUDA(cudaGraphExecDestroy(exec));
    CHECK_CUDA(cudaGraphDestroy(graph));
  };

  // `direct`'s stamps of the last replay that `measure` ran.
  auto print_stamps = [&](const char* name) {
    std::vector<long long> stamps(kKvHeads * kStamps);
    CHECK_CUDA(cudaMemcpy(stamps.data(), args.stamps, stamps.size() * sizeof(long long),
                          cudaMemcpyDeviceToHost));
    std::printf("  %s's last replay, cycles since entry (median over the %d CTAs):", name,
                kKvHeads);
    for (int i = 1; i < kStamps; ++i) {
      std::vector<long long> since(kKvHeads);
      for (int c = 0; c < kKvHeads; ++c) since[c] = stamps[c * kStamps + i] - stamps[c * kStamps];
      std::sort(since.begin(), since.end());
      std::printf(" %s %lld", kStampNames[i], since[kKvHeads / 2]);
    }
    std::printf("\n");
  };

  auto direct = [&] { Direct<false><<<kKvHeads, kThreads, 0, stream>>>(args); };
  auto direct_plan = [&] { Direct<true><<<kKvHeads, kThreads, 0, stream>>>(args); };
  auto split2 = [&] { Split<2><<<kKvHeads * 2, 4 * kKeys / 2, 0, stream>>>(args); };
  auto split4 = [&] { Split<4><<<kKvHeads * 4, 4 * kKeys / 4, 0, stream>>>(args); };
  bool ok = check("direct", direct);
  ok = check("direct_plan", direct_plan) && ok;
  ok = check("split2", split2) && ok;
  ok = check("split4", split4) && ok;
  for (Before before : {Before::kNothing, Before::kHold, Before::kFlush}) {
    measure(
        "empty, 8 x 160, 91 KB dynamic smem",
        [&] { Empty<<<kKvHeads, 160, kOurSmem, stream>>>(args); }, before);
    measure(
        "empty, 8 x 256", [&] { Empty<<<kKvHeads, kThreads, 0, stream>>>(args); }, before);
    measure(
        "empty, 264 x 160, 91 KB dynamic smem",
        [&] { Empty<<<264, 160, kOurSmem, stream>>>(args); }, before);
    measure(
        "chain (plan, page id, K, store)", [&] { Chain<<<kKvHeads, 32, 0, stream>>>(args); },
        before);
    measure("direct", direct, before);
    print_stamps("direct");
    measure("direct_plan", direct_plan, before);
    print_stamps("direct_plan");
    measure("split2 (2 CTAs a KV head, one cluster)", split2, before);
    measure("split4 (4 CTAs a KV head, one cluster)", split4, before);
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  std::printf("%s\n", ok ? "all checks ok" : "CHECK FAILED");
  return ok ? 0 : 1;
}
