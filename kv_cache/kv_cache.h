// K/V cache storage and the write of new K/V rows into it (upstream's
// set_kv_buffer), on the host for CPU tests and references, and on the GPU.
//
// Each of K and V is one array laid out [num_pages, page_size, num_kv_heads,
// head_dim] in the layout's dtype (bf16, fp16, or fp32 for tests), so token
// slot s = page * page_size + offset owns the contiguous row
// [num_kv_heads, head_dim] starting at element s * num_kv_heads * head_dim.
// Slots come from KvPagePool (kv_cache/page_pool.h); the pool's sink page 0
// gives padded writes a harmless target.
//
//   ASSIGN_OR_RETURN(HostKvCache host, HostKvCache::Create(layout));
//   RETURN_IF_ERROR(host.WriteRows(new_k, new_v, out_cache_loc));
//   ASSIGN_OR_RETURN(DeviceKvCache device, DeviceKvCache::Create(layout));
//   RETURN_IF_ERROR(device.Upload(host));
//   RETURN_IF_ERROR(device.WriteRows(d_new_k, d_new_v, out_cache_loc, d_out_cache_loc, stream));
//
// A write takes `new_k`/`new_v` shaped [num_tokens, num_kv_heads, head_dim]
// in the cache dtype and `slots[num_tokens]`: token i goes to slot slots[i];
// a negative slot means padding and is skipped. The host API validates slots
// (OutOfRange names the token index and the slot) and rejects a slot written
// twice in one call (the GPU would write it in no defined order).
#ifndef KV_CACHE_KV_CACHE_H_
#define KV_CACHE_KV_CACHE_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "attention/base/device_buffer.h"
#include "attention/base/dtype.h"

namespace paged_attention {

struct KvCacheLayout {
  int32_t num_pages = 0;     // pages, including the sink page 0
  int32_t page_size = 0;     // token slots per page
  int32_t num_kv_heads = 0;  // KV heads per token
  int32_t head_dim = 0;      // elements per head
  DType dtype = DType::kBFloat16;

  // Token slots: num_pages * page_size.
  int64_t num_slots() const { return int64_t{num_pages} * page_size; }
  // Elements of one token's row: num_kv_heads * head_dim.
  int64_t row_elements() const { return int64_t{num_kv_heads} * head_dim; }
  int64_t row_bytes() const { return row_elements() * DTypeSize(dtype); }
  // Elements and bytes of one cache (K or V).
  int64_t num_elements() const { return num_slots() * row_elements(); }
  int64_t size_bytes() const { return num_elements() * DTypeSize(dtype); }

  // Element index of [page][offset_in_page][head][dim].
  int64_t ElementOffset(int32_t page, int32_t offset_in_page, int32_t head, int32_t dim) const {
    return SlotElementOffset(page * int64_t{page_size} + offset_in_page, head, dim);
  }
  // Element index of [slot][head][dim], slot = page * page_size + offset.
  int64_t SlotElementOffset(int64_t slot, int32_t head, int32_t dim) const {
    return (slot * num_kv_heads + head) * head_dim + dim;
  }
};

bool operator==(const KvCacheLayout& a, const KvCacheLayout& b);
inline bool operator!=(const KvCacheLayout& a, const KvCacheLayout& b) { return !(a == b); }

// "KvCacheLayout{num_pages=.., page_size=.., num_kv_heads=.., head_dim=.., dtype=bfloat16}".
std::string KvCacheLayoutString(const KvCacheLayout& layout);

// InvalidArgument naming every non-positive field, or slot ids past int32.
absl::Status ValidateKvCacheLayout(const KvCacheLayout& layout);

// OK if every slot is < layout.num_slots() (negative = padding, skipped) and no
// slot appears twice; else OutOfRange "slots[token 3] = 4096 is outside the
// cache's 4096 slots" / InvalidArgument "slots[token 5] = 37 repeats slots[token 2]".
absl::Status ValidateKvSlots(const KvCacheLayout& layout, absl::Span<const int32_t> slots);

// The host set_kv_buffer: copies row i of new_k/new_v to slot slots[i] of
// k_cache/v_cache (host arrays of `layout`). Validates like ValidateKvSlots.
absl::Status WriteKvRows(const KvCacheLayout& layout, const void* new_k, const void* new_v,
                         absl::Span<const int32_t> slots, void* k_cache, void* v_cache);

// The GPU set_kv_buffer: enqueues the kv_write kernel on `stream`. new_k,
// new_v, k_cache, v_cache are device pointers; `device_slots` is a device copy
// of `host_slots`, which is what gets validated (the kernel trusts it, but it
// also skips out-of-range slots so a stale device copy cannot write outside
// the cache). Asynchronous; safe inside CUDA-graph capture (no allocation, no
// sync; the launch is captured with these pointers and that token count).
absl::Status WriteKvRowsOnDevice(const KvCacheLayout& layout, const void* new_k, const void* new_v,
                                 absl::Span<const int32_t> host_slots, const int32_t* device_slots,
                                 void* k_cache, void* v_cache, cudaStream_t stream);

// `values` rounded to `dtype` (nearest even), as that dtype's bytes: builds
// new_k/new_v for tests and tools. (DecodeElement, the inverse, is in
// attention/base/dtype.h.)
std::vector<uint8_t> EncodeElements(DType dtype, absl::Span<const float> values);

enum class KvTensor { kKey, kValue };

// The most host memory one HostKvCache (K and V together) may take: it is a
// test and reference mirror, never the serving cache.
inline constexpr int64_t kMaxHostKvCacheBytes = int64_t{8} << 30;

// A K/V cache in host memory: the mirror of DeviceKvCache for CPU tests and
// the float64 reference.
class HostKvCache {
 public:
  // Zero-filled. InvalidArgument for a bad layout; ResourceExhausted, before
  // allocating, when K and V together would exceed kMaxHostKvCacheBytes.
  static absl::StatusOr<HostKvCache> Create(const KvCacheLayout& layout);

