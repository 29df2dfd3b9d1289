// Host-only checks of the paged attention API: argument validation, workspace
// sizing and the split heuristic. Needs no GPU.
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "attention/kernel/paged_attention.h"
#include "gtest/gtest.h"

namespace paged_attention {
namespace {

// A valid-looking argument set; the pointers are never dereferenced.
PagedAttentionArgs ValidArgs() {
  alignas(16) static char storage[256];
  PagedAttentionArgs args;
  args.dtype = DType::kBFloat16;
  args.num_q_heads = 32;
  args.num_kv_heads = 8;
  args.head_dim = 128;
  args.num_pages = 100;
  args.q = args.k_cache = args.v_cache = storage;
  args.out = storage;
  AttentionMetadata& md = args.metadata;
  md.batch_size = 2;
  md.total_q_tokens = 5;
  md.max_seq_len_q = 4;
  md.max_seq_len_k = 300;
  md.page_size = 16;
  md.max_pages_per_request = 19;
  md.num_kv_splits = 1;
  md.cache_seqlens = md.cu_seqlens_q = md.cu_seqlens_k = md.page_table =
      reinterpret_cast<const int32_t*>(storage);
  args.options.softmax_scale = 0.088f;
  return args;
}

void ExpectError(const PagedAttentionArgs& args, absl::StatusCode code, const std::string& text) {
  const absl::Status status = CanImplement(args);
  EXPECT_EQ(status.code(), code) << status;
  EXPECT_NE(std::string(status.message()).find(text), std::string::npos) << status;
}

TEST(PagedAttentionCanImplementTest, AcceptsSupportedShapes) {
  for (DType dtype : {DType::kBFloat16, DType::kFloat16}) {
    for (int32_t head_dim : {64, 128, 256}) {
      for (auto [hq, hkv] :
           {std::pair{32, 8}, std::pair{8, 8}, std::pair{64, 1}, std::pair{7, 7}}) {
        PagedAttentionArgs args = ValidArgs();
        args.dtype = dtype;
        args.head_dim = head_dim;
        args.num_q_heads = hq;
        args.num_kv_heads = hkv;
        EXPECT_TRUE(CanImplement(args).ok()) << CanImplement(args);
      }
    }
  }
}

TEST(PagedAttentionCanImplementTest, RejectsFloat32AsUnimplemented) {
  PagedAttentionArgs args = ValidArgs();
  args.dtype = DType::kFloat32;
  ExpectError(args, absl::StatusCode::kUnimplemented, "float32");
}

TEST(PagedAttentionCanImplementTest, RejectsUnsupportedHeadDimAsUnimplemented) {
  for (int32_t head_dim : {0, 32, 96, 112, 192, 512}) {
    PagedAttentionArgs args = ValidArgs();
    args.head_dim = head_dim;
    ExpectError(args, absl::StatusCode::kUnimplemented, "head_dim " + std::to_string(head_dim));
  }
}

TEST(PagedAttentionCanImplementTest, RejectsHeadRatioThatDoesNotDivide) {
  PagedAttentionArgs args = ValidArgs();
  args.num_q_heads = 12;
  args.num_kv_heads = 8;
  ExpectError(args, absl::StatusCode::kInvalidArgument, "num_q_heads 12");
  args.num_kv_heads = 0;
  ExpectError(args, absl::StatusCode::kInvalidArgument, "num_kv_heads 0");
}

TEST(PagedAttentionCanImplementTest, RejectsBadPageSize) {
  PagedAttentionArgs args = ValidArgs();
  args.metadata.page_size = 0;
  ExpectError(args, absl::StatusCode::kInvalidArgument, "page_size 0");
}

TEST(PagedAttentionCanImplementTest, RejectsBadSplitCount) {
  PagedAttentionArgs args = ValidArgs();
  args.metadata.num_kv_splits = 0;
  ExpectError(args, absl::StatusCode::kInvalidArgument, "num_kv_splits 0");
  args.metadata.num_kv_splits = 1000;
  ExpectError(args, absl::StatusCode::kInvalidArgument, "num_kv_splits 1000");
}

TEST(PagedAttentionCanImplementTest, RejectsNullAndMisalignedPointers) {
  PagedAttentionArgs args = ValidArgs();
  args.q = nullptr;
  ExpectError(args, absl::StatusCode::kInvalidArgument, "q is null");
  args = ValidArgs();
  args.metadata.page_table = nullptr;
  ExpectError(args, absl::StatusCode::kInvalidArgument, "page_table is null");
  args = ValidArgs();
  args.out = static_cast<char*>(args.out) + 2;
  ExpectError(args, absl::StatusCode::kInvalidArgument, "out must be 16-byte aligned");
}

TEST(PagedAttentionCanImplementTest, RejectsBadOptions) {
  PagedAttentionArgs args = ValidArgs();
  args.options.window_left = -2;
  ExpectError(args, absl::StatusCode::kInvalidArgument, "window_left -2");
  args = ValidArgs();
  args.options.softcap = -1.0f;
  ExpectError(args, absl::StatusCode::kInvalidArgument, "softcap");
}

TEST(PagedAttentionCanImplementTest, EmptyBatchNeedsNoPointers) {
  PagedAttentionArgs args = ValidArgs();
  args.metadata.batch_size = 0;
  args.q = args.k_cache = args.v_cache = nullptr;
  args.out = nullptr;
  EXPECT_TRUE(CanImplement(args).ok());
  EXPECT_TRUE(LaunchPagedAttention(args, nullptr, 0, nullptr).ok());
}

TEST(PagedAttentionLaunchTest, ReportsTooSmallWorkspace) {
  PagedAttentionArgs args = ValidArgs();
  args.metadata.num_kv_splits = 4;
  const absl::Status status = LaunchPagedAttention(args, nullptr, 0, nullptr);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_NE(std::string(status.message()).find("workspace"), std::string::npos);
}

TEST(PagedAttentionWorkspaceTest, SizedFromSplitCapacity) {
  AttentionMetadata md = ValidArgs().metadata;
  EXPECT_EQ(WorkspaceBytes(md, 32, 128), 0u);
  md.num_kv_splits = 8;
  const size_t rows = 8 * 5 * 32;
  EXPECT_GE(WorkspaceBytes(md, 32, 128), rows * 129 * sizeof(float));
  EXPECT_LE(WorkspaceBytes(md, 32, 128), rows * 129 * sizeof(float) + 512);
  md.batch_size = 0;
  EXPECT_EQ(WorkspaceBytes(md, 32, 128), 0u);
}

}  // namespace
}  // namespace paged_attention
