// Runs the paged attention kernels over host-side inputs (a scenario's Q and
// K/V pool), eagerly or through a captured CUDA graph replayed with
// DeviceMetadata uploads, and brings the results back as doubles. For tests,
// the demo and the plan CLI's --run; not for serving (it copies whole pools).
//
//   ASSIGN_OR_RETURN(PlannerConfig config, GpuPlannerConfig(dtype, 32, 8, 128, options));
//   ASSIGN_OR_RETURN(auto runner, GpuAttentionRunner::Create(pool, CaptureShape(pool, 8, 4),
//                                                            config, dtype, LaunchKind::kGraph));
//   for (...) { ASSIGN_OR_RETURN(AttentionOutputs out, runner->Run(data, pool, batch, options)); }
#ifndef TESTING_GPU_ATTENTION_H_
#define TESTING_GPU_ATTENTION_H_

#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "attention/base/device_buffer.h"
#include "attention/kernel/paged_attention_args.h"
#include "attention/planner/device_metadata.h"
#include "attention/planner/metadata_planner.h"
#include "kv_cache/kv_cache.h"
#include "kv_cache/page_pool.h"
#include "spec_decode/batch_descriptor.h"
#include "testing/batch_scenario.h"

namespace paged_attention {

// The planner config for the current GPU: its SMs and the kernel's CTAs per
// SM for (dtype, head_dim), and the mask of `options`.
absl::StatusOr<PlannerConfig> GpuPlannerConfig(DType dtype, int32_t num_q_heads,
                                               int32_t num_kv_heads, int32_t head_dim,
                                               const AttentionOptions& options);

// A device copy of a pool's request-to-token table and the view of it that
// DeviceMetadata gathers page-table rows from. Upload() refreshes it after
// the pool changed; a pool of another table size is refused.
class DeviceTableCopy {
 public:
  static absl::StatusOr<DeviceTableCopy> Create(const KvPagePool& pool);
  absl::Status Upload(const KvPagePool& pool);  // synchronous
  DeviceRequestTable table() const {
    return DeviceRequestTable{buffer_.as<int32_t>(), rows_, row_width_};
  }

 private:
  DeviceBuffer buffer_;
  int32_t rows_ = 0, row_width_ = 0;
};

// One paged attention launch captured into a CUDA graph on `stream`, or
// `calls` launches one after the other (the same call repeated, as an
// engine's captured decode step runs one per layer; benchmarks divide a
// replay's time by `calls`).
class CapturedAttention {
 public:
  static absl::StatusOr<std::unique_ptr<CapturedAttention>> Capture(const PagedAttentionArgs& args,
                                                                    void* workspace,
                                                                    size_t workspace_bytes,
                                                                    cudaStream_t stream,
                                                                    int calls = 1);
  ~CapturedAttention();
  absl::Status Launch(cudaStream_t stream);

 private:
  CapturedAttention() = default;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

struct AttentionOutputs {
  std::vector<double> out;  // [tokens, num_q_heads, head_dim]: all shape tokens, live first
  std::vector<double> lse;  // [num_q_heads, tokens]
};

enum class LaunchKind {
  kEager,  // plan, upload and launch with the plan's exact view
  kGraph,  // capture once with the capacity view, then upload and replay
};

class GpuAttentionRunner {
 public:
  // Device buffers for `pool`'s table and K/V, Q/out/lse for `shape`'s tokens
  // and DeviceMetadata for `shape` under `config`.
  static absl::StatusOr<std::unique_ptr<GpuAttentionRunner>> Create(const KvPagePool& pool,
                                                                    const PlanShape& shape,
                                                                    const PlannerConfig& config,
                                                                    DType dtype, LaunchKind launch);
  ~GpuAttentionRunner();

  // Uploads `pool`'s table and `data` (K/V and Q), plans `batch` and runs it:
  // an eager launch, or a replay of the graph captured at the first Run (every
  // Run then needs the same options). Out and lse are zeroed first, so tokens
  // past the live ones read back as defined values.
  absl::StatusOr<AttentionOutputs> Run(const AttentionData& data, const KvPagePool& pool,
                                       const ValidatedBatch& batch,
                                       const AttentionOptions& options);
  // The last Run's plan.
  const PlanSummary& last_plan() const { return last_plan_; }

 private:
  GpuAttentionRunner() = default;

  LaunchKind launch_ = LaunchKind::kEager;
  DType dtype_ = DType::kBFloat16;
  PlannerConfig config_;
  std::unique_ptr<DeviceMetadata> metadata_;
  DeviceTableCopy req_to_token_;
  DeviceBuffer q_, out_, lse_, workspace_;
  std::unique_ptr<DeviceKvCache> kv_;
  std::unique_ptr<CapturedAttention> graph_;
  AttentionOptions captured_options_;
  cudaStream_t stream_ = nullptr;
  PlanSummary last_plan_;
};

// The last upload of `metadata` read back into host arrays (waits for the
// device): the per-request arrays, counters, work plan and page table, in a
// HostMetadata of the object's shape. For tests and tools, not serving.
absl::StatusOr<HostMetadata> DownloadMetadata(const DeviceMetadata& metadata);

// One-shot helpers over GpuAttentionRunner.
absl::StatusOr<AttentionOutputs> RunKernelEager(const AttentionData& data, const KvPagePool& pool,
                                                const ValidatedBatch& batch,
                                                const PlannerConfig& config,
                                                const AttentionOptions& options);
absl::StatusOr<AttentionOutputs> RunKernelGraphReplay(
    const AttentionData& data, const KvPagePool& pool, const ValidatedBatch& batch,
    const PlanShape& capture, const PlannerConfig& config, const AttentionOptions& options);

}  // namespace paged_attention

#endif  // TESTING_GPU_ATTENTION_H_
