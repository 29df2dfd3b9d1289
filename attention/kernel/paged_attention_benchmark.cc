// Benchmarks of the paged attention kernels on decode / draft-extend / verify
// shapes, timed as CUDA-graph replays of one launch (attention [+ merge kernel])
// with CUDA events: each repetition is the median of 31 replays, with L2
// flushed before every replay unless the case says l2:warm. The flush reads a
// 256 MiB buffer (a write would leave 60 MB of dirty lines for the timed call
// to write back; tools/peer_benchmark.py flushes the same way). A warm replay
// waits behind a 50-us hold of the stream instead, so that, as behind the
// flush, its events and launch are enqueued before the GPU reaches them and
// the time is the GPU's, without the host's submission of the graph. Every case's
// K/V pools sit in one arena allocated once per process (SharedBuffers), so a
// case's time does not depend on the allocations of the cases before it.
//
// Names: BM_PagedAttention<Case>/heads:Hq_Hkv/hd:D/batch:B/q:Q/kv:L/page:P[/dtype:fp16]
//        [/tree:T][/l2:warm]
// (TreeVerify / TreeDraftDecode cases: tree:<shape>_topk<K> or tree:step<S>_topk<K>; compare
// them with the Verify / DraftExtend case of the same other arguments; LargeGraph cases:
// .../merge_capacity:M, a one-request verify whose merge launch is sized for M tasks, as in a
// graph captured for a larger batch: compare with the Verify case of the same shape;
// OneTileInGraph cases: .../calls:N, N one-tile calls captured in one graph, timed per call;
// OneTileFullGrid cases: .../grid:all, the one-tile call launched with a CTA for every worker,
// as a graph captured with DeviceMetadata's capacity view launches it;
// Gqa cases: decode and verify at GQA ratios that are not powers of two, 24/8, 40/8, 28/4;
// Window / Softcap cases: .../window:W (a sliding window of W keys before the diagonal) or
// .../softcap:S (logits capped at S), each beside a twin without the option that reads the
// same keys: tools/peer_benchmark.py prints their ratio)
// Counters:
//   kv_bytes  K and V bytes read once per (request, KV head); with a window, of
//             only the keys it holds (benchmark_shapes.h, KeysRead)
//   bytes     kv_bytes + Q, out and lse (what one call must move)
//   TB/s      bytes / time
//   E         TB/s over the device-to-device copy rate measured in this run
//   TFLOP/s   4 * q * num_q_heads * kv * head_dim per request / time
//   workers, segments, merges   the work plan's shape
//   sm_MHz, power_W   the SM clock and board power (NVML), median of samples
//             read until each replay ended: compute-bound cases run as fast as
//             the clock the GPU holds under load (testing/gpu_clocks.h;
//             --replay_gap_us idles between replays, testing/benchmark_main.h).
//             The driver averages power over about a second, so power_W lags
//             a short case and tells mostly what ran before it
// Run with --benchmark_out=FILE --benchmark_out_format=json for the dashboard
// and tools/peer_benchmark.py.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "attention/base/ceil_div.h"
#include "attention/base/cuda_status.h"
#include "attention/base/device_buffer.h"
#include "attention/base/device_info.h"
#include "attention/base/status_macros.h"
#include "attention/kernel/benchmark_shapes.h"
#include "attention/kernel/paged_attention.h"
#include "attention/planner/metadata_planner.h"
#include "attention/planner/work_partition.h"
#include "benchmark/benchmark.h"
#include "spec_decode/draft_tree.h"
#include "testing/benchmark_main.h"
#include "testing/gpu_attention.h"
#include "testing/gpu_clocks.h"
#include "testing/random_batch.h"
#include "testing/random_fill.h"

