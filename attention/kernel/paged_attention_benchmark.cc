// Benchmarks of the paged attention kernels on decode / draft-extend / verify
// shapes, timed as CUDA-graph replays of one launch (attention [+ merge kernel])
// with CUDA events: each repetition is the median of 31 replays, with L2
// flushed before every replay unless the case says l2:warm. The flush reads a
// 256 MiB buffer (a write would leave 60 MB of dirty lines for the timed call
// to write back; tools/peer_benchmark.py flushes the same way). Every case's
// K/V pools sit in one arena allocated once per process (SharedBuffers), so a
// case's time does not depend on the allocations of the cases before it.
//
// Names: BM_PagedAttention<Case>/heads:Hq_Hkv/hd:D/batch:B/q:Q/kv:L/page:P[/tree:T][/l2:warm]
// (TreeVerify / TreeDraftDecode cases: tree:<shape>_topk<K> or tree:step<S>_topk<K>; compare
// them with the Verify / DraftExtend case of the same other arguments; LargeGraph cases:
// .../merge_capacity:M, a one-request verify whose merge launch is sized for M tasks, as in a
// graph captured for a larger batch: compare with the Verify case of the same shape;
// OneTileInGraph cases: .../calls:N, N one-tile calls captured in one graph, timed per call)
// Counters:
//   kv_bytes  K and V bytes read once per (request, KV head)
//   bytes     kv_bytes + Q, out and lse (what one call must move)
//   TB/s      bytes / time
//   E         TB/s over the device-to-device copy rate measured in this run
//   TFLOP/s   4 * q * num_q_heads * kv * head_dim per request / time
//   workers, segments, merges   the work plan's shape
// Run with --benchmark_out=FILE --benchmark_out_format=json for the dashboard
// and tools/peer_benchmark.py.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "attention/base/ceil_div.h"
#include "attention/base/cuda_status.h"
#include "attention/base/device_buffer.h"
#include "attention/base/device_info.h"
#include "attention/base/status_macros.h"
#include "attention/kernel/paged_attention.h"
#include "attention/planner/metadata_planner.h"
#include "attention/planner/work_partition.h"
#include "benchmark/benchmark.h"
#include "spec_decode/draft_tree.h"
#include "testing/benchmark_main.h"
#include "testing/gpu_attention.h"
#include "testing/random_batch.h"
#include "testing/random_fill.h"

