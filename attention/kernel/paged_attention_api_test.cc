// Host-only checks of the paged attention API: argument validation (the work
// plan's geometry and mask included) and workspace sizing. Needs no GPU.
#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "attention/kernel/paged_attention.h"
#include "attention/kernel/paged_attention_kernel.h"
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
  md.cache_seqlens = md.cu_seqlens_q = md.page_table = reinterpret_cast<const int32_t*>(storage);
  WorkPlanView& plan = md.plan;
  plan.num_workers = 264;
  plan.max_segments = 300;
  plan.num_kv_heads = 8;
  plan.group = 4;
  plan.head_dim = 128;
  plan.worker_begin = plan.counters = reinterpret_cast<const int32_t*>(storage);
  plan.segments = reinterpret_cast<const WorkSegment*>(storage);
  args.options.softmax_scale = 0.088f;
  return args;
}

// ValidArgs() reshaped: the plan follows the heads and head_dim.
PagedAttentionArgs ArgsFor(DType dtype, int32_t head_dim, int32_t hq, int32_t hkv) {
  PagedAttentionArgs args = ValidArgs();
  args.dtype = dtype;
  args.head_dim = args.metadata.plan.head_dim = head_dim;
  args.num_q_heads = hq;
  args.num_kv_heads = args.metadata.plan.num_kv_heads = hkv;
  args.metadata.plan.group = hkv > 0 ? hq / hkv : 0;
  return args;
}

void ExpectError(const PagedAttentionArgs& args, absl::StatusCode code, const std::string& text) {
  const absl::Status status = CanImplement(args);
  EXPECT_EQ(status.code(), code) << status;
  EXPECT_NE(std::string(status.message()).find(text), std::string::npos) << status;
}

// Which page sizes the kernel streams by TMA, per key tile (64 keys at
// head_dim 64, 32 at 128, 16 at 256): boxes of whole pages or of the tile's
// part of one page, never fewer than 8 rows, never straddling a page.
TEST(TmaBoxRowsTest, WholeBoxesOfAtLeastEightRowsInsideOnePage) {
  for (int32_t tile : {64, 32, 16}) {
    for (int32_t page = 1; page <= 256; ++page) {
      const int32_t rows = TmaBoxRows(page, tile);
      SCOPED_TRACE(::testing::Message() << "page " << page << " tile " << tile);
      if (rows == 0) {
        // cp.async only: small pages, or pages that do not tile evenly.
        EXPECT_TRUE(page < 8 || (page < tile && tile % page != 0) ||
                    (page >= tile && page % tile != 0));
        continue;
      }
      EXPECT_GE(rows, 8);
      EXPECT_EQ(tile % rows, 0) << "whole boxes per tile";
      EXPECT_EQ(page % rows, 0) << "no box straddles a page";
      EXPECT_EQ(rows, std::min(page, tile));
    }
  }
  EXPECT_EQ(TmaBoxRows(16, 32), 16);   // head_dim 128, page 16: two pages per tile
  EXPECT_EQ(TmaBoxRows(64, 32), 32);   // page 64: half a page per tile
  EXPECT_EQ(TmaBoxRows(256, 16), 16);  // head_dim 256, page 256
  EXPECT_EQ(TmaBoxRows(1, 32), 0);
  EXPECT_EQ(TmaBoxRows(48, 32), 0);  // a tile would straddle two pages
  EXPECT_EQ(TmaBoxRows(24, 64), 0);
}

TEST(PagedAttentionCanImplementTest, AcceptsSupportedShapes) {
  for (DType dtype : {DType::kBFloat16, DType::kFloat16}) {
    for (int32_t head_dim : {64, 128, 256}) {
      for (auto [hq, hkv] :
           {std::pair{32, 8}, std::pair{8, 8}, std::pair{64, 1}, std::pair{7, 7}}) {
        const PagedAttentionArgs args = ArgsFor(dtype, head_dim, hq, hkv);
        EXPECT_TRUE(CanImplement(args).ok()) << CanImplement(args);
      }
    }
  }
}