namespace paged_attention {
namespace {

constexpr int kReplays = 31;
constexpr size_t kFlushBytes = size_t{256} << 20;  // > the 60 MB L2
constexpr int kWarmHoldMicroseconds = 50;          // > the host's event + graph launch

struct Case {
  AttentionBenchmarkShape shape;  // what is timed (benchmark_shapes.h)
  std::vector<int32_t> q_lens, k_lens;
  // Tree cases: the kernel's mask word of every query token
  // (AttentionMetadata::tree_mask); empty for chains.
  std::vector<uint64_t> tree_words;
  std::string name;
};

// Everything one case needs on the device, with its plan captured in a graph.
struct Setup {
  void* k = nullptr;      // in SharedBuffers::kv
  void* v = nullptr;      // in SharedBuffers::kv
  void* flush = nullptr;  // SharedBuffers::flush
  DeviceBuffer q, out, lse, cache_seqlens, cu_seqlens_q, page_table, tree_mask, worker_begin,
      segments, merge_tasks, counters, workspace;
  std::unique_ptr<CapturedAttention> graph;
  PartitionCounts counts;
  int32_t kv_heads_per_unit = 1;  // WorkPlanView::kv_heads_per_unit
  cudaStream_t stream = nullptr;
  ~Setup() {
    graph.reset();
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
};

// Pages of case `c`'s pool: each request's keys, in whole pages.
int64_t NumPages(const Case& c) {
  int64_t pages = 0;
  for (int32_t k_len : c.k_lens) pages += CeilDiv(k_len, c.shape.page_size);
  return pages;
}

// Elements of one of case `c`'s K and V pools.
int64_t PoolElements(const Case& c) {
  return NumPages(c) * c.shape.page_size * c.shape.num_kv_heads * c.shape.head_dim;
}

std::vector<Case> AllCases();

// Device memory every case of the process shares: the L2 flush buffer, and
// one arena for each case's K and V pools, allocated once at the size of the
// largest case (as an engine allocates its KV pool at startup). With pools
// allocated per case, a case's time depended on the cases run before it:
// draft-extend 32/8 q2 b1 128k took 134 us after small cases and 151 us after
// the 32/32 decode cases had allocated and freed 8.6 GB (NOTES.md, Variants).
struct SharedBuffers {
  DeviceBuffer flush, kv;
};

absl::StatusOr<SharedBuffers*> Shared() {
  static SharedBuffers* shared = nullptr;  // never freed: it lives as long as the process
  if (shared != nullptr) return shared;
  int64_t largest = 0;
  for (const Case& c : AllCases()) largest = std::max(largest, PoolElements(c));
  auto buffers = std::make_unique<SharedBuffers>();
  ASSIGN_OR_RETURN(buffers->flush, DeviceBuffer::Allocate(kFlushBytes, "l2 flush"));
  ASSIGN_OR_RETURN(buffers->kv, DeviceBuffer::Allocate(size_t(2 * largest) * 2, "k/v arena"));
  shared = buffers.release();
  return shared;
}

template <typename T>
absl::Status Upload(DeviceBuffer& buffer, const std::vector<T>& host, const char* what) {
  ASSIGN_OR_RETURN(buffer,
                   DeviceBuffer::Allocate(std::max<size_t>(host.size() * sizeof(T), 16), what));
  return buffer.Upload(host);
}

absl::Status Prepare(const Case& c, Setup& setup) {
  const DType dtype = c.shape.fp16 ? DType::kFloat16 : DType::kBFloat16;
  const int32_t batch = static_cast<int32_t>(c.q_lens.size());
  std::vector<int32_t> cu_q(batch + 1, 0);
  int32_t max_pages = 1, max_q = 0;
  for (int32_t i = 0; i < batch; ++i) {
    cu_q[i + 1] = cu_q[i] + c.q_lens[i];
    max_pages = std::max(max_pages, CeilDiv(c.k_lens[i], c.shape.page_size));
    max_q = std::max(max_q, c.q_lens[i]);
  }
  const int64_t num_pages = NumPages(c);
  // Random page order, as a long-running server's pool would have.
  std::vector<int32_t> order(num_pages);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(5));
  std::vector<int32_t> table(int64_t{batch} * max_pages, 0);
  int64_t next = 0;
  for (int32_t i = 0; i < batch; ++i) {
    for (int32_t j = 0; j < CeilDiv(c.k_lens[i], c.shape.page_size); ++j) {
      table[int64_t{i} * max_pages + j] = order[next++];
    }
  }
  const int64_t pool_elements = PoolElements(c);
  const int64_t q_elements = int64_t{cu_q[batch]} * c.shape.num_q_heads * c.shape.head_dim;
  ASSIGN_OR_RETURN(SharedBuffers * shared, Shared());
  setup.k = shared->kv.data();
  setup.v = shared->kv.as<char>() + pool_elements * 2;
  setup.flush = shared->flush.data();
  ASSIGN_OR_RETURN(setup.q, DeviceBuffer::Allocate(q_elements * 2, "q"));
  ASSIGN_OR_RETURN(setup.out, DeviceBuffer::Allocate(q_elements * 2, "out"));
  ASSIGN_OR_RETURN(setup.lse,
                   DeviceBuffer::Allocate(int64_t{cu_q[batch]} * c.shape.num_q_heads * 4, "lse"));
  RETURN_IF_ERROR(CudaCall(FillRandom16(setup.k, pool_elements, dtype, 1, nullptr), "fill k"));
  RETURN_IF_ERROR(CudaCall(FillRandom16(setup.v, pool_elements, dtype, 2, nullptr), "fill v"));
  RETURN_IF_ERROR(CudaCall(FillRandom16(setup.q.data(), q_elements, dtype, 3, nullptr), "fill q"));

