#include "attention/kernel/paged_attention_testing.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "attention/base/cuda_status.h"
#include "attention/base/status_macros.h"
#include "attention/kernel/paged_attention.h"
#include "testing/device_fill.h"

namespace paged_attention {
namespace {

uint16_t ToBits(DType dtype, float value) {
  return dtype == DType::kFloat16 ? FloatToFloat16(value) : FloatToBFloat16(value);
}

float FromBits(DType dtype, uint16_t bits) {
  return dtype == DType::kFloat16 ? Float16ToFloat(bits) : BFloat16ToFloat(bits);
}

int32_t CeilDiv(int32_t a, int32_t b) { return (a + b - 1) / b; }

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
  batch.cu_seqlens_k.assign(n + 1, 0);
  for (int32_t i = 0; i < n; ++i) {
    batch.cu_seqlens_q[i + 1] = batch.cu_seqlens_q[i] + q_lens[i];
    batch.cu_seqlens_k[i + 1] = batch.cu_seqlens_k[i] + k_lens[i];
  }
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
  batch.q.assign(q_elems, ToBits(spec.dtype, std::nanf("")));
  const int64_t used_q = int64_t{batch.cu_seqlens_q[n]} * spec.num_q_heads * spec.head_dim;
  for (int64_t e = 0; e < used_q; ++e) batch.q[e] = ToBits(spec.dtype, spec.q_stddev * normal(rng));
  const int64_t row = int64_t{spec.num_kv_heads} * spec.head_dim;
  const uint16_t nan_bits = ToBits(spec.dtype, std::nanf(""));
  batch.k_cache.assign(int64_t{batch.num_pages} * spec.page_size * row, nan_bits);
  batch.v_cache.assign(batch.k_cache.size(), nan_bits);
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t t = 0; t < k_lens[i]; ++t) {
      const int64_t page = batch.page_table[int64_t{i} * mpr + t / spec.page_size];
      const int64_t slot = page * spec.page_size + t % spec.page_size;
      for (int64_t e = 0; e < row; ++e) {
        batch.k_cache[slot * row + e] = ToBits(spec.dtype, normal(rng));
        batch.v_cache[slot * row + e] = ToBits(spec.dtype, normal(rng));
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
  args.metadata.cu_seqlens_k = cu_seqlens_k.data();
  args.metadata.page_table = page_table.data();
  args.options = spec.options;
  return args;
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
  md.num_kv_splits = spec.num_kv_splits;
  // Twice the pages the capacity can need, so ids are spread out.
  const int64_t capacity_pages =
      spec.max_pages_per_request > 0 ? int64_t{n} * md.max_pages_per_request : pages_needed;
  batch.num_pages = static_cast<int32_t>(2 * capacity_pages + 3);
  Fill(spec.q_lens, spec.k_lens, spec.seed, batch);
  return batch;
}

void RefillBatch(const std::vector<int32_t>& q_lens, const std::vector<int32_t>& k_lens,
                 uint64_t seed, HostBatch& batch) {
  Fill(q_lens, k_lens, seed, batch);
}

absl::StatusOr<DeviceBatch> DeviceBatch::Create(const HostBatch& host, int32_t max_kv_splits) {
  DeviceBatch d;
  const BatchSpec& spec = host.spec;
  const int64_t out_elems =
      int64_t{host.metadata.total_q_tokens} * spec.num_q_heads * spec.head_dim;
  ASSIGN_OR_RETURN(d.q, DeviceBuffer::Allocate(std::max<size_t>(host.q.size() * 2, 16), "q"));
  ASSIGN_OR_RETURN(d.k_cache, DeviceBuffer::Allocate(host.k_cache.size() * 2, "k_cache"));
  ASSIGN_OR_RETURN(d.v_cache, DeviceBuffer::Allocate(host.v_cache.size() * 2, "v_cache"));
  ASSIGN_OR_RETURN(d.out, DeviceBuffer::Allocate(std::max<int64_t>(out_elems * 2, 16), "out"));
  ASSIGN_OR_RETURN(d.lse, DeviceBuffer::Allocate(
                              std::max<int64_t>(
                                  int64_t{host.metadata.total_q_tokens} * spec.num_q_heads * 4, 16),
                              "lse"));
  const int32_t n = host.metadata.batch_size;
  ASSIGN_OR_RETURN(d.cache_seqlens, DeviceBuffer::Allocate(std::max(n, 1) * 4, "cache_seqlens"));
  ASSIGN_OR_RETURN(d.cu_seqlens_q, DeviceBuffer::Allocate((n + 1) * 4, "cu_seqlens_q"));
  ASSIGN_OR_RETURN(d.cu_seqlens_k, DeviceBuffer::Allocate((n + 1) * 4, "cu_seqlens_k"));
  ASSIGN_OR_RETURN(
      d.page_table,
      DeviceBuffer::Allocate(std::max<size_t>(host.page_table.size() * 4, 16), "page_table"));
  AttentionMetadata md = host.Args().metadata;
  md.num_kv_splits = max_kv_splits;
  const size_t workspace = WorkspaceBytes(md, spec.num_q_heads, spec.head_dim);
  ASSIGN_OR_RETURN(d.workspace,
                   DeviceBuffer::Allocate(std::max<size_t>(workspace, 16), "workspace"));
  RETURN_IF_ERROR(d.Update(host));
  return d;
}

absl::Status DeviceBatch::Update(const HostBatch& host) {
  if (!host.q.empty()) RETURN_IF_ERROR(q.Upload(host.q));
  RETURN_IF_ERROR(k_cache.Upload(host.k_cache));
  RETURN_IF_ERROR(v_cache.Upload(host.v_cache));
  if (!host.cache_seqlens.empty()) RETURN_IF_ERROR(cache_seqlens.Upload(host.cache_seqlens));
  RETURN_IF_ERROR(cu_seqlens_q.Upload(host.cu_seqlens_q));
  RETURN_IF_ERROR(cu_seqlens_k.Upload(host.cu_seqlens_k));
  if (!host.page_table.empty()) RETURN_IF_ERROR(page_table.Upload(host.page_table));
  args = host.Args();
  args.q = q.data();
  args.k_cache = k_cache.data();
  args.v_cache = v_cache.data();
  args.out = out.data();
  args.lse = lse.as<float>();
  args.metadata.cache_seqlens = cache_seqlens.as<int32_t>();
  args.metadata.cu_seqlens_q = cu_seqlens_q.as<int32_t>();
  args.metadata.cu_seqlens_k = cu_seqlens_k.as<int32_t>();
  args.metadata.page_table = page_table.as<int32_t>();
  return absl::OkStatus();
}

absl::Status DeviceBatch::PoisonOutputs() {
  RETURN_IF_ERROR(FillDevice(out.data(), out.size_bytes() / 2, args.dtype, std::nanf("")));
  RETURN_IF_ERROR(FillDevice(lse.data(), lse.size_bytes() / 4, DType::kFloat32, std::nanf("")));
  return CudaCall(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

absl::Status DeviceBatch::Run(int32_t num_kv_splits, cudaStream_t stream) {
  PagedAttentionArgs run_args = args;
  run_args.metadata.num_kv_splits = num_kv_splits;
  RETURN_IF_ERROR(LaunchPagedAttention(run_args, workspace.data(), workspace.size_bytes(), stream));
  return CudaCall(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

absl::StatusOr<std::vector<float>> DeviceBatch::DownloadOut() const {
  const int64_t count = int64_t{args.metadata.total_q_tokens} * args.num_q_heads * args.head_dim;
  ASSIGN_OR_RETURN(std::vector<uint16_t> bits, out.Download<uint16_t>(count));
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i) values[i] = FromBits(args.dtype, bits[i]);
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
    return FromBits(dtype, static_cast<const uint16_t*>(data)[index]);
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
    const int32_t cu_k[2] = {0, keys};
    PagedAttentionArgs one = args;
    one.q =
        static_cast<const char*>(args.q) + (int64_t{q_begin} + j) * hq * d * DTypeSize(args.dtype);
    one.metadata.batch_size = 1;
    one.metadata.total_q_tokens = 1;
    one.metadata.max_seq_len_q = 1;
    one.metadata.max_seq_len_k = keys;
    one.metadata.cache_seqlens = &keys;
    one.metadata.cu_seqlens_q = cu_q;
    one.metadata.cu_seqlens_k = cu_k;
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

std::string ErrorStats::ToString() const {
  return absl::StrCat("max_abs ", max_abs, " rel_l2 ", rel_l2, " non_finite ", non_finite);
}

namespace {
template <typename T>
ErrorStats Compare(const std::vector<T>& got, const std::vector<double>& want, int64_t count) {
  ErrorStats stats;
  double diff2 = 0.0, ref2 = 0.0;
  for (int64_t i = 0; i < count; ++i) {
    const double g = static_cast<double>(got[i]);
    if (!std::isfinite(g)) {
      ++stats.non_finite;
      continue;
    }
    const double diff = g - want[i];
    stats.max_abs = std::max(stats.max_abs, std::abs(diff));
    diff2 += diff * diff;
    ref2 += want[i] * want[i];
  }
  stats.rel_l2 = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  return stats;
}
}  // namespace

ErrorStats CompareToReference(const std::vector<float>& got, const std::vector<double>& want,
                              int64_t count) {
  return Compare(got, want, count);
}

ErrorStats CompareToReference(const std::vector<double>& got, const std::vector<double>& want,
                              int64_t count) {
  return Compare(got, want, count);
}

}  // namespace paged_attention
