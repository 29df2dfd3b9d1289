// Builds a skewed DRAFT_EXTEND_V2 batch through @paged_attention's public
// targets, plans it eagerly and prints the metadata. Host only: no GPU needed.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "attention/planner/metadata_planner.h"
#include "kv_cache/page_pool.h"
#include "spec_decode/batch_descriptor.h"
#include "spec_decode/engine_batch.h"
#include "spec_decode/forward_mode.h"

namespace {

std::string Join(const std::vector<int32_t>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    out += (i ? "," : "") + std::to_string(values[i]);
  }
  return "[" + out + "]";
}

int Fail(const char* step, const absl::Status& status) {
  std::fprintf(stderr, "plan_skewed_batch: %s: %s\n", step, status.ToString().c_str());
  return 1;
}

}  // namespace

int main() {
  using namespace paged_attention;
  absl::StatusOr<KvPagePool> pool = KvPagePool::Create(PagePoolConfig{.num_pages = 64,
                                                                      .page_size = 16,
                                                                      .max_requests = 4,
                                                                      .max_context_len = 512,
                                                                      .num_draft_tokens = 4});
  if (!pool.ok()) return Fail("KvPagePool::Create", pool.status());
  // One long and one short request, each extending 4 draft tokens; seq_lens
  // counts the new tokens (what production passes), and we say so.
  absl::StatusOr<EngineBatchInputs> inputs = MakeEngineBatch(
      *pool, ForwardMode::kDraftExtendV2, SeqLensConvention::kIncludesNewTokens,
      /*prefix_lens=*/{300, 5}, /*new_tokens=*/{4, 4}, SpecInfo{.num_draft_tokens = 4});
  if (!inputs.ok()) return Fail("MakeEngineBatch", inputs.status());
  absl::StatusOr<ValidatedBatch> batch = BuildBatchDescriptor(*inputs, *pool);
  if (!batch.ok()) return Fail("BuildBatchDescriptor", batch.status());
  // The model's heads and the GPU's geometry shape the work plan (H200: 132
  // SMs, 2 attention CTAs each); nothing is defaulted.
  const PlannerConfig config{
      .num_q_heads = 32, .num_kv_heads = 8, .head_dim = 128, .num_sms = 132, .ctas_per_sm = 2};
  absl::StatusOr<HostMetadata> plan = PlanEager(*batch, *pool, config);
  if (!plan.ok()) return Fail("PlanEager", plan.status());
  std::printf("mode %s\n", std::string(ForwardModeName(plan->mode)).c_str());
  std::printf("cache_seqlens %s\n", Join(plan->cache_seqlens).c_str());
  std::printf("cu_seqlens_q %s\n", Join(plan->cu_seqlens_q).c_str());
  std::printf("max_seq_len_k %d\n", plan->summary.max_seq_len_k);
  std::printf("work plan: %d segments on %d workers, %d merges\n",
              plan->summary.partition.num_segments, plan->summary.partition.worker_span,
              plan->summary.partition.num_merge_tasks);
  return 0;
}
