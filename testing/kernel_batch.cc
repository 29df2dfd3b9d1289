#include "testing/kernel_batch.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "attention/base/ceil_div.h"
#include "attention/base/cuda_status.h"
#include "attention/base/status_macros.h"
#include "attention/kernel/paged_attention.h"
#include "attention/planner/work_partition.h"
#include "testing/device_fill.h"

namespace paged_attention {
namespace {

// Pinned split counts HostBatch::Plan sizes its buffers for (more when the
// spec pins more).
constexpr int32_t kMaxPinnedSplits = 64;

// (request, query token) pairs of the live batch.
std::vector<std::pair<int32_t, int32_t>> QueryRows(const AttentionMetadata& md) {
  std::vector<std::pair<int32_t, int32_t>> rows;
  for (int32_t i = 0; i < md.batch_size; ++i) {
    for (int32_t j = 0; j < md.cu_seqlens_q[i + 1] - md.cu_seqlens_q[i]; ++j)
      rows.push_back({i, j});
  }
  return rows;
}

// Runs fn(index) for index in [0, count) on all cores.
void ParallelFor(int64_t count, const std::function<void(int64_t)>& fn) {
  const int64_t workers =
      std::min<int64_t>(count, std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<int64_t> next{0};
  std::vector<std::thread> threads;
  for (int64_t w = 0; w < workers; ++w) {
    threads.emplace_back([&] {
      for (int64_t index = next++; index < count; index = next++) fn(index);
    });
  }
  for (std::thread& thread : threads) thread.join();
}

// Fills lengths, page table, Q and the pool of `batch` (scalars already set).
void Fill(const std::vector<int32_t>& q_lens, const std::vector<int32_t>& k_lens, uint64_t seed,
          HostBatch& batch) {
  const BatchSpec& spec = batch.spec;
  const int32_t n = static_cast<int32_t>(q_lens.size());
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  batch.cache_seqlens = k_lens;
  batch.cu_seqlens_q.assign(n + 1, 0);
  for (int32_t i = 0; i < n; ++i) batch.cu_seqlens_q[i + 1] = batch.cu_seqlens_q[i] + q_lens[i];
  const int32_t mpr = batch.metadata.max_pages_per_request;
  std::vector<int32_t> pages(batch.num_pages);
  std::iota(pages.begin(), pages.end(), 0);
  std::shuffle(pages.begin(), pages.end(), rng);
  // Unused page-table entries point at random pool pages (never read).
  batch.page_table.assign(int64_t{n} * mpr, 0);
  for (int32_t& entry : batch.page_table) entry = static_cast<int32_t>(rng() % batch.num_pages);
  int32_t next = 0;
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t j = 0; j < CeilDiv(k_lens[i], spec.page_size); ++j) {
      batch.page_table[int64_t{i} * mpr + j] = pages[next++];
    }
  }
  const int64_t q_elems = int64_t{batch.metadata.total_q_tokens} * spec.num_q_heads * spec.head_dim;
  batch.q.assign(q_elems, EncodeElement16(spec.dtype, std::nanf("")));
  const int64_t used_q = int64_t{batch.cu_seqlens_q[n]} * spec.num_q_heads * spec.head_dim;
  for (int64_t e = 0; e < used_q; ++e)
    batch.q[e] = EncodeElement16(spec.dtype, spec.q_stddev * normal(rng));
  const int64_t row = int64_t{spec.num_kv_heads} * spec.head_dim;
  const uint16_t nan_bits = EncodeElement16(spec.dtype, std::nanf(""));
  batch.k_cache.assign(int64_t{batch.num_pages} * spec.page_size * row, nan_bits);
  batch.v_cache.assign(batch.k_cache.size(), nan_bits);
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t t = 0; t < k_lens[i]; ++t) {
      const int64_t page = batch.page_table[int64_t{i} * mpr + t / spec.page_size];
      const int64_t slot = page * spec.page_size + t % spec.page_size;
      for (int64_t e = 0; e < row; ++e) {
        batch.k_cache[slot * row + e] = EncodeElement16(spec.dtype, normal(rng));
        batch.v_cache[slot * row + e] = EncodeElement16(spec.dtype, normal(rng));
      }
    }
  }
}

}  // namespace

