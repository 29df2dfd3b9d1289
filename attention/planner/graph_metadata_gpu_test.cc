// The device side of the CUDA-graph path, on a real GPU: the device page-table
// gather equals the host gather, and replay neither allocates device memory
// nor waits for the stream.
#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include "attention/base/device_buffer.h"
#include "attention/planner/graph_metadata.h"
#include "gtest/gtest.h"
#include "testing/gpu_test.h"
#include "testing/random_batch.h"
#include "tools/batch_scenario.h"

namespace paged_attention {
namespace {

constexpr int32_t kMaxBatch = 16;

class GraphMetadataGpuTest : public GpuTest {};

// Room for the largest random batch: kMaxBatch requests of up to 4x800 + 64
// tokens at page size 1.
ScenarioSpec FixedPool(ScenarioSpec spec) {
  spec.max_context_len = 4096;
  spec.num_pages = 65536;
  spec.max_requests = kMaxBatch + 4;
  return spec;
}

TEST_F(GraphMetadataGpuTest, DeviceGatherMatchesHostGatherOverRandomBatches) {
  std::mt19937_64 rng(std::random_device{}());
  const uint64_t seed = rng();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  rng.seed(seed);
  RandomBatchLimits limits;
  limits.max_batch_size = kMaxBatch;
  limits.max_extend = 8;
  int replays = 0;
  for (int32_t page_size : {1, 3, 16, 64}) {
    for (const ModeCase& mode_case : AllModeCases()) {
      std::unique_ptr<GraphMetadataState> device_state, host_state;
      DeviceBuffer device_table;
      for (int trial = 0; trial < 6; ++trial) {
        limits.max_prefix = trial % 2 == 0 ? 800 : 30;  // long, short, long, ...
        const Scenario scenario =
            BuildScenario(FixedPool(RandomScenarioSpec(mode_case, page_size, limits, rng))).value();
        const KvPagePool& pool = *scenario.pool;
        if (device_state == nullptr) {
          device_table =
              DeviceBuffer::Allocate(pool.req_to_token().size() * sizeof(int32_t), "req_to_token")
                  .value();
          device_state = GraphMetadataState::CaptureOnDevice(
                             CaptureConfigForPool(pool, kMaxBatch, 8), device_table.as<int32_t>())
                             .value();
          host_state =
              GraphMetadataState::CaptureOnHost(CaptureConfigForPool(pool, kMaxBatch, 8)).value();
        }
        ASSERT_TRUE(device_table
                        .CopyFromHost(pool.req_to_token().data(),
                                      pool.req_to_token().size() * sizeof(int32_t))
                        .ok());
        ASSERT_TRUE(device_state->Replay(scenario.batch, pool).ok());
        ASSERT_TRUE(host_state->Replay(scenario.batch, pool).ok());
        const HostMetadata on_device = device_state->ReadBack().value();
        const HostMetadata on_host = host_state->ReadBack().value();
        ASSERT_EQ(on_device.cache_seqlens, on_host.cache_seqlens);
        ASSERT_EQ(on_device.cu_seqlens_q, on_host.cu_seqlens_q);
        ASSERT_EQ(on_device.cu_seqlens_k, on_host.cu_seqlens_k);
        const int32_t columns = (on_host.max_seq_len_k + page_size - 1) / page_size;
        for (int32_t i = 0; i < kMaxBatch; ++i) {
          for (int32_t j = 0; j < columns; ++j) {
            const int64_t at = int64_t{i} * on_host.max_pages_per_request + j;
            ASSERT_EQ(on_device.page_table[at], on_host.page_table[at])
                << mode_case.Name() << " P" << page_size << " row " << i << " column " << j;
          }
        }
        ++replays;
      }
    }
  }
  std::printf("device gather == host gather on %d replays\n", replays);
}

TEST_F(GraphMetadataGpuTest, ReplayNeitherAllocatesDeviceMemoryNorWaitsForTheStream) {
  ScenarioSpec spec;
  spec.mode = ForwardMode::kDraftExtendV2;
  spec.convention = SeqLensConvention::kIncludesNewTokens;
  spec.page_size = 16;
  spec.prefix_lens = {3000, 5, 77, 1024};
  spec.new_tokens = {4, 4, 4, 4};
  spec.spec.num_draft_tokens = 4;
  const Scenario scenario = BuildScenario(FixedPool(spec)).value();
  const KvPagePool& pool = *scenario.pool;
  DeviceBuffer device_table =
      DeviceBuffer::Allocate(pool.req_to_token().size() * sizeof(int32_t), "req_to_token").value();
  ASSERT_TRUE(
      device_table
          .CopyFromHost(pool.req_to_token().data(), pool.req_to_token().size() * sizeof(int32_t))
          .ok());
  auto state = GraphMetadataState::CaptureOnDevice(CaptureConfigForPool(pool, kMaxBatch, 4),
                                                   device_table.as<int32_t>())
                   .value();
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_TRUE(state->Replay(scenario.batch, pool, stream).ok());
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);

  // Hold the stream with a host callback until released; a replay that waited
  // for the stream would not return until the callback's 10 s timeout.
  static std::atomic<bool> release{false};
  release = false;
  ASSERT_EQ(cudaLaunchHostFunc(
                stream,
                [](void*) {
                  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
                  while (!release && std::chrono::steady_clock::now() < deadline) {
                    std::this_thread::yield();
                  }
                },
                nullptr),
            cudaSuccess);
  size_t free_before = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(state->Replay(scenario.batch, pool, stream).ok());
  const bool stream_still_held = cudaStreamQuery(stream) == cudaErrorNotReady;
  size_t free_after = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  release = true;
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_TRUE(stream_still_held) << "Replay waited for work queued before it";
  EXPECT_EQ(free_before, free_after) << "Replay allocated device memory";
  const HostMetadata replay = state->ReadBack().value();
  EXPECT_EQ(replay.cache_seqlens[0], 3004);
  EXPECT_EQ(replay.cache_seqlens[4], 1);
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

}  // namespace
}  // namespace paged_attention