  // The causal plan of this GPU's geometry for the case's options, as the
  // planner makes it (a window cuts every unit's key range to it).
  AttentionOptions options;
  options.softmax_scale = 1.0f / std::sqrt(static_cast<float>(c.shape.head_dim));
  options.window_left = c.shape.window_left;
  options.softcap = static_cast<float>(c.shape.softcap);
  ASSIGN_OR_RETURN(const PlannerConfig planner,
                   GpuPlannerConfig(dtype, c.shape.num_q_heads, c.shape.num_kv_heads,
                                    c.shape.head_dim, options));
  // Head_dim 64 decode plans units of KV head pairs, as the planner does.
  PlanShape shape;
  shape.max_batch_size = batch;
  shape.max_q_len = max_q;
  shape.page_size = c.shape.page_size;
  shape.tree_masks = c.tree_words.empty() ? TreeMasks::kNone : TreeMasks::kPerQueryToken;
  setup.kv_heads_per_unit = KvHeadsPerUnit(planner, shape);
  const PartitionConfig config = PartitionConfigFor(planner, setup.kv_heads_per_unit);
  const int64_t units = MaxUnits(config, batch, max_q);
  std::vector<int32_t> worker_begin(config.num_workers + 1);
  std::vector<WorkSegment> segments(std::max<int64_t>(MaxSegments(config, units), 1));
  std::vector<MergeTask> merge_tasks(
      std::max<int64_t>({MaxMergeTasks(config, units), c.shape.merge_task_capacity, 1}));
  ASSIGN_OR_RETURN(setup.counts, PartitionWork(cu_q, c.k_lens, config,
                                               PartitionBuffers{absl::MakeSpan(worker_begin),
                                                                absl::MakeSpan(segments),
                                                                absl::MakeSpan(merge_tasks)}));
  std::vector<int32_t> counters(kNumPlanCounters, 0);
  counters[kPlanNumMergeTasks] = setup.counts.num_merge_tasks;
  RETURN_IF_ERROR(Upload(setup.cache_seqlens, c.k_lens, "cache_seqlens"));
  RETURN_IF_ERROR(Upload(setup.cu_seqlens_q, cu_q, "cu_seqlens_q"));
  RETURN_IF_ERROR(Upload(setup.page_table, table, "page_table"));
  RETURN_IF_ERROR(Upload(setup.worker_begin, worker_begin, "worker_begin"));
  RETURN_IF_ERROR(Upload(setup.segments, segments, "segments"));
  RETURN_IF_ERROR(Upload(setup.merge_tasks, merge_tasks, "merge_tasks"));
  RETURN_IF_ERROR(Upload(setup.counters, counters, "counters"));