PagedAttentionArgs HostBatch::Args() const {
  PagedAttentionArgs args;
  args.dtype = spec.dtype;
  args.num_q_heads = spec.num_q_heads;
  args.num_kv_heads = spec.num_kv_heads;
  args.head_dim = spec.head_dim;
  args.num_pages = num_pages;
  args.q = q.data();
  args.k_cache = k_cache.data();
  args.v_cache = v_cache.data();
  args.metadata = metadata;
  args.metadata.max_seq_len_k =
      cache_seqlens.empty() ? 0 : *std::max_element(cache_seqlens.begin(), cache_seqlens.end());
  args.metadata.cache_seqlens = cache_seqlens.data();
  args.metadata.cu_seqlens_q = cu_seqlens_q.data();
  args.metadata.page_table = page_table.data();
  args.metadata.plan.worker_begin = worker_begin.data();
  args.metadata.plan.segments = segments.data();
  args.metadata.plan.merge_tasks = merge_tasks.data();
  args.metadata.plan.counters = counters.data();
  args.options = spec.options;
  return args;
}

void HostBatch::Plan(int32_t pinned_splits) {
  const int32_t group = spec.num_q_heads / spec.num_kv_heads;
  const int32_t kv_heads_per_unit =
      spec.kv_heads_per_unit > 0 ? spec.kv_heads_per_unit
      : CanPairKvHeads(spec.head_dim, spec.num_kv_heads, group, metadata.max_seq_len_q) ? 2
                                                                                        : 1;
  // Units of KV head pairs plan as head_dim 128 units of half the heads and
  // twice the group (UnitGeometryOf).
  const UnitGeometry unit =
      UnitGeometryOf(spec.num_kv_heads, group, spec.head_dim, kv_heads_per_unit);
  PartitionConfig config;
  config.num_kv_heads = unit.num_kv_heads;
  config.group = unit.group;
  config.head_dim = unit.head_dim;
  config.kv_heads_per_unit = kv_heads_per_unit;
  config.num_workers = spec.num_workers;
  config.pinned_splits = pinned_splits;
  config.mask = spec.options.mask;
  config.window_left = spec.options.mask == MaskMode::kCausal ? spec.options.window_left : -1;
  // Capacities for any split count this batch is planned with: up to
  // kMaxPinnedSplits, or the spec's own when it pins more.
  PartitionConfig pinned = config;
  pinned.pinned_splits = std::max(kMaxPinnedSplits, spec.pinned_splits);
  const int64_t units = MaxUnits(config, metadata.batch_size, metadata.max_seq_len_q);
  config.pinned_splits = 0;
  const int64_t max_segments = std::max(MaxSegments(config, units), MaxSegments(pinned, units));
  const int64_t max_merges = std::max(MaxMergeTasks(config, units), MaxMergeTasks(pinned, units));
  const int64_t max_partials = std::max(MaxPartials(config, units), MaxPartials(pinned, units));
  config.pinned_splits = pinned_splits;
  worker_begin.assign(config.num_workers + 1, 0);
  segments.assign(std::max<int64_t>(max_segments, 1), WorkSegment{});
  merge_tasks.assign(std::max<int64_t>(max_merges, 1), MergeTask{});
  counters.assign(kNumPlanCounters, 0);
  const int32_t n = metadata.batch_size;
  const absl::StatusOr<PartitionCounts> counts =
      PartitionWork(absl::MakeConstSpan(cu_seqlens_q.data(), n + 1),
                    absl::MakeConstSpan(cache_seqlens.data(), n), config,
                    PartitionBuffers{absl::MakeSpan(worker_begin), absl::MakeSpan(segments),
                                     absl::MakeSpan(merge_tasks)});
  if (!counts.ok()) {
    std::fprintf(stderr, "HostBatch::Plan: %s\n", counts.status().ToString().c_str());
    std::abort();  // a test-setup bug: the capacities above hold every split count
  }
  counters[kPlanNumMergeTasks] = counts->num_merge_tasks;
  WorkPlanView& plan = metadata.plan;
  // An eager plan's grid ends at the last worker with segments, as
  // DeviceMetadata::metadata_for's view does (a launch of member pairs, of
  // member_pair_offset CTAs, needs that to cover every worker: VariantFor); a
  // CUDA-graph capacity's keeps every worker, the idle ones exiting at once.
  plan.num_workers = spec.eager_plan ? counts->worker_span : config.num_workers;
  plan.max_segments = static_cast<int32_t>(segments.size());
  plan.max_merge_tasks = static_cast<int32_t>(merge_tasks.size());
  plan.max_partials = static_cast<int32_t>(std::max<int64_t>(max_partials, 1));
  plan.max_zero_fill_tokens = 0;
  plan.num_kv_heads = spec.num_kv_heads;
  plan.group = group;
  plan.head_dim = spec.head_dim;
  plan.kv_heads_per_unit = kv_heads_per_unit;
  plan.member_pair_offset = spec.eager_plan ? counts->member_pair_offset : 0;
  plan.member_pair_unit_offset = spec.eager_plan ? counts->member_pair_unit_offset : 0;
  plan.causal = config.mask == MaskMode::kCausal ? 1 : 0;
  plan.window_left = config.window_left;
}

