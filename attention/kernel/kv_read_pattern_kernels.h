// A streaming read of the paged K/V pool (or of a contiguous copy of it) in a
// caller-chosen order, for kv_read_pattern_benchmark: it does no math, so its
// time is the DRAM cost of that read order alone.
//
// Persistent grid: KvReadNumCtas() CTAs of kKvReadThreads threads; CTA c reads
// items [cta_begin[c], cta_begin[c + 1]) one after the other. An item is
// int4 {request, head_begin, head_count, key_begin}: keys
// [key_begin, key_begin + keys_per_item) of heads [head_begin, head_begin +
// head_count), K and V. Preconditions (not checked on the device): head_count
// is a power of two and keys_per_item * head_count * row_bytes is a multiple
// of 32 KB (one unrolled step of the CTA, 2048 16-byte loads per tensor).
#ifndef ATTENTION_KERNEL_KV_READ_PATTERN_KERNELS_H_
#define ATTENTION_KERNEL_KV_READ_PATTERN_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace paged_attention {

inline constexpr int kKvReadThreads = 256;
inline constexpr int kKvReadPageSize = 16;   // keys per page
inline constexpr int kKvReadRowBytes = 256;  // one head of one key at head_dim 128 (bf16)
inline constexpr int kKvBulkStages = 4;
inline constexpr int kKvBulkStageBytes = 16384;

struct KvReadArgs {
  // Paged: [num_pages, kKvReadPageSize, num_kv_heads, head_dim] bf16 (read as
  // raw 16-byte chunks), or [num_pages, num_kv_heads, kKvReadPageSize,
  // head_dim] when heads_outside_pages_rows is set (each page holds one KV
  // head's rows together: FlashInfer's HND). Contiguous (page_table ==
  // nullptr): [batch, num_kv_heads, seq_len, head_dim].
  // One (key, head) row: head_dim x 2 bytes, kKvReadRowBytes (head_dim 128)
  // or half of it (head_dim 64: loads only, not bulk).
  int32_t row_bytes = kKvReadRowBytes;
  const void* k = nullptr;
  const void* v = nullptr;
  const int32_t* page_table = nullptr;  // [batch, max_pages_per_request] page ids
  int32_t max_pages_per_request = 0;
  int32_t num_kv_heads = 0;
  int32_t seq_len = 0;                 // keys per request (the contiguous layout's stride)
  const int4* items = nullptr;         // [num_items] {request, head_begin, head_count, key_begin}
  const int32_t* cta_begin = nullptr;  // [num_ctas + 1] first item of each CTA
  int32_t keys_per_item = 0;
  int32_t num_ctas = 0;
  int32_t heads_outside_pages_rows = 0;  // 1: the HND paged layout above
  // 1: the bytes go to shared memory by bulk copies (cp.async.bulk, the TMA
  // engine), one copy per contiguous run of the item's rows (up to
  // kKvBulkStageBytes), issued by one thread per CTA into a ring of
  // kKvBulkStages stages; 0: 16-byte loads into registers by every thread.
  // Bulk preconditions (not checked): an all-heads item (head_count ==
  // num_kv_heads) needs 8 KV heads and key_begin a multiple of 8 (a run is 8
  // keys x 8 heads of one page; fewer heads: a run is one key's head_count
  // rows), and keys_per_item * head_count is a multiple of 64 (whole 16 KB
  // stages).
  int32_t bulk = 0;
  int32_t* out = nullptr;  // [num_ctas * kKvReadThreads] XOR of what each thread read
};

// 2 x the SM count of the current device (two resident CTAs per SM); 0 when
// there is no device.
int KvReadNumCtas();

// Launches the read on `stream`; returns the launch error. Safe inside
// CUDA-graph capture.
cudaError_t LaunchKvRead(const KvReadArgs& args, cudaStream_t stream);

}  // namespace paged_attention

#endif  // ATTENTION_KERNEL_KV_READ_PATTERN_KERNELS_H_
