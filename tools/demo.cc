// The demo: a skewed DRAFT_EXTEND_V2 batch, planned in both seq_lens
// conventions, eagerly and through CUDA-graph replay (with padding rows), run
// by the GPU kernels when a GPU is present and by the float64 host executor
// following the same work plan otherwise, and checked per request against the
// plain reference. The last column shows what a kernel reading only the prefix
// rows (the upstream bug) would have produced on the same batch.
//
//   bazel run //tools:demo
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "attention/base/device_info.h"
#include "attention/base/status_macros.h"
#include "attention/planner/metadata_planner.h"
#include "testing/attention_check.h"
#include "testing/batch_scenario.h"
#include "testing/gpu_attention.h"
#include "testing/host_executor.h"

namespace paged_attention {
namespace {

// The embedded default batch: one long request among short ones, prefixes
// ending mid-page and on page boundaries, 4 draft tokens each.
constexpr int32_t kPageSize = 16;
constexpr int32_t kDraftTokens = 4;
const std::vector<int32_t> kPrefixes = {1500, 7, 256, 61, 1};
constexpr int32_t kGraphCapacity = 8;  // replay pads 3 rows
constexpr int32_t kNumQHeads = 32, kNumKvHeads = 8, kHeadDim = 128;
constexpr DType kDType = DType::kBFloat16;

// Max |got - want| over the query tokens of request i.
double RequestError(const std::vector<double>& got, const std::vector<double>& want,
                    const ValidatedBatch& batch, int32_t i) {
  int64_t begin = 0;
  for (int32_t r = 0; r < i; ++r) begin += batch.requests()[r].new_tokens;
  const int64_t row = int64_t{kNumQHeads} * kHeadDim;
  return MaxAbsDiff(absl::MakeConstSpan(got).subspan(begin * row),
                    absl::MakeConstSpan(want).subspan(begin * row),
                    batch.requests()[i].new_tokens * row);
}

absl::Status Run() {
  const bool gpu = VisibleGpuCount() > 0;
  std::printf(
      "paged_attention demo: DRAFT_EXTEND_V2, page size %d, %d draft tokens, %d/%d heads, "
      "head dim %d, %s\n",
      kPageSize, kDraftTokens, kNumQHeads, kNumKvHeads, kHeadDim, DTypeName(kDType));
  if (gpu) {
    ASSIGN_OR_RETURN(DeviceInfo device, QueryDevice(0));
    std::printf("running the CUDA kernel on %s\n", device.name.c_str());
  } else {
    std::printf("no GPU (%s): running the float64 host executor\n", NoGpuReason().c_str());
  }
  const double tolerance = gpu ? 3e-2 : 1e-9;  // bf16 output rounding vs float64 exactness
  const AttentionOptions options = DefaultOptions(kHeadDim);
  PlannerConfig planner = HostPlannerConfig(kNumQHeads, kNumKvHeads, kHeadDim, options);
  if (gpu) {
    ASSIGN_OR_RETURN(planner, GpuPlannerConfig(kDType, kNumQHeads, kNumKvHeads, kHeadDim, options));
  }
  std::printf("work plan for %d SMs x %d attention CTAs per SM\n", planner.num_sms,
              planner.ctas_per_sm);
  std::printf("\n%-20s %-6s %3s %7s %4s %9s %6s %13s %16s\n", "seq_lens convention", "path", "req",
              "prefix", "new", "rows read", "pages", "max abs err", "prefix-only err");
  bool all_ok = true;
  for (SeqLensConvention convention :
       {SeqLensConvention::kPrefixOnly, SeqLensConvention::kIncludesNewTokens}) {
    ScenarioSpec spec;
    spec.mode = ForwardMode::kDraftExtendV2;
    spec.convention = convention;
    spec.page_size = kPageSize;
    spec.prefix_lens = kPrefixes;
    spec.new_tokens.assign(kPrefixes.size(), kDraftTokens);
    spec.spec.num_draft_tokens = kDraftTokens;
    spec.max_requests = kGraphCapacity + 2;
    spec.seed = 2026;
    ASSIGN_OR_RETURN(Scenario scenario, BuildScenario(spec));
    const ValidatedBatch& batch = scenario.batch;
    const KvPagePool& pool = *scenario.pool;
    ASSIGN_OR_RETURN(AttentionData data, MakeAttentionData(pool, batch, kNumQHeads, kNumKvHeads,
                                                           kHeadDim, kDType, spec.seed));
    const HostAttentionResult reference = AttendLogicalSequences(
        LogicalRequestsOf(pool, batch, data), kNumQHeads, kNumKvHeads, kHeadDim, options);

    ASSIGN_OR_RETURN(HostMetadata eager, PlanEager(batch, pool, planner));
    // The upstream bug: the kernel reads only the prefix rows.
    HostMetadata prefix_only = eager;
    for (int32_t i = 0; i < batch.batch_size(); ++i) {
      prefix_only.cache_seqlens[i] = batch.requests()[i].prefix_len;
    }
    ASSIGN_OR_RETURN(HostAttentionResult buggy,
                     RunHostPagedAttention(HostArgs(data, prefix_only.View(), options)));

    const PlanShape capture = CaptureShape(pool, kGraphCapacity, kDraftTokens);
    for (const char* path : {"eager", "replay"}) {
      const bool replay = std::string(path) == "replay";
      std::vector<double> out;
      HostMetadata used = eager;
      if (replay) {
        ASSIGN_OR_RETURN(used, PlanOnHost(batch, pool, planner, capture));
      }
      if (gpu) {
        ASSIGN_OR_RETURN(AttentionOutputs outputs,
                         replay ? RunKernelGraphReplay(data, pool, batch, capture, planner, options)
                                : RunKernelEager(data, pool, batch, planner, options));
        out = std::move(outputs.out);
      } else {
        // The float64 executor following the work plan the kernels would run.
        data.q.resize(int64_t{used.View().total_q_tokens} * kNumQHeads * kHeadDim *
                      DTypeSize(kDType));
        ASSIGN_OR_RETURN(HostAttentionResult result,
                         RunHostPlannedAttention(HostArgs(data, used.View(), options)));
        out = std::move(result.out);
      }
      for (int32_t i = 0; i < batch.batch_size(); ++i) {
        const double error = RequestError(out, reference.out, batch, i);
        const double bug_error = RequestError(buggy.out, reference.out, batch, i);
        all_ok = all_ok && error <= tolerance;
        std::printf("%-20s %-6s %3d %7d %4d %9d %6d %13.2e %16.3f\n",
                    std::string(SeqLensConventionName(convention)).c_str(), path, i,
                    batch.requests()[i].prefix_len, batch.requests()[i].new_tokens,
                    used.cache_seqlens[i], used.NumPages(i), error, bug_error);
      }
      std::printf(
          "%-20s %-6s  work plan: %d segments on %d of %d workers, %d merged units%s\n", "", path,
          used.summary.partition.num_segments, used.summary.partition.num_active_workers,
          static_cast<int32_t>(used.layout.num_workers), used.summary.partition.num_merge_tasks,
          replay ? "; padding rows read no keys (zeros)" : "");
    }
    std::printf(
        "%-20s max_seq_len_k %d = max_i(prefix + new); the prefix-only plan reads %d\n", "",
        eager.summary.max_seq_len_k,
        *std::max_element(prefix_only.cache_seqlens.begin(), prefix_only.cache_seqlens.end()));
    // The same engine inputs declared with the other convention are rejected.
    EngineBatchInputs mislabelled = scenario.inputs;
    mislabelled.seq_lens_convention = convention == SeqLensConvention::kPrefixOnly
                                          ? SeqLensConvention::kIncludesNewTokens
                                          : SeqLensConvention::kPrefixOnly;
    const absl::StatusOr<ValidatedBatch> rejected = BuildBatchDescriptor(mislabelled, pool);
    std::printf(
        "%-20s declared as %s instead: %s\n", "",
        std::string(SeqLensConventionName(*mislabelled.seq_lens_convention)).c_str(),
        rejected.ok() ? "ACCEPTED (wrong!)" : std::string(rejected.status().message()).c_str());
    all_ok = all_ok && !rejected.ok();
  }
  std::printf("\n%s: every request within %.0e of the float64 reference\n",
              all_ok ? "OK" : "FAILED", tolerance);
  if (!all_ok) return absl::InternalError("some request exceeded the tolerance");
  return absl::OkStatus();
}

}  // namespace
}  // namespace paged_attention

int main() {
  const absl::Status status = paged_attention::Run();
  if (!status.ok()) {
    std::fprintf(stderr, "demo: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
