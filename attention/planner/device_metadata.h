// DeviceMetadata: a plan's home on the GPU, for eager launches and CUDA-graph
// replay alike.
//
//   // Once, outside any capture: buffers sized for the largest batch served.
//   ASSIGN_OR_RETURN(auto metadata, DeviceMetadata::Create(
//       CaptureShape(pool, /*max_batch_size=*/256, /*max_q_len=*/4), config,
//       DeviceRequestTable{d_req_to_token, pool.max_requests(), pool.row_width()}));
//   // CUDA graph: capture one launch with the capacity view...
//   LaunchPagedAttention(args with metadata->metadata(), ...);   // inside stream capture
//   // ...then every step:
//   RETURN_IF_ERROR(metadata->Upload(batch, stream).status());  // then cudaGraphLaunch
//
//   // Eager: upload, then launch with the view tightened to this plan.
//   ASSIGN_OR_RETURN(PlanSummary plan, metadata->Upload(batch, stream));
//   LaunchPagedAttention(args with metadata->metadata_for(plan), ...);
//
// Upload runs THE planning routine (WritePlan) on the host into pinned
// staging, enqueues one copy of the used prefix of the plan to fixed device
// buffers and a small kernel that gathers the page table from the
// device-resident request-to-token table. Its host cost is flat in context
// length (no page-table work on the host). Eager and replayed launches of the
// same batch read the same plan, so their outputs are bit-identical.
#ifndef ATTENTION_PLANNER_DEVICE_METADATA_H_
#define ATTENTION_PLANNER_DEVICE_METADATA_H_

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "attention/base/device_buffer.h"
#include "attention/planner/attention_metadata.h"
#include "attention/planner/metadata_planner.h"
#include "spec_decode/batch_descriptor.h"

namespace paged_attention {

// The engine's device copy of the pool's request-to-token table.
struct DeviceRequestTable {
  const int32_t* req_to_token = nullptr;  // [num_rows, row_width] int32 slot ids, device memory
  int32_t num_rows = 0;
  int32_t row_width = 0;
};

class DeviceMetadata {
 public:
  // Allocates the device buffers and two pinned staging buffers for plans of
  // `shape` under `config`. Errors: those of LayoutFor (InvalidArgument),
  // InvalidArgument for a null or empty table or one narrower than
  // shape.max_kv_len, ResourceExhausted when memory runs out. Not for use
  // inside CUDA-graph capture (it allocates).
  static absl::StatusOr<std::unique_ptr<DeviceMetadata>> Create(const PlanShape& shape,
                                                                const PlannerConfig& config,
                                                                const DeviceRequestTable& table);
  ~DeviceMetadata();
  DeviceMetadata(const DeviceMetadata&) = delete;
  DeviceMetadata& operator=(const DeviceMetadata&) = delete;

  // Device pointers into the fixed buffers and the capacities: valid for every
  // upload of this object's life. Capture CUDA-graph launches with it.
  const AttentionMetadata& metadata() const { return metadata_; }
  // The same buffers with the launch scalars tightened to one upload's plan:
  // total_q_tokens is the planned token count (the lse row stride: exact for
  // an exact shape), and the kernels get only the CTAs this plan uses. Valid
  // until the next upload.
  AttentionMetadata metadata_for(const PlanSummary& plan) const;

  // Plans `batch` and enqueues its upload on `stream` (see the file comment).
  // Allocation-free. It never waits for the stream, except to reuse a
  // staging buffer whose copy (two uploads back) the GPU has not started yet.
  // Not inside stream capture. Errors: those of WritePlan (FailedPrecondition
  // for a batch that does not fit the shape), FailedPrecondition if the batch
  // was validated on a pool whose table is not this object's, Internal for a
  // CUDA failure. A rejected batch changes nothing on the device.
  absl::StatusOr<PlanSummary> Upload(const ValidatedBatch& batch, cudaStream_t stream);

  const PlanShape& shape() const { return shape_; }
  const PlanLayout& layout() const { return layout_; }
  const PlannerConfig& config() const { return config_; }

 private:
  // Offsets (int32 words) of the arrays in the plan block, each 16-byte aligned.
  struct BlockLayout {
    int64_t counters = 0, worker_begin = 0, cache_seqlens = 0, cu_seqlens_q = 0, rows = 0,
            merge_tasks = 0, tree_mask = 0, segments = 0, total = 0;
  };

  DeviceMetadata() = default;
  PlanSpans SpansInto(int32_t* words) const;

  PlanShape shape_;
  PlannerConfig config_;
  PlanLayout layout_;
  BlockLayout block_;
  DeviceRequestTable table_;
  DeviceBuffer device_block_;       // the plan (BlockLayout), copied from staging at each upload
  DeviceBuffer device_page_table_;  // [requests, max_pages_per_request], gathered on the device
  std::array<int32_t*, 2> staging_ = {nullptr, nullptr};    // pinned twins of device_block_
  std::array<cudaEvent_t, 2> copied_ = {nullptr, nullptr};  // recorded after each staging copy
  std::array<bool, 2> staging_pending_ = {false, false};
  int next_staging_ = 0;
  AttentionMetadata metadata_;
};

}  // namespace paged_attention

#endif  // ATTENTION_PLANNER_DEVICE_METADATA_H_