namespace paged_attention {
namespace {

constexpr int kReplays = 31;
constexpr size_t kFlushBytes = size_t{256} << 20;  // > the 60 MB L2

struct Case {
  std::string family;
  int32_t num_q_heads = 32, num_kv_heads = 8, head_dim = 128, page_size = 16;
  std::vector<int32_t> q_lens, k_lens;
  // Tree cases: the kernel's mask word of every query token
  // (AttentionMetadata::tree_mask); empty for chains.
  std::vector<uint64_t> tree_words;
  bool warm_l2 = false;
  // > 0: the merge launch sized for this many merge tasks, as in a CUDA graph
  // captured for a larger batch (DeviceMetadata sizes it by the captured
  // plan's count) and replayed with this one: the merge kernel's grid and its
  // two-row instantiation follow the capacity, not the live plan (LargeGraph).
  int32_t merge_task_capacity = 0;
  // > 1: the graph holds this many calls one after the other, and a case's
  // time is a replay's over `calls_per_graph` (OneTileInGraph): a call's
  // latency inside a captured decode step, without the ~2.8 us a one-node
  // graph's launch costs each replay.
  int32_t calls_per_graph = 1;
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
  cudaStream_t stream = nullptr;
  ~Setup() {
    graph.reset();
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
};

// Pages of case `c`'s pool: each request's keys, in whole pages.
int64_t NumPages(const Case& c) {
  int64_t pages = 0;
  for (int32_t k_len : c.k_lens) pages += CeilDiv(k_len, c.page_size);
  return pages;
}

// Elements of one of case `c`'s K and V pools.
int64_t PoolElements(const Case& c) {
  return NumPages(c) * c.page_size * c.num_kv_heads * c.head_dim;
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
  constexpr DType kDType = DType::kBFloat16;
  const int32_t batch = static_cast<int32_t>(c.q_lens.size());
  std::vector<int32_t> cu_q(batch + 1, 0);
  int32_t max_pages = 1, max_q = 0;
  for (int32_t i = 0; i < batch; ++i) {
    cu_q[i + 1] = cu_q[i] + c.q_lens[i];
    max_pages = std::max(max_pages, CeilDiv(c.k_lens[i], c.page_size));
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
    for (int32_t j = 0; j < CeilDiv(c.k_lens[i], c.page_size); ++j) {
      table[int64_t{i} * max_pages + j] = order[next++];
    }
  }
  const int64_t pool_elements = PoolElements(c);
  const int64_t q_elements = int64_t{cu_q[batch]} * c.num_q_heads * c.head_dim;
  ASSIGN_OR_RETURN(SharedBuffers * shared, Shared());
  setup.k = shared->kv.data();
  setup.v = shared->kv.as<char>() + pool_elements * 2;
  setup.flush = shared->flush.data();
  ASSIGN_OR_RETURN(setup.q, DeviceBuffer::Allocate(q_elements * 2, "q"));
  ASSIGN_OR_RETURN(setup.out, DeviceBuffer::Allocate(q_elements * 2, "out"));
  ASSIGN_OR_RETURN(setup.lse,
                   DeviceBuffer::Allocate(int64_t{cu_q[batch]} * c.num_q_heads * 4, "lse"));
  RETURN_IF_ERROR(CudaCall(FillRandom16(setup.k, pool_elements, kDType, 1, nullptr), "fill k"));
  RETURN_IF_ERROR(CudaCall(FillRandom16(setup.v, pool_elements, kDType, 2, nullptr), "fill v"));
  RETURN_IF_ERROR(CudaCall(FillRandom16(setup.q.data(), q_elements, kDType, 3, nullptr), "fill q"));

  // The causal plan of this GPU's geometry, as the planner makes it.
  ASSIGN_OR_RETURN(
      const PlannerConfig planner,
      GpuPlannerConfig(kDType, c.num_q_heads, c.num_kv_heads, c.head_dim, AttentionOptions{}));
  const PartitionConfig config = PartitionConfigFor(planner);
  const int64_t units = MaxUnits(config, batch, max_q);
  std::vector<int32_t> worker_begin(config.num_workers + 1);
  std::vector<WorkSegment> segments(std::max<int64_t>(MaxSegments(config, units), 1));
  std::vector<MergeTask> merge_tasks(
      std::max<int64_t>({MaxMergeTasks(config, units), c.merge_task_capacity, 1}));
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
  args.dtype = kDType;
  args.num_q_heads = c.num_q_heads;
  args.num_kv_heads = c.num_kv_heads;
  args.head_dim = c.head_dim;
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
  md.page_size = c.page_size;
  md.max_pages_per_request = max_pages;
  md.cache_seqlens = setup.cache_seqlens.as<int32_t>();
  md.cu_seqlens_q = setup.cu_seqlens_q.as<int32_t>();
  md.page_table = setup.page_table.as<int32_t>();
  if (!c.tree_words.empty()) {
    RETURN_IF_ERROR(Upload(setup.tree_mask, c.tree_words, "tree_mask"));
    md.tree_mask = setup.tree_mask.as<uint64_t>();
  }
  WorkPlanView& plan = md.plan;
  // As DeviceMetadata::metadata_for launches a plan: CTAs for the workers it uses.
  plan.num_workers = setup.counts.worker_span;
  plan.max_segments = static_cast<int32_t>(segments.size());
  // The plan's exact merge count: what an eager launch of this plan sizes
  // (or the capacity of a larger graph's capture).
  plan.max_merge_tasks = std::max(setup.counts.num_merge_tasks, c.merge_task_capacity);
  plan.max_partials = std::max(setup.counts.num_partials, 1);
  plan.num_kv_heads = c.num_kv_heads;
  plan.group = config.group;
  plan.head_dim = c.head_dim;
  plan.worker_begin = setup.worker_begin.as<int32_t>();
  plan.segments = setup.segments.as<WorkSegment>();
  plan.merge_tasks = setup.merge_tasks.as<MergeTask>();
  plan.counters = setup.counters.as<int32_t>();
  args.options.softmax_scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  ASSIGN_OR_RETURN(setup.workspace, DeviceBuffer::Allocate(WorkspaceBytes(md), "workspace"));
  RETURN_IF_ERROR(CudaCall(cudaStreamCreateWithFlags(&setup.stream, cudaStreamNonBlocking),
                           "cudaStreamCreateWithFlags"));
  ASSIGN_OR_RETURN(setup.graph, CapturedAttention::Capture(args, setup.workspace.data(),
                                                           setup.workspace.size_bytes(),
                                                           setup.stream, c.calls_per_graph));
  return CudaCall(cudaStreamSynchronize(setup.stream), "cudaStreamSynchronize");
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
  for (auto _ : state) {
    std::vector<float> ms(kReplays);
    for (float& t : ms) {
      if (!c.warm_l2) (void)FlushL2(setup.flush, kFlushBytes, setup.stream);
      cudaEventRecord(start, setup.stream);
      (void)setup.graph->Launch(setup.stream);
      cudaEventRecord(stop, setup.stream);
      cudaEventSynchronize(stop);
      cudaEventElapsedTime(&t, start, stop);
    }
    std::nth_element(ms.begin(), ms.begin() + kReplays / 2, ms.end());
    state.SetIterationTime(ms[kReplays / 2] * 1e-3 / c.calls_per_graph);
  }
  const cudaError_t error = cudaDeviceSynchronize();
  if (error != cudaSuccess) state.SkipWithError(cudaGetErrorString(error));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);

