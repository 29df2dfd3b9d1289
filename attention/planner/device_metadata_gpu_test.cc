// DeviceMetadata on a real GPU: an upload puts exactly the host plan on the
// device (the device page-table gather equals the host gather, the work plan
// is the host routine's), it allocates no device memory and does not wait for
// work queued before it, and a rejected batch changes nothing.
#include <atomic>
#include <chrono>
#include <cstring>
#include <optional>
#include <random>
#include <thread>

#include "attention/planner/device_metadata.h"
#include "attention/planner/metadata_planner.h"
#include "gtest/gtest.h"
#include "testing/batch_scenario.h"
#include "testing/gpu_attention.h"
#include "testing/gpu_test.h"
#include "testing/random_batch.h"
#include "testing/test_seed.h"

namespace paged_attention {
namespace {

constexpr int32_t kMaxBatch = 16;

class DeviceMetadataGpuTest : public GpuTest {};

PlannerConfig Config() {
  PlannerConfig config;
  config.num_q_heads = 8;
  config.num_kv_heads = 2;
  config.head_dim = 128;
  config.num_sms = 6;  // few workers, so plans cut and merge
  config.ctas_per_sm = 2;
  return config;
}

// Room for the largest random batch: kMaxBatch requests of up to 4x800 + 64
// tokens at page size 1.
ScenarioSpec FixedPool(ScenarioSpec spec) {
  spec.max_context_len = 4096;
  spec.num_pages = 65536;
  spec.max_requests = kMaxBatch + 4;
  return spec;
}

void ExpectSamePlan(const HostMetadata& device, const HostMetadata& host, int32_t live,
                    const std::string& where) {
  SCOPED_TRACE(where);
  ASSERT_EQ(device.cache_seqlens, host.cache_seqlens);
  ASSERT_EQ(device.cu_seqlens_q, host.cu_seqlens_q);
  ASSERT_EQ(device.counters, host.counters);
  ASSERT_EQ(device.worker_begin, host.worker_begin);
  const int32_t segments = host.summary.partition.num_segments;
  ASSERT_EQ(
      std::memcmp(device.segments.data(), host.segments.data(), segments * sizeof(WorkSegment)), 0);
  const int32_t merges = host.summary.partition.num_merge_tasks;
  ASSERT_EQ(
      std::memcmp(device.merge_tasks.data(), host.merge_tasks.data(), merges * sizeof(MergeTask)),
      0);
  for (int32_t i = 0; i < live; ++i) {
    for (int32_t j = 0; j < host.NumPages(i); ++j) {
      const int64_t at = int64_t{i} * host.layout.max_pages_per_request + j;
      ASSERT_EQ(device.page_table[at], host.page_table[at]) << "row " << i << " column " << j;
    }
  }
}

TEST_F(DeviceMetadataGpuTest, UploadPutsTheHostPlanAndPageTableOnTheDevice) {
  std::mt19937_64 rng(TestSeed());
  RandomBatchLimits limits;
  limits.max_batch_size = kMaxBatch;
  limits.max_extend = 8;
  int uploads = 0;
  for (int32_t page_size : {1, 3, 16, 64}) {
    for (const ModeCase& mode_case : AllModeCases()) {
      std::unique_ptr<DeviceMetadata> metadata;
      std::optional<DeviceTableCopy> device_table;
      for (int trial = 0; trial < 4; ++trial) {
        limits.max_prefix = trial % 2 == 0 ? 800 : 30;  // long, short, long, short
        const Scenario scenario =
            BuildScenario(FixedPool(RandomScenarioSpec(mode_case, page_size, limits, rng))).value();
        const KvPagePool& pool = *scenario.pool;
        const PlanShape shape = CaptureShape(pool, kMaxBatch, 8);
        if (metadata == nullptr) {
          device_table = DeviceTableCopy::Create(pool).value();
          metadata = DeviceMetadata::Create(shape, Config(), device_table->table()).value();
        }
        ASSERT_TRUE(device_table->Upload(pool).ok());
        ASSERT_TRUE(metadata->Upload(scenario.batch, nullptr).ok());
        const HostMetadata on_device = DownloadMetadata(*metadata).value();
        const HostMetadata on_host = PlanOnHost(scenario.batch, pool, Config(), shape).value();
        ExpectSamePlan(on_device, on_host, scenario.batch.batch_size(),
                       mode_case.Name() + " P" + std::to_string(page_size));
        if (HasFatalFailure()) return;
        ++uploads;
      }
    }
  }
  std::printf("device plan == host plan on %d uploads\n", uploads);
}

TEST_F(DeviceMetadataGpuTest, UploadNeitherAllocatesDeviceMemoryNorWaitsForTheStream) {
  ScenarioSpec spec;
  spec.mode = ForwardMode::kDraftExtendV2;
  spec.convention = SeqLensConvention::kIncludesNewTokens;
  spec.page_size = 16;
  spec.prefix_lens = {3000, 5, 77, 1024};
  spec.new_tokens = {4, 4, 4, 4};
  spec.spec.num_draft_tokens = 4;
  const Scenario scenario = BuildScenario(FixedPool(spec)).value();
  const KvPagePool& pool = *scenario.pool;
  const DeviceTableCopy device_table = DeviceTableCopy::Create(pool).value();
  auto metadata =
      DeviceMetadata::Create(CaptureShape(pool, kMaxBatch, 4), Config(), device_table.table())
          .value();
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_TRUE(metadata->Upload(scenario.batch, stream).ok());
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);

