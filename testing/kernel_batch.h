// Test helpers for the paged attention kernel (testonly): random paged batches
// made directly as metadata (no pool, any lengths, including ones no engine
// makes) with NaN-poisoned unused pool slots, their work plans, their device
// copies and a "low-precision" host reference (PyTorch-style bf16/fp16 math).
//
// FlashAttention-3's criterion: the kernel's max abs error against the float64
// reference must be at most 2x the low-precision reference's + 1e-5.
#ifndef TESTING_KERNEL_BATCH_H_
#define TESTING_KERNEL_BATCH_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "attention/base/device_buffer.h"
#include "attention/kernel/paged_attention_args.h"
#include "attention/planner/work_plan.h"
#include "testing/attention_check.h"
#include "testing/host_executor.h"

namespace paged_attention {

struct BatchSpec {
  DType dtype = DType::kBFloat16;
  int32_t num_q_heads = 8;
  int32_t num_kv_heads = 2;
  int32_t head_dim = 128;
  int32_t page_size = 16;
  std::vector<int32_t> q_lens;  // per request
  std::vector<int32_t> k_lens;  // per request (cache_seqlens)
  AttentionOptions options;     // softmax_scale 0 -> 1/sqrt(head_dim)
  // Work plan: workers (the GPU's SMs x CTAs per SM; see QueryKernelGeometry)
  // and pinned splits (0: balanced).
  int32_t num_workers = 0;
  int32_t pinned_splits = 0;
  // KV heads per unit (WorkPlanView::kv_heads_per_unit): 0 = as the planner
  // decides (KvHeadsPerUnit: pairs where CanPairKvHeads allows them for
  // max_seq_len_q); 1 or 2 to choose.
  int32_t kv_heads_per_unit = 0;
  // Whether the plan is an eager launch's (DeviceMetadata::metadata_for): it
  // offers its member pairs (WorkPlanView::member_pair_offset) and its grid
  // ends at the last worker with segments; false: a CUDA-graph capacity's (no
  // member pairs, every worker launched).
  bool eager_plan = true;
  // Capacities (CUDA-graph style); 0 = exact. Rows of page_table, the q token
  // capacity and the max q length may exceed what the requests use.
  int32_t max_pages_per_request = 0;
  int32_t total_q_tokens = 0;
  int32_t max_seq_len_q = 0;
  float q_stddev = 1.0f;
  uint64_t seed = 1;
};

// A random batch in host memory. Only the first cache_seqlens[i] rows of each
// request's pages hold values; every other pool slot (free pages and the tail
// of partially used pages) holds NaN in K and V. Page ids are a random
// permutation of a pool about twice as large as needed.
struct HostBatch {
  BatchSpec spec;
  int32_t num_pages = 0;
  std::vector<uint16_t> q, k_cache, v_cache;  // dtype bit patterns
  std::vector<int32_t> cache_seqlens, cu_seqlens_q, page_table;
  // The work plan, sized for the capacities (any pinned split count up to 64).
  std::vector<int32_t> worker_begin, counters;
  std::vector<WorkSegment> segments;
  std::vector<MergeTask> merge_tasks;
  AttentionMetadata metadata;  // scalars only; pointers filled by Args()

  // Args over this batch's host vectors (out/lse null).
  PagedAttentionArgs Args() const;
  // Re-partitions the current lengths with `pinned_splits` (0: balanced).
  void Plan(int32_t pinned_splits);
};

HostBatch MakeRandomBatch(const BatchSpec& spec);

// Re-samples the lengths of `batch` to `q_lens`/`k_lens` (capacities kept),
// refills Q/K/V, page table and poison and re-plans, as a CUDA-graph replay
// would see.
void RefillBatch(const std::vector<int32_t>& q_lens, const std::vector<int32_t>& k_lens,
                 uint64_t seed, HostBatch& batch);

// The batch on the device, plus output, LSE and workspace buffers.
struct DeviceBatch {
  DeviceBuffer q, k_cache, v_cache, out, lse, workspace;
  DeviceBuffer cache_seqlens, cu_seqlens_q, page_table;
  DeviceBuffer worker_begin, counters, segments, merge_tasks;
  PagedAttentionArgs args;  // device pointers

  // Copies `host` (data and plan) to fresh buffers.
  static absl::StatusOr<DeviceBatch> Create(const HostBatch& host);
  // Rewrites Q/K/V, the metadata arrays and the plan in place (same shapes).
  absl::Status Update(const HostBatch& host);
  // Fills out and lse with NaN.
  absl::Status PoisonOutputs();
  // Launches and waits.
  absl::Status Run(cudaStream_t stream = nullptr);
  absl::StatusOr<std::vector<float>> DownloadOut() const;
  absl::StatusOr<std::vector<float>> DownloadLse() const;
};

// PyTorch-style low-precision attention on the host: scores in float32 from
// the dtype inputs, softmax in float32, probabilities rounded to dtype before
// P.V (float32 accumulation), output rounded to dtype. Rows that see no key are
// zero. [total_q_tokens, num_q_heads, head_dim].
std::vector<double> LowPrecisionReference(const PagedAttentionArgs& host_args);

// RunHostPagedAttention (testing/host_executor.h) spread over the host's
// cores: each (request, query token) runs as its own one-token request whose
// keys end at that token's diagonal, which sees exactly the same keys.
absl::StatusOr<HostAttentionResult> ParallelHostReference(const PagedAttentionArgs& host_args);

}  // namespace paged_attention

#endif  // TESTING_KERNEL_BATCH_H_
