#include "attention/base/device_buffer.h"

#include <cuda_runtime_api.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "attention/base/cuda_status.h"

namespace paged_attention {

absl::StatusOr<DeviceBuffer> DeviceBuffer::Allocate(size_t bytes, absl::string_view what) {
  if (bytes == 0) return DeviceBuffer();
  void* data = nullptr;
  const cudaError_t error = cudaMalloc(&data, bytes);
  if (error == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    return absl::ResourceExhaustedError(
        absl::StrCat("cudaMalloc of ", bytes, " bytes for ", what, " failed: out of GPU memory"));
  }
  if (error != cudaSuccess) return CudaCall(error, absl::StrCat("cudaMalloc(", what, ")"));
  return DeviceBuffer(data, bytes);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) cudaFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) cudaFree(data_);
}

absl::Status DeviceBuffer::CopyFromHost(const void* host, size_t bytes) {
  if (bytes > bytes_) {
    return absl::OutOfRangeError(
        absl::StrCat("copy of ", bytes, " bytes into a ", bytes_, "-byte device buffer"));
  }
  if (bytes == 0) return absl::OkStatus();
  return CudaCall(cudaMemcpy(data_, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy(H2D)");
}

absl::Status DeviceBuffer::CopyToHost(void* host, size_t bytes) const {
  if (bytes > bytes_) {
    return absl::OutOfRangeError(
        absl::StrCat("copy of ", bytes, " bytes out of a ", bytes_, "-byte device buffer"));
  }
  if (bytes == 0) return absl::OkStatus();
  return CudaCall(cudaMemcpy(host, data_, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy(D2H)");
}

}  // namespace paged_attention