  // Hold the stream with a host callback until released; an upload that waited
  // for the stream would not return until the callback's 10 s timeout. Two
  // uploads may be in flight (two staging buffers); a third would wait for the
  // first's copy, by design.
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
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(metadata->Upload(scenario.batch, stream).ok());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const bool stream_still_held = cudaStreamQuery(stream) == cudaErrorNotReady;
  size_t free_after = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  release = true;
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_TRUE(stream_still_held) << "Upload waited for work queued before it";
  EXPECT_LT(seconds, 1.0);
  EXPECT_EQ(free_before, free_after) << "Upload allocated device memory";
  const HostMetadata uploaded = DownloadMetadata(*metadata).value();
  EXPECT_EQ(uploaded.cache_seqlens[0], 3004);
  EXPECT_EQ(uploaded.cache_seqlens[4], 0);  // a padding row reads no keys
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST_F(DeviceMetadataGpuTest, ARejectedBatchLeavesTheDevicePlanAsItWas) {
  ScenarioSpec spec;
  spec.mode = ForwardMode::kTargetVerify;
  spec.convention = SeqLensConvention::kPrefixOnly;
  spec.page_size = 16;
  spec.prefix_lens = {300, 40};
  spec.new_tokens = {4, 4};
  spec.spec.num_draft_tokens = 4;
  const Scenario small = BuildScenario(FixedPool(spec)).value();
  spec.new_tokens = {6, 6};
  spec.spec.num_draft_tokens = 6;  // more queries than the shape holds
  const Scenario wide = BuildScenario(FixedPool(spec)).value();
  const KvPagePool& pool = *small.pool;
  const DeviceTableCopy device_table = DeviceTableCopy::Create(pool).value();
  auto metadata =
      DeviceMetadata::Create(CaptureShape(pool, 4, 4), Config(), device_table.table()).value();
  ASSERT_TRUE(metadata->Upload(small.batch, nullptr).ok());
  const HostMetadata before = DownloadMetadata(*metadata).value();
  EXPECT_EQ(metadata->Upload(wide.batch, nullptr).status().code(),
            absl::StatusCode::kFailedPrecondition);
  const HostMetadata after = DownloadMetadata(*metadata).value();
  EXPECT_EQ(after.cache_seqlens, before.cache_seqlens);
  EXPECT_EQ(after.worker_begin, before.worker_begin);
  EXPECT_EQ(after.counters, before.counters);
}

}  // namespace
}  // namespace paged_attention
