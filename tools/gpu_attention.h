// Runs the paged attention CUDA kernel over host-side inputs (a scenario's
// Q and K/V pool), eagerly or through a captured CUDA graph replayed with the
// graph metadata state, and brings the results back as doubles. For the demo
// and the plan CLI's --run; not for serving (it allocates per call).
#ifndef TOOLS_GPU_ATTENTION_H_
#define TOOLS_GPU_ATTENTION_H_

#include <vector>

#include "absl/status/statusor.h"
#include "attention/kernel/paged_attention_args.h"
#include "attention/planner/graph_metadata.h"
#include "attention/planner/metadata_planner.h"
#include "kv_cache/page_pool.h"
#include "spec_decode/batch_descriptor.h"
#include "tools/batch_scenario.h"

namespace paged_attention {

struct AttentionOutputs {
  std::vector<double> out;  // [tokens, num_q_heads, head_dim]
  std::vector<double> lse;  // [num_q_heads, tokens]
};

// The kernel with the eager plan's metadata (tokens = plan.total_q_tokens).
absl::StatusOr<AttentionOutputs> RunKernelEager(const AttentionData& data, const HostMetadata& plan,
                                                const AttentionOptions& options);

// Captures the kernel into a CUDA graph over a device GraphMetadataState made
// with `capture`, replays the state for `batch`, launches the graph, and
// returns all capacity tokens (live ones first, then padding).
absl::StatusOr<AttentionOutputs> RunKernelGraphReplay(const AttentionData& data,
                                                      const KvPagePool& pool,
                                                      const BatchDescriptor& batch,
                                                      const GraphCaptureConfig& capture,
                                                      const AttentionOptions& options);

}  // namespace paged_attention

#endif  // TOOLS_GPU_ATTENTION_H_