  PagedAttentionArgs args;
  args.dtype = dtype;
  args.num_q_heads = c.shape.num_q_heads;
  args.num_kv_heads = c.shape.num_kv_heads;
  args.head_dim = c.shape.head_dim;
  args.num_pages = static_cast<int32_t>(num_pages);
  args.q = setup.q.data();
  args.k_cache = setup.k;
  args.v_cache = setup.v;
  args.out = setup.out.data();
  args.lse = setup.lse.as<float>();
  AttentionMetadata& md = args.metadata;
  md.batch_size = batch;
  md.total_q_tokens = cu_q[batch];
  md.max_seq_len_q = max_q;
  md.max_seq_len_k = *std::max_element(c.k_lens.begin(), c.k_lens.end());
  md.page_size = c.shape.page_size;
  md.max_pages_per_request = max_pages;
  md.cache_seqlens = setup.cache_seqlens.as<int32_t>();
  md.cu_seqlens_q = setup.cu_seqlens_q.as<int32_t>();
  md.page_table = setup.page_table.as<int32_t>();
  if (!c.tree_words.empty()) {
    RETURN_IF_ERROR(Upload(setup.tree_mask, c.tree_words, "tree_mask"));
    md.tree_mask = setup.tree_mask.as<uint64_t>();
  }
  WorkPlanView& plan = md.plan;
  // As DeviceMetadata::metadata_for launches a plan: CTAs for the workers it
  // uses; or, as a graph captured with its capacity view, for every worker.
  plan.num_workers = c.shape.every_worker ? config.num_workers : setup.counts.worker_span;
  plan.max_segments = static_cast<int32_t>(segments.size());
  // The plan's exact merge count: what an eager launch of this plan sizes
  // (or the capacity of a larger graph's capture).
  plan.max_merge_tasks = std::max(setup.counts.num_merge_tasks, c.shape.merge_task_capacity);
  plan.max_partials = std::max(setup.counts.num_partials, 1);
  plan.num_kv_heads = c.shape.num_kv_heads;
  plan.group = c.shape.num_q_heads / c.shape.num_kv_heads;
  plan.head_dim = c.shape.head_dim;
  plan.kv_heads_per_unit = setup.kv_heads_per_unit;
  plan.member_pair_offset = setup.counts.member_pair_offset;
  plan.member_pair_unit_offset = setup.counts.member_pair_unit_offset;
  plan.window_left = config.window_left;
  plan.worker_begin = setup.worker_begin.as<int32_t>();
  plan.segments = setup.segments.as<WorkSegment>();
  plan.merge_tasks = setup.merge_tasks.as<MergeTask>();
  plan.counters = setup.counters.as<int32_t>();
  args.options = options;
  ASSIGN_OR_RETURN(setup.workspace, DeviceBuffer::Allocate(WorkspaceBytes(md), "workspace"));
  RETURN_IF_ERROR(CudaCall(cudaStreamCreateWithFlags(&setup.stream, cudaStreamNonBlocking),
                           "cudaStreamCreateWithFlags"));
  ASSIGN_OR_RETURN(setup.graph, CapturedAttention::Capture(args, setup.workspace.data(),
                                                           setup.workspace.size_bytes(),
                                                           setup.stream, c.shape.calls_per_graph));
  return CudaCall(cudaStreamSynchronize(setup.stream), "cudaStreamSynchronize");
}

// The upper median (the middle of an odd count); 0 for none.
template <typename T>
T Median(std::vector<T> values) {
  if (values.empty()) return 0;
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

void BM_PagedAttention(benchmark::State& state, const Case& c) {
  if (VisibleGpuCount() == 0) {
    state.SkipWithError(("no GPU: " + NoGpuReason()).c_str());
    return;
  }
  Setup setup;
  if (const absl::Status status = Prepare(c, setup); !status.ok()) {
    state.SkipWithError(status.ToString().c_str());
    return;
  }
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int i = 0; i < 3; ++i) (void)setup.graph->Launch(setup.stream);  // warm-up
  cudaStreamSynchronize(setup.stream);
  const auto gap = std::chrono::microseconds(ReplayGapMicroseconds());
  std::vector<double> sm_mhz, power_w;  // sampled until each replay ends
  for (auto _ : state) {
    std::vector<float> ms(kReplays);
    for (float& t : ms) {
      if (c.shape.warm_l2) {
        (void)HoldStream(kWarmHoldMicroseconds, setup.stream);
      } else {
        (void)FlushL2(setup.flush, kFlushBytes, setup.stream);
      }
      cudaEventRecord(start, setup.stream);
      (void)setup.graph->Launch(setup.stream);
      cudaEventRecord(stop, setup.stream);
      do {  // at least once; most samples fall in the timed kernels, the longest part
        const GpuClockSample clock = SampleGpuClock();
        sm_mhz.push_back(clock.sm_mhz);
        power_w.push_back(clock.power_w);
      } while (cudaEventQuery(stop) == cudaErrorNotReady);
      cudaEventSynchronize(stop);
      cudaEventElapsedTime(&t, start, stop);
      if (gap.count() > 0) std::this_thread::sleep_for(gap);
    }
    state.SetIterationTime(Median(ms) * 1e-3 / c.shape.calls_per_graph);
  }
  const cudaError_t error = cudaDeviceSynchronize();
  if (error != cudaSuccess) state.SkipWithError(cudaGetErrorString(error));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);

