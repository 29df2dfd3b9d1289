// libFuzzer target: the plan CLI's path from text to metadata (see
// tools/FUZZING.md). ParseBatchFile, then for what parses UseCommonPool,
// BuildScenario, PlanEager, MetadataJson and the capacity-shaped twin of every batch on one
// host graph state, as `plan_batch --graph_max_batch` does. Any bad input must
// come back as a status; a batch that builds must plan, a tree batch (and only
// one) prints its tree, and its graph replay must match the eager plan on the
// live rows.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "attention/planner/metadata_planner.h"
#include "testing/batch_scenario.h"
#include "testing/fuzz_input.h"
#include "tools/batch_json.h"

namespace paged_attention {
namespace {

// The CLI allows pools up to kMaxCommonPoolTableEntries; the fuzzer skips the
// big ones (after UseCommonPool checked them) so each input runs in
// milliseconds.
constexpr int64_t kFuzzTableEntries = int64_t{1} << 18;

void Run(absl::string_view text) {
  absl::StatusOr<BatchFile> file = ParseBatchFile(text);
  if (!file.ok()) {
    FUZZ_CHECK(file.status().code() == absl::StatusCode::kInvalidArgument);
    FUZZ_CHECK(!file.status().message().empty());
    return;
  }
  // What parses is one JSON value of the raw text: no NUL, no byte order
  // mark, and an array exactly when its first non-blank byte opens one.
  FUZZ_CHECK(text.find('\0') == absl::string_view::npos);
  FUZZ_CHECK(!absl::StartsWith(text, "\xEF\xBB\xBF"));
  const size_t first_byte = text.find_first_not_of(" \t\r\n");
  FUZZ_CHECK(first_byte != absl::string_view::npos);
  FUZZ_CHECK(file->is_array == (text[first_byte] == '['));
  FUZZ_CHECK(file->is_array || file->specs.size() == 1);
  std::vector<ScenarioSpec>* specs = &file->specs;
  FUZZ_CHECK(!specs->empty() && static_cast<int64_t>(specs->size()) <= kMaxBatchesPerFile);
  const absl::Status pooled = UseCommonPool(*specs);
  if (!pooled.ok()) {
    FUZZ_CHECK(pooled.code() == absl::StatusCode::kResourceExhausted);
    return;
  }
  const ScenarioSpec& first = specs->front();
  if (int64_t{first.max_requests} * (int64_t{first.max_context_len} + first.draft_headroom) >
      kFuzzTableEntries) {
    return;
  }
  const PlannerConfig config = HostPlannerConfig(32, 8, 128);
  int32_t max_q_len = 1;
  for (const ScenarioSpec& s : *specs) {
    for (int32_t n : s.new_tokens) max_q_len = std::max(max_q_len, n);
  }
  for (const ScenarioSpec& spec : *specs) {
    absl::StatusOr<Scenario> scenario = BuildScenario(spec);
    if (!scenario.ok()) {
      FUZZ_CHECK(scenario.status().code() != absl::StatusCode::kOk);
      continue;
    }
    absl::StatusOr<HostMetadata> plan = PlanEager(scenario->batch, *scenario->pool, config);
    FUZZ_CHECK(plan.ok());
    const absl::StatusOr<std::string> json = MetadataJson(*plan, scenario->batch, *scenario->pool);
    FUZZ_CHECK(json.ok() && !json->empty());
    // The file says whether a batch is a tree; the descriptor agrees, and
    // exactly a tree batch prints its tree.
    FUZZ_CHECK(IsTreeSpec(spec) == scenario->batch.has_tree());
    FUZZ_CHECK((json->find("\"tree\":{") != std::string::npos) == scenario->batch.has_tree());

    // The CUDA-graph twin: a capacity of the pool's rows, padding included,
    // plans the live requests exactly as the eager plan does.
    const PlanShape capture =
        CaptureShape(*scenario->pool, std::max<int32_t>(1, scenario->pool->max_requests() - 2),
                     max_q_len, TreeMasksFor(*specs));
    absl::StatusOr<HostMetadata> replayed =
        PlanOnHost(scenario->batch, *scenario->pool, config, capture);
    FUZZ_CHECK(replayed.ok());
    const int32_t live = scenario->batch.batch_size();
    FUZZ_CHECK(replayed->worker_begin == plan->worker_begin);
    for (int32_t i = 0; i < live; ++i) {
      FUZZ_CHECK(replayed->cache_seqlens[i] == plan->cache_seqlens[i]);
      FUZZ_CHECK(replayed->cu_seqlens_q[i + 1] == plan->cu_seqlens_q[i + 1]);
      for (int32_t j = 0; j < plan->NumPages(i); ++j) {
        FUZZ_CHECK(replayed->page_table[int64_t{i} * replayed->layout.max_pages_per_request + j] ==
                   plan->page_table[int64_t{i} * plan->layout.max_pages_per_request + j]);
      }
    }
  }
}

}  // namespace
}  // namespace paged_attention

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  paged_attention::Run(absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
