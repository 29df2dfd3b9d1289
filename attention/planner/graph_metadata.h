// The metadata planner, CUDA-graph path: fixed buffers at capture, in-place
// updates at replay.
//
//   // Capture time: buffers sized for the largest batch the graph serves.
//   ASSIGN_OR_RETURN(auto state, GraphMetadataState::CaptureOnDevice(config, d_req_to_token));
//   LaunchPagedAttention(args with state->metadata(), ...);   // inside stream capture
//   // Every step:
//   RETURN_IF_ERROR(state->Replay(batch, pool, stream));      // then cudaGraphLaunch
//
// metadata() holds only pointers into the fixed buffers and capacities, so the
// kernel captured with it stays valid. Replay of a batch of raw_bs <= capacity
// requests (same per-request formula as PlanEager, see metadata_planner.h):
//   - copies only per-request lengths and rows host -> device, in one copy from
//     a staging array sized at capture (cudaMemcpyAsync from pageable memory
//     stages the bytes at once, so the host never waits for the device);
//   - gathers the page table on the device from the device-resident
//     request-to-token table with one small kernel, refreshing every column the
//     kernel may read, ceil(max_seq_len_k / page_size), so stale columns from a
//     longer or shorter earlier batch never survive;
//   - pads rows raw_bs..capacity-1: the reserved dummy row 0 (sink page 0), k
//     length 1, max_q_len queries: the kernel reads one finite sink row there;
//   - allocates nothing (host or device) and never synchronizes the host.
// CaptureOnHost keeps the same buffers in host memory and gathers on the host,
// for CPU builds and as the twin the device gather is tested against.
#ifndef ATTENTION_PLANNER_GRAPH_METADATA_H_
#define ATTENTION_PLANNER_GRAPH_METADATA_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "attention/base/device_buffer.h"
#include "attention/planner/attention_metadata.h"
#include "attention/planner/metadata_planner.h"
#include "kv_cache/page_pool.h"
#include "spec_decode/batch_descriptor.h"

namespace paged_attention {

struct GraphCaptureConfig {
  int32_t max_batch_size = 0;  // requests the captured graph serves, padding included
  int32_t max_q_len = 1;       // query tokens per request: 1 (decode), nd (verify, draft extend)
  int32_t page_size = 0;       // of the pool
  int32_t row_width = 0;       // request-to-token row width, speculative headroom included
  int32_t num_rows = 0;        // rows of the request-to-token table (pool max_requests)
  PlannerConfig planner;       // for the split-KV plan, made for the capacity
};

// A capture config for graphs over `pool`'s table: its page size, row width and
// rows, for up to `max_batch_size` requests of up to `max_q_len` queries.
GraphCaptureConfig CaptureConfigForPool(const KvPagePool& pool, int32_t max_batch_size,
                                        int32_t max_q_len, const PlannerConfig& planner = {});

class GraphMetadataState {
 public:
  // Both captures: InvalidArgument naming the GraphCaptureConfig field for a
  // non-positive field or capacities whose int32 metadata would overflow
  // (max_batch_size * max_q_len or max_batch_size * row_width > INT32_MAX).
  // Buffers on the GPU; `device_req_to_token` is the engine's device copy of
  // the pool's table ([num_rows, row_width] int32), read at every replay.
  static absl::StatusOr<std::unique_ptr<GraphMetadataState>> CaptureOnDevice(
      const GraphCaptureConfig& config, const int32_t* device_req_to_token);
  // Buffers in host memory; replay gathers from the pool's host table.
  static absl::StatusOr<std::unique_ptr<GraphMetadataState>> CaptureOnHost(
      const GraphCaptureConfig& config);

  // Capacities and pointers into the fixed buffers (device or host, per the
  // capture). Identical on every call: hand it to the kernel at capture.
  const AttentionMetadata& metadata() const { return metadata_; }

  // Updates the fixed buffers for `batch` (see the file comment). Checks only
  // what keeps the buffers in bounds, allocation-free: FailedPrecondition for a
  // batch larger than the capacity or a request with more than max_q_len
  // queries, InvalidArgument for a row or length outside the table. The full
  // slot check belongs to BuildBatchDescriptor, before this call.
  absl::Status Replay(const BatchDescriptor& batch, const KvPagePool& pool,
                      cudaStream_t stream = nullptr);

  int32_t live_batch_size() const { return live_batch_size_; }
  // max_i cache_seqlens[i] of the last replay (padding rows count as 1).
  int32_t replay_max_seq_len_k() const { return replay_max_seq_len_k_; }

  // The last replay's metadata as host arrays (all capacity rows; page table
  // columns past the refreshed ones are left as they were). Copies from the
  // device for a device state: for tests and tools, not for the serving loop.
  absl::StatusOr<HostMetadata> ReadBack() const;

 private:
  explicit GraphMetadataState(const GraphCaptureConfig& config);
  void PointMetadataAt(int32_t* lengths_base, int32_t* page_table);

  GraphCaptureConfig config_;
  bool on_device_ = false;
  const int32_t* device_req_to_token_ = nullptr;
  // [rows | cache_seqlens | cu_seqlens_q | cu_seqlens_k]: bs + bs + (bs+1) + (bs+1) int32.
  std::vector<int32_t> staging_;
  std::vector<int32_t> host_page_table_;  // host capture: the page table itself
  DeviceBuffer device_lengths_;           // device capture: staging_'s twin
  DeviceBuffer device_page_table_;
  AttentionMetadata metadata_;
  int32_t live_batch_size_ = 0;
  int32_t replay_max_seq_len_k_ = 0;
};

}  // namespace paged_attention

#endif  // ATTENTION_PLANNER_GRAPH_METADATA_H_
