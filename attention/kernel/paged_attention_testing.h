// Test helpers for the paged attention kernel (testonly): random paged batches
// with NaN-poisoned unused pool slots, their device copies, a "low-precision"
// host reference (PyTorch-style bf16/fp16 math) and error statistics.
//
// FlashAttention-3's criterion: the kernel's max abs error against the float64
// reference must be at most 2x the low-precision reference's + 1e-5.
#ifndef ATTENTION_KERNEL_PAGED_ATTENTION_TESTING_H_
#define ATTENTION_KERNEL_PAGED_ATTENTION_TESTING_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "attention/base/device_buffer.h"
#include "attention/kernel/paged_attention_args.h"
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
  int32_t num_kv_splits = 1;
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
  std::vector<int32_t> cache_seqlens, cu_seqlens_q, cu_seqlens_k, page_table;
  AttentionMetadata metadata;  // scalars only; pointers filled by Args()

  // Args over this batch's host vectors (out/lse null).
  PagedAttentionArgs Args() const;
};

HostBatch MakeRandomBatch(const BatchSpec& spec);

// Re-samples the lengths of `batch` to `q_lens`/`k_lens` (capacities kept) and
// refills Q/K/V, page table and poison, as a CUDA-graph replay would see.
void RefillBatch(const std::vector<int32_t>& q_lens, const std::vector<int32_t>& k_lens,
                 uint64_t seed, HostBatch& batch);

// The batch on the device, plus output, LSE and workspace buffers.
struct DeviceBatch {
  DeviceBuffer q, k_cache, v_cache, out, lse, workspace;
  DeviceBuffer cache_seqlens, cu_seqlens_q, cu_seqlens_k, page_table;
  PagedAttentionArgs args;  // device pointers

  // Copies `host` to fresh buffers; the workspace fits up to `max_kv_splits`.
  static absl::StatusOr<DeviceBatch> Create(const HostBatch& host, int32_t max_kv_splits);
  // Rewrites Q/K/V and the metadata arrays in place (same shapes).
  absl::Status Update(const HostBatch& host);
  // Fills out and lse with NaN.
  absl::Status PoisonOutputs();
  // Launches with `num_kv_splits` and waits.
  absl::Status Run(int32_t num_kv_splits, cudaStream_t stream = nullptr);
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

struct ErrorStats {
  double max_abs = 0.0;
  double rel_l2 = 0.0;
  int64_t non_finite = 0;
  std::string ToString() const;
};

// Errors of `got` against `want` over the first `count` elements.
ErrorStats CompareToReference(const std::vector<float>& got, const std::vector<double>& want,
                              int64_t count);
ErrorStats CompareToReference(const std::vector<double>& got, const std::vector<double>& want,
                              int64_t count);

}  // namespace paged_attention

#endif  // ATTENTION_KERNEL_PAGED_ATTENTION_TESTING_H_
