#include "attention/base/cuda_status.h"

#include "gtest/gtest.h"

namespace paged_attention {
namespace {

TEST(CudaCallTest, SuccessIsOk) { EXPECT_TRUE(CudaCall(cudaSuccess, "cudaMalloc").ok()); }

TEST(CudaCallTest, ErrorIsInternalNamingTheCallAndTheError) {
  const absl::Status status = CudaCall(cudaErrorMemoryAllocation, "cudaMalloc(k_cache)");
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_NE(status.message().find("cudaMalloc(k_cache)"), absl::string_view::npos) << status;
  EXPECT_NE(status.message().find("cudaErrorMemoryAllocation"), absl::string_view::npos) << status;
}

}  // namespace
}  // namespace paged_attention
