// An owned, untyped device allocation (cudaMalloc/cudaFree), movable, never
// copied. Allocation returns ResourceExhausted naming the buffer when the GPU
// is out of memory. Not for use inside CUDA-graph capture (cudaMalloc).
#ifndef ATTENTION_BASE_DEVICE_BUFFER_H_
#define ATTENTION_BASE_DEVICE_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paged_attention {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // `what` names the buffer in error messages (e.g. "k_cache").
  static absl::StatusOr<DeviceBuffer> Allocate(size_t bytes, absl::string_view what);

  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  void* data() const { return data_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  size_t size_bytes() const { return bytes_; }

  // Synchronous copies of the whole buffer (or a prefix of it) to/from host.
  absl::Status CopyFromHost(const void* host, size_t bytes);
  absl::Status CopyToHost(void* host, size_t bytes) const;

  template <typename T>
  absl::Status Upload(const std::vector<T>& host) {
    return CopyFromHost(host.data(), host.size() * sizeof(T));
  }
  template <typename T>
  absl::StatusOr<std::vector<T>> Download(size_t count) const {
    std::vector<T> host(count);
    absl::Status status = CopyToHost(host.data(), count * sizeof(T));
    if (!status.ok()) return status;
    return host;
  }

 private:
  DeviceBuffer(void* data, size_t bytes) : data_(data), bytes_(bytes) {}
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace paged_attention

#endif  // ATTENTION_BASE_DEVICE_BUFFER_H_
