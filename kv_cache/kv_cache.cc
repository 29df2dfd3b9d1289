#include "kv_cache/kv_cache.h"

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "attention/base/cuda_status.h"
#include "attention/base/status_macros.h"
#include "kv_cache/kv_write_kernel.h"

namespace paged_attention {
namespace {

// Element-size alignment of every pointer: the kernel's narrowest access is
// one element, and the host reads elements with memcpy but the GPU cannot.
absl::Status CheckPointers(const KvCacheLayout& layout, int64_t num_tokens,
                           std::initializer_list<std::pair<const char*, const void*>> pointers) {
  for (const auto& [name, pointer] : pointers) {
    if (pointer == nullptr && num_tokens > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " is null with ", num_tokens, " tokens to write"));
    }
    if (reinterpret_cast<uintptr_t>(pointer) % DTypeSize(layout.dtype) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " is not aligned to its ", DTypeName(layout.dtype), " elements"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckWrite(const KvCacheLayout& layout, absl::Span<const int32_t> slots,
                        const void* new_k, const void* new_v, const void* k_cache,
                        const void* v_cache) {
  RETURN_IF_ERROR(ValidateKvCacheLayout(layout));
  RETURN_IF_ERROR(CheckPointers(
      layout, static_cast<int64_t>(slots.size()),
      {{"new_k", new_k}, {"new_v", new_v}, {"k_cache", k_cache}, {"v_cache", v_cache}}));
  if (slots.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return absl::InvalidArgumentError(absl::StrCat(slots.size(), " tokens exceed int32"));
  }
  return ValidateKvSlots(layout, slots);
}

}  // namespace

bool operator==(const KvCacheLayout& a, const KvCacheLayout& b) {
  return a.num_pages == b.num_pages && a.page_size == b.page_size &&
         a.num_kv_heads == b.num_kv_heads && a.head_dim == b.head_dim && a.dtype == b.dtype;
}

std::string KvCacheLayoutString(const KvCacheLayout& layout) {
  return absl::StrCat("KvCacheLayout{num_pages=", layout.num_pages,
                      ", page_size=", layout.page_size, ", num_kv_heads=", layout.num_kv_heads,
                      ", head_dim=", layout.head_dim, ", dtype=", DTypeName(layout.dtype), "}");
}

absl::Status ValidateKvCacheLayout(const KvCacheLayout& layout) {
  std::vector<std::string> problems;
  auto positive = [&problems](const char* name, int32_t value) {
    if (value < 1) problems.push_back(absl::StrCat(name, " = ", value, " must be >= 1"));
  };
  positive("num_pages", layout.num_pages);
  positive("page_size", layout.page_size);
  positive("num_kv_heads", layout.num_kv_heads);
  positive("head_dim", layout.head_dim);
  if (layout.dtype != DType::kFloat32 && layout.dtype != DType::kFloat16 &&
      layout.dtype != DType::kBFloat16) {
    problems.push_back(
        absl::StrCat("dtype = ", static_cast<int32_t>(layout.dtype), " is not a known DType"));
  }
  if (problems.empty() && layout.num_slots() > std::numeric_limits<int32_t>::max()) {
    problems.push_back(absl::StrCat("num_pages * page_size = ", layout.num_slots(),
                                    " slots do not fit the int32 slot ids"));
  }
  // size_bytes() = num_slots * row_elements * dtype size must not overflow.
  if (problems.empty() && layout.row_elements() > std::numeric_limits<int64_t>::max() /
                                                      DTypeSize(layout.dtype) /
                                                      layout.num_slots()) {
    problems.push_back(absl::StrCat("num_pages * page_size = ", layout.num_slots(),
                                    " slots of num_kv_heads * head_dim = ", layout.row_elements(),
                                    " elements overflow int64 bytes"));
  }
  if (problems.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("KvCacheLayout: ", absl::StrJoin(problems, "; ")));
}

absl::Status ValidateKvSlots(const KvCacheLayout& layout, absl::Span<const int32_t> slots) {
  absl::flat_hash_map<int32_t, size_t> first_token;
  first_token.reserve(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) {
    const int32_t slot = slots[i];
    if (slot < 0) continue;
    if (slot >= layout.num_slots()) {
      return absl::OutOfRangeError(absl::StrCat(
          "slots[token ", i, "] = ", slot, " is outside the cache's ", layout.num_slots(),
          " slots (", layout.num_pages, " pages of ", layout.page_size, ")"));
    }
    const auto [it, inserted] = first_token.emplace(slot, i);
    if (!inserted) {
      return absl::InvalidArgumentError(
          absl::StrCat("slots[token ", i, "] = ", slot, " repeats slots[token ", it->second, "]"));
    }
  }
  return absl::OkStatus();
}

absl::Status WriteKvRows(const KvCacheLayout& layout, const void* new_k, const void* new_v,
                         absl::Span<const int32_t> slots, void* k_cache, void* v_cache) {
  RETURN_IF_ERROR(CheckWrite(layout, slots, new_k, new_v, k_cache, v_cache));
  const size_t row_bytes = static_cast<size_t>(layout.row_bytes());
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i] < 0) continue;
    const size_t dst = static_cast<size_t>(slots[i]) * row_bytes;
    std::memcpy(static_cast<char*>(k_cache) + dst, static_cast<const char*>(new_k) + i * row_bytes,
                row_bytes);
    std::memcpy(static_cast<char*>(v_cache) + dst, static_cast<const char*>(new_v) + i * row_bytes,
                row_bytes);
  }
  return absl::OkStatus();
}