  double kv_bytes = 0, flops = 0, q_tokens = 0;
  for (size_t i = 0; i < c.q_lens.size(); ++i) {
    const double keys = static_cast<double>(c.shape.KeysRead(c.q_lens[i], c.k_lens[i]));
    kv_bytes += 2.0 * keys * c.shape.num_kv_heads * c.shape.head_dim * 2;
    flops += 4.0 * c.q_lens[i] * c.shape.num_q_heads * keys * c.shape.head_dim;
    q_tokens += c.q_lens[i];
  }
  const double bytes = kv_bytes + q_tokens * c.shape.num_q_heads * (2.0 * c.shape.head_dim * 2 + 4);
  using Counter = benchmark::Counter;
  state.counters["kv_bytes"] = kv_bytes;
  state.counters["bytes"] = bytes;
  state.counters["TB/s"] = Counter(bytes * 1e-12, Counter::kIsIterationInvariantRate);
  const double copy = DeviceCopyTbps();
  state.counters["E"] =
      Counter(copy > 0 ? bytes * 1e-12 / copy : 0.0, Counter::kIsIterationInvariantRate);
  state.counters["TFLOP/s"] = Counter(flops * 1e-12, Counter::kIsIterationInvariantRate);
  state.counters["sm_MHz"] = Median(sm_mhz);
  state.counters["power_W"] = Median(power_w);
  state.counters["workers"] = setup.counts.num_active_workers;
  state.counters["segments"] = setup.counts.num_segments;
  state.counters["merges"] = setup.counts.num_merge_tasks;
  state.counters["kv_heads_per_unit"] = setup.kv_heads_per_unit;
}

// ---------------------------------------------------------------------------

// The case of one of the benchmark's shapes (benchmark_shapes.h), with its name.
Case CaseOf(const AttentionBenchmarkShape& shape) {
  Case c;
  c.shape = shape;
  c.q_lens.assign(shape.batch, shape.q_len);
  c.k_lens = shape.KvLens();
  c.name = absl::StrCat("BM_PagedAttention", shape.family, "/heads:", shape.num_q_heads, "_",
                        shape.num_kv_heads, "/hd:", shape.head_dim, "/batch:", shape.batch,
                        "/q:", shape.q_len, "/kv:", shape.KvLabel(), "/page:", shape.page_size);
  if (shape.fp16) c.name += "/dtype:fp16";
  if (shape.window_left >= 0) c.name += absl::StrCat("/window:", shape.window_left);
  if (shape.softcap > 0) c.name += absl::StrCat("/softcap:", shape.softcap);
  if (shape.tree != BenchmarkTree::kNone) {
    // Every request verifies the same tree of q nodes (q <= 64), or runs the
    // same draft decode step of topk branches (q = topk).
    const bool draft = shape.tree == BenchmarkTree::kDraftDecode;
    const TreeShape tree_shape = shape.tree == BenchmarkTree::kBalanced ? TreeShape::kBalanced
                                 : shape.tree == BenchmarkTree::kRandom ? TreeShape::kRandom
                                                                        : TreeShape::kChain;
    std::mt19937_64 rng(11);
    const std::vector<int32_t> parents =
        draft ? DraftDecodeParents(shape.tree_topk, shape.draft_step)
              : TreeParents(tree_shape, shape.q_len, shape.tree_topk, rng);
    const std::vector<uint64_t> masks =
        AncestorMasks(parents, shape.tree_topk, 0, "benchmark tree").value();
    const int32_t draft_keys = static_cast<int32_t>(parents.size());
    for (int32_t i = 0; i < shape.batch; ++i) {
      for (size_t node = parents.size() - shape.q_len; node < parents.size(); ++node) {
        c.tree_words.push_back(TreeMaskWord(masks[node], draft_keys));
      }
    }
    c.name += draft ? absl::StrCat("/tree:step", shape.draft_step, "_topk", shape.tree_topk)
                    : absl::StrCat("/tree:", absl::AsciiStrToLower(TreeShapeName(tree_shape)),
                                   "_topk", shape.tree_topk);
  }
  if (shape.warm_l2) c.name += "/l2:warm";
  if (shape.calls_per_graph > 1) c.name += absl::StrCat("/calls:", shape.calls_per_graph);
  if (shape.every_worker) c.name += "/grid:all";
  if (shape.merge_task_capacity > 0) {
    c.name += absl::StrCat("/merge_capacity:", shape.merge_task_capacity);
  }
  return c;
}

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  for (const AttentionBenchmarkShape& shape : AttentionBenchmarkShapes()) {
    cases.push_back(CaseOf(shape));
  }
  return cases;
}

void BM_DeviceCopy(benchmark::State& state) {
  const double tbps = DeviceCopyTbps();
  if (tbps <= 0) {
    state.SkipWithError("no GPU");
    return;
  }
  for (auto _ : state) state.SetIterationTime(2.0 * (size_t{2} << 30) / (tbps * 1e12));
  state.counters["TB/s"] = tbps;
}

void RegisterAll() {
  benchmark::RegisterBenchmark("BM_DeviceCopy", BM_DeviceCopy)->UseManualTime()->Iterations(1);
  for (const Case& c : AllCases()) {
    benchmark::RegisterBenchmark(c.name.c_str(), BM_PagedAttention, c)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond)
        ->Iterations(1)
        ->Repetitions(3)
        ->DisplayAggregatesOnly(true);
  }
}

const bool registered = (RegisterAll(), true);

}  // namespace
}  // namespace paged_attention