  double kv_bytes = 0, flops = 0, q_tokens = 0;
  for (size_t i = 0; i < c.q_lens.size(); ++i) {
    kv_bytes += 2.0 * c.k_lens[i] * c.num_kv_heads * c.head_dim * 2;
    flops += 4.0 * c.q_lens[i] * c.num_q_heads * double(c.k_lens[i]) * c.head_dim;
    q_tokens += c.q_lens[i];
  }
  const double bytes = kv_bytes + q_tokens * c.num_q_heads * (2.0 * c.head_dim * 2 + 4);
  using Counter = benchmark::Counter;
  state.counters["kv_bytes"] = kv_bytes;
  state.counters["bytes"] = bytes;
  state.counters["TB/s"] = Counter(bytes * 1e-12, Counter::kIsIterationInvariantRate);
  const double copy = DeviceCopyTbps();
  state.counters["E"] =
      Counter(copy > 0 ? bytes * 1e-12 / copy : 0.0, Counter::kIsIterationInvariantRate);
  state.counters["TFLOP/s"] = Counter(flops * 1e-12, Counter::kIsIterationInvariantRate);
  state.counters["workers"] = setup.counts.num_active_workers;
  state.counters["segments"] = setup.counts.num_segments;
  state.counters["merges"] = setup.counts.num_merge_tasks;
}

// ---------------------------------------------------------------------------

Case Uniform(const std::string& family, int32_t hq, int32_t hkv, int32_t batch, int32_t q,
             int32_t kv, int32_t page = 16, int32_t head_dim = 128) {
  Case c;
  c.family = family;
  c.num_q_heads = hq;
  c.num_kv_heads = hkv;
  c.head_dim = head_dim;
  c.page_size = page;
  c.q_lens.assign(batch, q);
  c.k_lens.assign(batch, kv);
  c.name = absl::StrCat("BM_PagedAttention", family, "/heads:", hq, "_", hkv, "/hd:", head_dim,
                        "/batch:", batch, "/q:", q, "/kv:", kv, "/page:", page);
  return c;
}

// Uniform(...) whose requests verify a `shape` tree of q nodes (q <= 64) with
// `topk` children per node, or for draft decode (draft_step >= 0) step
// draft_step of topk branches (q = topk).
Case Tree(const std::string& family, int32_t batch, int32_t q, int32_t kv, TreeShape shape,
          int32_t topk, int32_t draft_step = -1) {
  Case c = Uniform(family, 32, 8, batch, q, kv);
  std::mt19937_64 rng(11);
  std::vector<int32_t> parents =
      draft_step >= 0 ? DraftDecodeParents(topk, draft_step) : TreeParents(shape, q, topk, rng);
  const std::vector<uint64_t> masks = AncestorMasks(parents, topk, 0, "benchmark tree").value();
  const int32_t draft_keys = static_cast<int32_t>(parents.size());
  for (int32_t i = 0; i < batch; ++i) {
    for (size_t node = parents.size() - q; node < parents.size(); ++node) {
      c.tree_words.push_back(TreeMaskWord(masks[node], draft_keys));
    }
  }
  c.name += draft_step >= 0 ? absl::StrCat("/tree:step", draft_step, "_topk", topk)
                            : absl::StrCat("/tree:", absl::AsciiStrToLower(TreeShapeName(shape)),
                                           "_topk", topk);
  return c;
}

Case Warm(Case c) {
  c.warm_l2 = true;
  c.name += "/l2:warm";
  return c;
}

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  auto add = [&cases](Case c) { cases.push_back(std::move(c)); };
  // Decode q = 1.
  for (auto [hq, hkv] : {std::pair{32, 8}, std::pair{64, 8}, std::pair{32, 32}}) {
    for (auto [batch, kv] : {std::pair{1, 32768}, std::pair{1, 131072}, std::pair{8, 16384},
                             std::pair{16, 32768}, std::pair{32, 4096}, std::pair{32, 16384},
                             std::pair{64, 4096}, std::pair{128, 1024}, std::pair{128, 4096}}) {
      if (hq == 32 && hkv == 32 && kv * batch > (1 << 21)) continue;  // 32 KV heads: 4x the bytes
      add(Uniform("Decode", hq, hkv, batch, 1, kv));
    }
  }
  // Draft extend q = 2..4 and verify q = 8.
  for (auto [hq, hkv] : {std::pair{32, 8}, std::pair{64, 8}}) {
    for (int32_t q : {2, 4}) {
      for (auto [batch, kv] :
           {std::pair{1, 131072}, std::pair{8, 32768}, std::pair{16, 16384}, std::pair{32, 4096}}) {
        add(Uniform("DraftExtend", hq, hkv, batch, q, kv));
      }
    }
    add(Uniform("DraftExtend", hq, hkv, 8, 3, 32768));
    for (auto [batch, kv] : {std::pair{1, 32768}, std::pair{1, 131072}, std::pair{16, 8192},
                             std::pair{16, 32768}, std::pair{64, 4096}}) {
      add(Uniform("Verify", hq, hkv, batch, 8, kv));
    }
  }
  add(Uniform("Verify", 32, 32, 16, 8, 8192));
  // Skewed (1 x 128k + 63 x 1k) beside the uniform batch of the same bytes.
  for (int32_t q : {1, 4}) {
    Case skewed = Uniform("Skewed", 32, 8, 64, q, 1024);
    skewed.k_lens[0] = 131072;
    skewed.name = absl::StrCat("BM_PagedAttentionSkewed/heads:32_8/hd:128/batch:64/q:", q,
                               "/kv:131072+63x1024/page:16");
    add(skewed);
    add(Uniform("Uniform", 32, 8, 64, q, (131072 + 63 * 1024) / 64));
  }
  // Tree verify beside the chain verify of the same q = nd (bar: <= 1.15x the
  // chain's time), and tree draft decode steps beside chain draft extends of
  // q = topk.
  for (auto [batch, kv] : {std::pair{1, 32768}, std::pair{16, 8192}, std::pair{64, 4096}}) {
    for (int32_t nd : {8, 16, 64}) {
      if (nd != 8) add(Uniform("Verify", 32, 8, batch, nd, kv));  // q 8 is above
      add(Tree("TreeVerify", batch, nd, kv, TreeShape::kBalanced, 4));
      add(Tree("TreeVerify", batch, nd, kv, TreeShape::kRandom, 8));
    }
    add(Tree("TreeDraftDecode", batch, 4, kv, TreeShape::kChain, 4, /*draft_step=*/3));
    add(Uniform("DraftExtend", 32, 8, batch, 4, kv));
  }
  // Page size 1 / 16 / 64 on the same shapes.
  for (int32_t page : {1, 64}) {
    add(Uniform("PageSweep", 32, 8, 32, 1, 16384, page));
    add(Uniform("PageSweep", 32, 8, 16, 8, 8192, page));
  }
  add(Uniform("PageSweep", 32, 8, 32, 1, 16384, 16));
  add(Uniform("PageSweep", 32, 8, 16, 8, 8192, 16));
  // Head dims 64 and 256.
  for (int32_t head_dim : {64, 256}) {
    add(Uniform("Decode", 32, 8, 32, 1, 16384, 16, head_dim));
    add(Uniform("Verify", 32, 8, 16, 8, 8192, 16, head_dim));
    add(Uniform("Decode", 32, 8, 1, 1, 131072, 16, head_dim));
  }
  // One-tile calls (latency) and a few warm-L2 references.
  add(Warm(Uniform("OneTile", 32, 8, 1, 1, 64)));
  add(Warm(Uniform("OneTile", 32, 8, 1, 8, 64)));
  add(Warm(Uniform("Decode", 32, 8, 1, 1, 4096)));
  add(Warm(Uniform("Decode", 32, 8, 64, 1, 4096)));
  // The one-tile calls as 16 calls in one graph, per call: what a call adds
  // to a captured decode step (OneTile pays a one-node graph's launch too).
  for (int32_t q : {1, 8}) {
    Case chain = Warm(Uniform("OneTileInGraph", 32, 8, 1, q, 64));
    chain.calls_per_graph = 16;
    chain.name += "/calls:16";
    add(chain);
  }
  // One-request verify replayed in a graph captured for b16 verify q8 8k (128
  // merge tasks): the merge kernel's two-row instantiation and b16's grid on a
  // one-request plan, beside the Verify case of the same shape (NOTES.md `MPI`).
  for (auto [hq, q] : {std::pair{32, 8}, std::pair{32, 16}, std::pair{64, 8}}) {
    Case large = Uniform("LargeGraph", hq, 8, 1, q, 32768);
    large.merge_task_capacity = 128;
    large.name += "/merge_capacity:128";
    add(large);
  }
  // Prefill-like (compute-bound) for the dashboard's TFLOP/s view.
  add(Uniform("Prefill", 32, 8, 4, 512, 4096));
  add(Uniform("Prefill", 32, 8, 1, 2048, 16384));
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