// Plans of KV head pairs (WorkPlanView::kv_heads_per_unit 2) only where the
// head_dim 128 decode kernel can run them (CanPairKvHeads, no tree masks).
TEST(PagedAttentionCanImplementTest, KvHeadPairsOnlyWhereTheirKernelRuns) {
  PagedAttentionArgs args = ArgsFor(DType::kBFloat16, 64, 32, 8);
  args.metadata.max_seq_len_q = 1;
  args.metadata.plan.kv_heads_per_unit = 2;
  EXPECT_TRUE(CanImplement(args).ok()) << CanImplement(args);
  PagedAttentionArgs extend = args;
  extend.metadata.max_seq_len_q = 2;  // 16 rows of two heads
  EXPECT_TRUE(CanImplement(extend).ok()) << CanImplement(extend);
  PagedAttentionArgs verify = args;
  verify.metadata.max_seq_len_q = 3;  // 24 rows
  ExpectError(verify, absl::StatusCode::kInvalidArgument,
              "kv_heads_per_unit 2; pairs (2) are for head_dim 64, an even num_kv_heads, "
              "max_seq_len_q x group x 2 <= 16 and no tree_mask, and the call has head_dim 64, "
              "num_kv_heads 8, group 4, max_seq_len_q 3, tree_mask null");
  PagedAttentionArgs wide = ArgsFor(DType::kBFloat16, 128, 32, 8);
  wide.metadata.max_seq_len_q = 1;
  wide.metadata.plan.kv_heads_per_unit = 2;
  ExpectError(wide, absl::StatusCode::kInvalidArgument, "the call has head_dim 128");
  PagedAttentionArgs odd = ArgsFor(DType::kBFloat16, 64, 3, 3);
  odd.metadata.max_seq_len_q = 1;
  odd.metadata.plan.kv_heads_per_unit = 2;
  ExpectError(odd, absl::StatusCode::kInvalidArgument, "num_kv_heads 3");
  PagedAttentionArgs tree = args;
  alignas(16) static const uint64_t words[4] = {};
  tree.metadata.tree_mask = words;
  ExpectError(tree, absl::StatusCode::kInvalidArgument, "tree_mask set");
  PagedAttentionArgs triple = args;
  triple.metadata.plan.kv_heads_per_unit = 3;
  ExpectError(triple, absl::StatusCode::kInvalidArgument, "the work plan has kv_heads_per_unit 3");
  triple.metadata.plan.kv_heads_per_unit = 0;
  ExpectError(triple, absl::StatusCode::kInvalidArgument, "the work plan has kv_heads_per_unit 0");
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

TEST(PagedAttentionCanImplementTest, RejectsAPlanMadeForOtherHeadsOrHeadDim) {
  PagedAttentionArgs args = ValidArgs();
  args.metadata.plan.num_kv_heads = 4;
  ExpectError(args, absl::StatusCode::kInvalidArgument, "made for num_kv_heads 4");
  args = ValidArgs();
  args.metadata.plan.head_dim = 64;
  ExpectError(args, absl::StatusCode::kInvalidArgument, "head_dim 64");
  args = ValidArgs();
  args.num_q_heads = 64;  // group 8, plan made for 4
  ExpectError(args, absl::StatusCode::kInvalidArgument, "group 4");
}

TEST(PagedAttentionCanImplementTest, RejectsAPlanNarrowerThanTheMask) {
  PagedAttentionArgs args = ValidArgs();
  args.options.mask = MaskMode::kNonCausal;  // plan cut to causal ranges
  ExpectError(args, absl::StatusCode::kInvalidArgument, "causal");
  args = ValidArgs();
  args.metadata.plan.window_left = 100;
  args.options.window_left = 200;
  ExpectError(args, absl::StatusCode::kInvalidArgument, "window_left 100");
  args.options.window_left = -1;
  ExpectError(args, absl::StatusCode::kInvalidArgument, "window_left 100");
  args.options.window_left = 50;  // narrower than the plan: fine
  EXPECT_TRUE(CanImplement(args).ok()) << CanImplement(args);
  args = ValidArgs();
  args.metadata.plan.causal = 0;  // a non-causal plan covers every mask
  args.options.window_left = 10;
  EXPECT_TRUE(CanImplement(args).ok()) << CanImplement(args);
}

// Tree masks refine the plain causal mask; a window or a non-causal call has
// no tree meaning here.
TEST(PagedAttentionCanImplementTest, RejectsTreeMasksWithAWindowOrWithoutCausal) {
  alignas(16) static const uint64_t words[4] = {~0ull, ~0ull, ~0ull, ~0ull};
  PagedAttentionArgs args = ValidArgs();
  args.metadata.tree_mask = words;
  EXPECT_TRUE(CanImplement(args).ok()) << CanImplement(args);
  args.metadata.plan.window_left = 100;
  args.options.window_left = 100;
  ExpectError(
      args, absl::StatusCode::kInvalidArgument,
      "metadata.tree_mask is set (a tree batch) but the call is windowed (window_left 100)");
  args = ValidArgs();
  args.metadata.tree_mask = words;
  args.metadata.plan.causal = 0;
  args.options.mask = MaskMode::kNonCausal;
  ExpectError(args, absl::StatusCode::kInvalidArgument, "but the call is non-causal");
  args = ValidArgs();
  args.metadata.tree_mask = words + 1;
  ExpectError(args, absl::StatusCode::kInvalidArgument, "tree_mask must be 16-byte aligned");
}

TEST(PagedAttentionCanImplementTest, RejectsNegativePlanCapacities) {
  PagedAttentionArgs args = ValidArgs();
  args.metadata.plan.max_partials = -1;
  ExpectError(args, absl::StatusCode::kInvalidArgument, "max_partials -1");
  args = ValidArgs();
  args.metadata.plan.num_workers = 1 << 21;
  ExpectError(args, absl::StatusCode::kInvalidArgument, "num_workers");
  args = ValidArgs();
  args.metadata.plan.member_pair_offset = 265;  // past the 264 workers
  ExpectError(args, absl::StatusCode::kInvalidArgument, "member_pair_offset 265");
  args = ValidArgs();
  args.metadata.plan.member_pair_unit_offset = -2;
  ExpectError(args, absl::StatusCode::kInvalidArgument, "member_pair_unit_offset -2");
}

TEST(PagedAttentionCanImplementTest, RejectsNullAndMisalignedPointers) {
  PagedAttentionArgs args = ValidArgs();
  args.q = nullptr;
  ExpectError(args, absl::StatusCode::kInvalidArgument, "q is null");
  args = ValidArgs();
  args.metadata.page_table = nullptr;
  ExpectError(args, absl::StatusCode::kInvalidArgument, "page_table is null");
  args = ValidArgs();
  args.metadata.plan.segments = nullptr;
  ExpectError(args, absl::StatusCode::kInvalidArgument, "plan.segments is null");
  args = ValidArgs();
  args.metadata.plan.max_merge_tasks = 3;  // merge tasks needed, none given
  ExpectError(args, absl::StatusCode::kInvalidArgument, "plan.merge_tasks is null");
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
  args.metadata.plan.max_partials = 4;
  const absl::Status status = LaunchPagedAttention(args, nullptr, 0, nullptr);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_NE(std::string(status.message()).find("workspace"), std::string::npos);
}

TEST(PagedAttentionWorkspaceTest, SizedFromPartialCapacity) {
  AttentionMetadata md = ValidArgs().metadata;
  EXPECT_EQ(WorkspaceBytes(md), 0u);
  md.plan.max_partials = 8;
  const size_t rows = 8 * kUnitRows;  // a partial holds one unit's rows
  EXPECT_GE(WorkspaceBytes(md), rows * 129 * sizeof(float));
  EXPECT_LE(WorkspaceBytes(md), rows * 129 * sizeof(float) + 512);
  md.plan.head_dim = 256;
  EXPECT_GE(WorkspaceBytes(md), rows * 257 * sizeof(float));
}

}  // namespace
}  // namespace paged_attention