absl::Status WriteKvRowsOnDevice(const KvCacheLayout& layout, const void* new_k, const void* new_v,
                                 absl::Span<const int32_t> host_slots, const int32_t* device_slots,
                                 void* k_cache, void* v_cache, cudaStream_t stream) {
  RETURN_IF_ERROR(CheckWrite(layout, host_slots, new_k, new_v, k_cache, v_cache));
  if (device_slots == nullptr && !host_slots.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("device_slots is null with ", host_slots.size(), " tokens to write"));
  }
  KvWriteParams params;
  params.new_k = new_k;
  params.new_v = new_v;
  params.slots = device_slots;
  params.k_cache = k_cache;
  params.v_cache = v_cache;
  params.num_tokens = static_cast<int32_t>(host_slots.size());
  params.num_slots = static_cast<int32_t>(layout.num_slots());
  params.row_bytes = layout.row_bytes();
  return CudaCall(LaunchKvWriteKernel(params, stream), "KvWriteKernel");
}

std::vector<uint8_t> EncodeElements(DType dtype, absl::Span<const float> values) {
  std::vector<uint8_t> bytes(values.size() * DTypeSize(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::kFloat32) {
      std::memcpy(&bytes[i * 4], &values[i], 4);
    } else {
      const uint16_t bits = EncodeElement16(dtype, values[i]);
      std::memcpy(&bytes[i * 2], &bits, 2);
    }
  }
  return bytes;
}

HostKvCache::HostKvCache(const KvCacheLayout& layout)
    : layout_(layout),
      k_(static_cast<size_t>(layout.size_bytes()), 0),
      v_(static_cast<size_t>(layout.size_bytes()), 0) {}

absl::StatusOr<HostKvCache> HostKvCache::Create(const KvCacheLayout& layout) {
  RETURN_IF_ERROR(ValidateKvCacheLayout(layout));
  // size_bytes() fits int64 (validated); K and V are two of them.
  if (layout.size_bytes() > kMaxHostKvCacheBytes / 2) {
    return absl::ResourceExhaustedError(
        absl::StrCat("HostKvCache: K and V of ", KvCacheLayoutString(layout), " would take 2 * ",
                     layout.size_bytes(), " bytes, more than the host budget of ",
                     kMaxHostKvCacheBytes, " bytes"));
  }
  return HostKvCache(layout);
}

void HostKvCache::Fill(float value) {
  const std::vector<uint8_t> element = EncodeElements(layout_.dtype, {value});
  for (std::vector<uint8_t>* cache : {&k_, &v_}) {
    for (size_t i = 0; i < cache->size(); i += element.size()) {
      std::memcpy(cache->data() + i, element.data(), element.size());
    }
  }
}

absl::Status HostKvCache::WriteRows(const void* new_k, const void* new_v,
                                    absl::Span<const int32_t> slots) {
  return WriteKvRows(layout_, new_k, new_v, slots, k_.data(), v_.data());
}

absl::StatusOr<float> HostKvCache::Read(KvTensor tensor, int64_t slot, int32_t head,
                                        int32_t dim) const {
  if (slot < 0 || slot >= layout_.num_slots() || head < 0 || head >= layout_.num_kv_heads ||
      dim < 0 || dim >= layout_.head_dim) {
    return absl::OutOfRangeError(absl::StrCat("Read(", tensor == KvTensor::kKey ? "K" : "V",
                                              ", slot=", slot, ", head=", head, ", dim=", dim,
                                              ") is outside [", layout_.num_slots(), ", ",
                                              layout_.num_kv_heads, ", ", layout_.head_dim, "]"));
  }
  return At(tensor, slot, head, dim);
}

DeviceKvCache::DeviceKvCache(const KvCacheLayout& layout, DeviceBuffer k, DeviceBuffer v)
    : layout_(layout), k_(std::move(k)), v_(std::move(v)) {}

absl::StatusOr<DeviceKvCache> DeviceKvCache::Create(const KvCacheLayout& layout) {
  RETURN_IF_ERROR(ValidateKvCacheLayout(layout));
  absl::StatusOr<DeviceBuffer> k = DeviceBuffer::Allocate(layout.size_bytes(), "k_cache");
  if (!k.ok()) return k.status();
  absl::StatusOr<DeviceBuffer> v = DeviceBuffer::Allocate(layout.size_bytes(), "v_cache");
  if (!v.ok()) return v.status();
  return DeviceKvCache(layout, *std::move(k), *std::move(v));
}

absl::Status DeviceKvCache::Upload(const HostKvCache& host) {
  if (host.layout() != layout_) {
    return absl::InvalidArgumentError(
        absl::StrCat("Upload: host ", KvCacheLayoutString(host.layout()), " differs from device ",
                     KvCacheLayoutString(layout_)));
  }
  RETURN_IF_ERROR(k_.CopyFromHost(host.k_data(), host.size_bytes()));
  return v_.CopyFromHost(host.v_data(), host.size_bytes());
}

absl::Status DeviceKvCache::Download(HostKvCache* host) const {
  if (host->layout() != layout_) {
    return absl::InvalidArgumentError(
        absl::StrCat("Download: host ", KvCacheLayoutString(host->layout()),
                     " differs from device ", KvCacheLayoutString(layout_)));
  }
  RETURN_IF_ERROR(k_.CopyToHost(host->k_data(), host->size_bytes()));
  return v_.CopyToHost(host->v_data(), host->size_bytes());
}

absl::Status DeviceKvCache::WriteRows(const void* new_k, const void* new_v,
                                      absl::Span<const int32_t> host_slots,
                                      const int32_t* device_slots, cudaStream_t stream) {
  return WriteKvRowsOnDevice(layout_, new_k, new_v, host_slots, device_slots, k_.data(), v_.data(),
                             stream);
}

}  // namespace paged_attention