HostBatch MakeRandomBatch(const BatchSpec& spec) {
  HostBatch batch;
  batch.spec = spec;
  if (batch.spec.options.softmax_scale == 0.0f) {
    batch.spec.options.softmax_scale = 1.0f / std::sqrt(static_cast<float>(spec.head_dim));
  }
  const int32_t n = static_cast<int32_t>(spec.q_lens.size());
  int32_t total_q = 0, max_q = 0, max_k = 0, pages_needed = 0;
  for (int32_t i = 0; i < n; ++i) {
    total_q += spec.q_lens[i];
    max_q = std::max(max_q, spec.q_lens[i]);
    max_k = std::max(max_k, spec.k_lens[i]);
    pages_needed += CeilDiv(spec.k_lens[i], spec.page_size);
  }
  AttentionMetadata& md = batch.metadata;
  md.batch_size = n;
  md.total_q_tokens = spec.total_q_tokens > 0 ? spec.total_q_tokens : total_q;
  md.max_seq_len_q = spec.max_seq_len_q > 0 ? spec.max_seq_len_q : max_q;
  md.max_seq_len_k = max_k;
  md.page_size = spec.page_size;
  md.max_pages_per_request = spec.max_pages_per_request > 0
                                 ? spec.max_pages_per_request
                                 : std::max(1, CeilDiv(max_k, spec.page_size));
  // Twice the pages the capacity can need, so ids are spread out.
  const int64_t capacity_pages =
      spec.max_pages_per_request > 0 ? int64_t{n} * md.max_pages_per_request : pages_needed;
  batch.num_pages = static_cast<int32_t>(2 * capacity_pages + 3);
  Fill(spec.q_lens, spec.k_lens, spec.seed, batch);
  batch.Plan(spec.pinned_splits);
  return batch;
}

void RefillBatch(const std::vector<int32_t>& q_lens, const std::vector<int32_t>& k_lens,
                 uint64_t seed, HostBatch& batch) {
  Fill(q_lens, k_lens, seed, batch);
  batch.Plan(batch.spec.pinned_splits);
}