  const KvCacheLayout& layout() const { return layout_; }
  void* k_data() { return k_.data(); }
  void* v_data() { return v_.data(); }
  const void* k_data() const { return k_.data(); }
  const void* v_data() const { return v_.data(); }
  // Bytes of each of K and V.
  size_t size_bytes() const { return k_.size(); }

  // Sets every element of K and V to `value` rounded to the dtype, e.g. NaN to
  // poison slots a write must not touch.
  void Fill(float value);

  // set_kv_buffer: see WriteKvRows.
  absl::Status WriteRows(const void* new_k, const void* new_v, absl::Span<const int32_t> slots);

  // Element [slot][head][dim] of K or V; OutOfRange naming the bad index.
  absl::StatusOr<float> Read(KvTensor tensor, int64_t slot, int32_t head, int32_t dim) const;
  // Unchecked Read for reference loops: indices must be inside the layout.
  float At(KvTensor tensor, int64_t slot, int32_t head, int32_t dim) const {
    return DecodeElement(layout_.dtype, tensor == KvTensor::kKey ? k_.data() : v_.data(),
                         layout_.SlotElementOffset(slot, head, dim));
  }

 private:
  explicit HostKvCache(const KvCacheLayout& layout);

  KvCacheLayout layout_;
  std::vector<uint8_t> k_;
  std::vector<uint8_t> v_;
};

// A K/V cache in GPU memory (two cudaMalloc'd arrays). Create, Upload and
// Download allocate or synchronize: not for use inside CUDA-graph capture.
class DeviceKvCache {
 public:
  // Contents are uninitialised. InvalidArgument for a bad layout,
  // ResourceExhausted when the GPU is out of memory.
  static absl::StatusOr<DeviceKvCache> Create(const KvCacheLayout& layout);

  const KvCacheLayout& layout() const { return layout_; }
  void* k_data() const { return k_.data(); }
  void* v_data() const { return v_.data(); }

  // Synchronous full copies; InvalidArgument when the layouts differ.
  absl::Status Upload(const HostKvCache& host);
  absl::Status Download(HostKvCache* host) const;

  // set_kv_buffer on this cache: see WriteKvRowsOnDevice (capture-safe).
  absl::Status WriteRows(const void* new_k, const void* new_v, absl::Span<const int32_t> host_slots,
                         const int32_t* device_slots, cudaStream_t stream);

 private:
  DeviceKvCache(const KvCacheLayout& layout, DeviceBuffer k, DeviceBuffer v);

  KvCacheLayout layout_;
  DeviceBuffer k_;
  DeviceBuffer v_;
};

}  // namespace paged_attention

#endif  // KV_CACHE_KV_CACHE_H_