absl::StatusOr<DeviceBatch> DeviceBatch::Create(const HostBatch& host) {
  DeviceBatch d;
  const BatchSpec& spec = host.spec;
  const int64_t out_elems =
      int64_t{host.metadata.total_q_tokens} * spec.num_q_heads * spec.head_dim;
  auto allocate = [](DeviceBuffer& buffer, size_t bytes, const char* what) -> absl::Status {
    ASSIGN_OR_RETURN(buffer, DeviceBuffer::Allocate(std::max<size_t>(bytes, 16), what));
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(allocate(d.q, host.q.size() * 2, "q"));
  RETURN_IF_ERROR(allocate(d.k_cache, host.k_cache.size() * 2, "k_cache"));
  RETURN_IF_ERROR(allocate(d.v_cache, host.v_cache.size() * 2, "v_cache"));
  RETURN_IF_ERROR(allocate(d.out, out_elems * 2, "out"));
  RETURN_IF_ERROR(
      allocate(d.lse, int64_t{host.metadata.total_q_tokens} * spec.num_q_heads * 4, "lse"));
  RETURN_IF_ERROR(allocate(d.cache_seqlens, host.cache_seqlens.size() * 4, "cache_seqlens"));
  RETURN_IF_ERROR(allocate(d.cu_seqlens_q, host.cu_seqlens_q.size() * 4, "cu_seqlens_q"));
  RETURN_IF_ERROR(allocate(d.page_table, host.page_table.size() * 4, "page_table"));
  RETURN_IF_ERROR(allocate(d.worker_begin, host.worker_begin.size() * 4, "worker_begin"));
  RETURN_IF_ERROR(allocate(d.counters, host.counters.size() * 4, "counters"));
  RETURN_IF_ERROR(allocate(d.segments, host.segments.size() * sizeof(WorkSegment), "segments"));
  RETURN_IF_ERROR(
      allocate(d.merge_tasks, host.merge_tasks.size() * sizeof(MergeTask), "merge_tasks"));
  RETURN_IF_ERROR(allocate(d.workspace, WorkspaceBytes(host.metadata), "workspace"));
  RETURN_IF_ERROR(d.Update(host));
  return d;
}

absl::Status DeviceBatch::Update(const HostBatch& host) {
  if (!host.q.empty()) RETURN_IF_ERROR(q.Upload(host.q));
  RETURN_IF_ERROR(k_cache.Upload(host.k_cache));
  RETURN_IF_ERROR(v_cache.Upload(host.v_cache));
  if (!host.cache_seqlens.empty()) RETURN_IF_ERROR(cache_seqlens.Upload(host.cache_seqlens));
  RETURN_IF_ERROR(cu_seqlens_q.Upload(host.cu_seqlens_q));
  if (!host.page_table.empty()) RETURN_IF_ERROR(page_table.Upload(host.page_table));
  RETURN_IF_ERROR(worker_begin.Upload(host.worker_begin));
  RETURN_IF_ERROR(counters.Upload(host.counters));
  RETURN_IF_ERROR(segments.Upload(host.segments));
  RETURN_IF_ERROR(merge_tasks.Upload(host.merge_tasks));
  args = host.Args();
  args.q = q.data();
  args.k_cache = k_cache.data();
  args.v_cache = v_cache.data();
  args.out = out.data();
  args.lse = lse.as<float>();
  args.metadata.cache_seqlens = cache_seqlens.as<int32_t>();
  args.metadata.cu_seqlens_q = cu_seqlens_q.as<int32_t>();
  args.metadata.page_table = page_table.as<int32_t>();
  args.metadata.plan.worker_begin = worker_begin.as<int32_t>();
  args.metadata.plan.counters = counters.as<int32_t>();
  args.metadata.plan.segments = segments.as<WorkSegment>();
  args.metadata.plan.merge_tasks = merge_tasks.as<MergeTask>();
  return absl::OkStatus();
}

absl::Status DeviceBatch::PoisonOutputs() {
  RETURN_IF_ERROR(FillDevice(out.data(), out.size_bytes() / 2, args.dtype, std::nanf("")));
  RETURN_IF_ERROR(FillDevice(lse.data(), lse.size_bytes() / 4, DType::kFloat32, std::nanf("")));
  return CudaCall(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

absl::Status DeviceBatch::Run(cudaStream_t stream) {
  RETURN_IF_ERROR(LaunchPagedAttention(args, workspace.data(), workspace.size_bytes(), stream));
  return CudaCall(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

absl::StatusOr<std::vector<float>> DeviceBatch::DownloadOut() const {
  const int64_t count = int64_t{args.metadata.total_q_tokens} * args.num_q_heads * args.head_dim;
  ASSIGN_OR_RETURN(std::vector<uint16_t> bits, out.Download<uint16_t>(count));
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i) values[i] = DecodeElement(args.dtype, bits.data(), i);
  return values;
}

absl::StatusOr<std::vector<float>> DeviceBatch::DownloadLse() const {
  return lse.Download<float>(int64_t{args.metadata.total_q_tokens} * args.num_q_heads);
}

std::vector<double> LowPrecisionReference(const PagedAttentionArgs& args) {
  const AttentionMetadata& md = args.metadata;
  const int64_t hq = args.num_q_heads, hkv = args.num_kv_heads, d = args.head_dim;
  const int64_t group = hq / hkv;
  const DType dtype = args.dtype;
  auto read = [dtype](const void* data, int64_t index) {
    return DecodeElement(dtype, data, index);
  };
  std::vector<double> out(int64_t{md.total_q_tokens} * hq * d, 0.0);
  const std::vector<std::pair<int32_t, int32_t>> rows = QueryRows(md);
  ParallelFor(static_cast<int64_t>(rows.size()), [&](int64_t index) {
    const auto [i, j] = rows[index];
    const int64_t q_begin = md.cu_seqlens_q[i];
    const int64_t q_len = md.cu_seqlens_q[i + 1] - q_begin;
    const int64_t k_len = md.cache_seqlens[i];
    int64_t first = 0, last = k_len - 1;
    if (args.options.mask == MaskMode::kCausal) {
      const int64_t diagonal = j + k_len - q_len;
      last = std::min(last, diagonal);
      if (args.options.window_left >= 0) {
        first = std::max<int64_t>(0, diagonal - args.options.window_left);
      }
    }
    if (first > last) return;
    std::vector<int64_t> slot_of(k_len);
    for (int64_t t = first; t <= last; ++t) {
      const int64_t page = md.page_table[i * int64_t{md.max_pages_per_request} + t / md.page_size];
      slot_of[t] = page * md.page_size + t % md.page_size;
    }
    std::vector<float> scores(last - first + 1), accum(d), q_row(d);
    const int64_t token = q_begin + j;
    for (int64_t h = 0; h < hq; ++h) {
      const int64_t kv_head = h / group;
      for (int64_t c = 0; c < d; ++c) q_row[c] = read(args.q, (token * hq + h) * d + c);
      float max_score = -std::numeric_limits<float>::infinity();
      for (int64_t t = first; t <= last; ++t) {
        if (!TreeMaskAllows(md.tree_mask, token, k_len, t)) {
          scores[t - first] = -std::numeric_limits<float>::infinity();
          continue;
        }
        const int64_t k_base = (slot_of[t] * hkv + kv_head) * d;
        float dot = 0.0f;
        for (int64_t c = 0; c < d; ++c) dot += q_row[c] * read(args.k_cache, k_base + c);
        float s = dot * args.options.softmax_scale;
        if (args.options.softcap > 0)
          s = args.options.softcap * std::tanh(s / args.options.softcap);
        scores[t - first] = s;
        max_score = std::max(max_score, s);
      }
      float sum = 0.0f;
      for (float& s : scores) {
        s = std::exp(s - max_score);
        sum += s;
      }
      std::fill(accum.begin(), accum.end(), 0.0f);
      for (int64_t t = first; t <= last; ++t) {
        const float p = RoundTrip(dtype, scores[t - first] / sum);
        const int64_t v_base = (slot_of[t] * hkv + kv_head) * d;
        for (int64_t c = 0; c < d; ++c) accum[c] += p * read(args.v_cache, v_base + c);
      }
      for (int64_t c = 0; c < d; ++c) out[(token * hq + h) * d + c] = RoundTrip(dtype, accum[c]);
    }
  });
  return out;
}

absl::StatusOr<HostAttentionResult> ParallelHostReference(const PagedAttentionArgs& args) {
  const AttentionMetadata& md = args.metadata;
  const int64_t hq = args.num_q_heads, d = args.head_dim, total_q = md.total_q_tokens;
  HostAttentionResult result;
  result.out.assign(total_q * hq * d, 0.0);
  result.lse.assign(hq * total_q, -std::numeric_limits<double>::infinity());
  const std::vector<std::pair<int32_t, int32_t>> rows = QueryRows(md);
  std::mutex mutex;
  absl::Status status;
  ParallelFor(static_cast<int64_t>(rows.size()), [&](int64_t index) {
    const auto [i, j] = rows[index];
    const int32_t q_begin = md.cu_seqlens_q[i];
    const int32_t q_len = md.cu_seqlens_q[i + 1] - q_begin;
    const int32_t k_len = md.cache_seqlens[i];
    // Keys past query j's diagonal are masked anyway under the causal mask.
    const int32_t keys = args.options.mask == MaskMode::kCausal ? k_len - (q_len - 1 - j) : k_len;
    if (keys <= 0) return;  // nothing visible: zeros, lse -inf
    const int32_t cu_q[2] = {0, 1};
    // The token's tree mask word, re-based to the shorter key range: keys the
    // cut moves into the word's range were before it (visible).
    const int32_t cut = k_len - keys;
    uint64_t tree_word = ~uint64_t{0};
    if (md.tree_mask != nullptr) {
      const uint64_t word = md.tree_mask[q_begin + j];
      tree_word = cut >= kTreeMaskKeys ? ~uint64_t{0}
                  : cut == 0           ? word
                                       : (word << cut) | ((uint64_t{1} << cut) - 1);
    }
    PagedAttentionArgs one = args;
    if (md.tree_mask != nullptr) one.metadata.tree_mask = &tree_word;
    one.q =
        static_cast<const char*>(args.q) + (int64_t{q_begin} + j) * hq * d * DTypeSize(args.dtype);
    one.metadata.batch_size = 1;
    one.metadata.total_q_tokens = 1;
    one.metadata.max_seq_len_q = 1;
    one.metadata.max_seq_len_k = keys;
    one.metadata.cache_seqlens = &keys;
    one.metadata.cu_seqlens_q = cu_q;
    one.metadata.page_table = md.page_table + int64_t{i} * md.max_pages_per_request;
    absl::StatusOr<HostAttentionResult> row = RunHostPagedAttention(one);
    if (!row.ok()) {
      std::lock_guard<std::mutex> lock(mutex);
      status.Update(row.status());
      return;
    }
    const int64_t token = q_begin + j;
    std::copy(row->out.begin(), row->out.end(), result.out.begin() + token * hq * d);
    for (int64_t h = 0; h < hq; ++h) result.lse[h * total_q + token] = row->lse[h];
  });
  if (!status.ok()) return status;
  return result;
}

}  // namespace paged_attention
