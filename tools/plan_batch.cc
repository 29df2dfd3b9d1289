// plan_batch: prints the attention metadata our planner makes for a batch.
//
//   bazel run //tools:plan_batch -- --batch=FILE.json [--graph_max_batch=N]
//
// The batch file format is in README.md (and tools/batch_json.h). For each
// batch the tool creates the requests in a fresh pool whose pages are shuffled
// by the batch's seed, writes the new tokens as an engine would, builds and
// validates the descriptor, and plans it for --num_q_heads/--num_kv_heads/
// --head_dim/--window_left on the GPU it runs on (its SMs and the kernel's
// CTAs per SM; --num_sms/--ctas_per_sm override, and without a GPU they
// default to an H200's 132 and 2): eagerly, or with --graph_max_batch at the
// capacity of a CUDA graph captured for N requests (padding rows included),
// the batches replayed in order on one captured state. Output: the metadata
// and the work partition (and a tree batch's tree with each query row's key
// count) as JSON on stdout (an object, or an array for an array input).
//
// --run also executes attention on random inputs drawn from the batch's seed:
// the CUDA kernels when a GPU is present (replays of one captured CUDA graph
// with --graph_max_batch), otherwise the float64 host executor following the
// same work plan, and adds "run" (backend, max abs and relative L2 error
// against the float64 reference). --dump_dir=DIR writes q, k_cache, v_cache,
// page_table, cache_seqlens, cu_seqlens_q, cu_seqlens_k, out, lse, tree_mask
// (what each query row may see; every batch) and, for a tree batch,
// tree_parents as .npy files plus meta.json (one folder batch_N per batch for
// an array input), for the live requests and tokens only: the same batch
// dumps the same out.npy and lse.npy with and without --graph_max_batch.
//
// Errors and output. Invalid input (the file, a flag, any batch of the file,
// a size past the limits in README.md "Limits") gives one line on stderr,
// exit code 1 and nothing on stdout: the file is read with a bounded read,
// every flag and size is checked, and every batch is built and planned once
// before anything is printed. Then each batch is planned again, run, and
// written as soon as it is done, so only one batch's output is ever held (a
// file of large batches would otherwise hold them all). A failure after
// output has begun (an attention run, a dump write, stdout itself, e.g. a
// full disk) still gives one line on stderr naming the batch or file and exit
// code 1, but stdout then holds the batches before it, cut off: treat any
// non-zero exit as "no output".
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "attention/base/device_info.h"
#include "attention/base/quoted.h"
#include "attention/base/status_macros.h"
#include "attention/kernel/paged_attention.h"
#include "attention/planner/metadata_planner.h"
#include "nlohmann/json.hpp"
#include "testing/attention_check.h"
#include "testing/batch_scenario.h"
#include "testing/gpu_attention.h"
#include "testing/host_executor.h"
#include "tools/batch_file.h"
#include "tools/batch_json.h"
#include "tools/checked_file.h"
#include "tools/npy.h"
#include "tools/run_config.h"

// int64 and double flags: every value reaches ValidateRunFlags unclamped.
ABSL_FLAG(std::string, batch, "", "path of the batch file (JSON)");
ABSL_FLAG(int64_t, graph_max_batch, 0,
          "plan on one CUDA-graph state captured for this many requests (0: eager)");
ABSL_FLAG(bool, run, false, "execute attention (GPU kernel, or host executor without a GPU)");
ABSL_FLAG(std::string, dump_dir, "", "write inputs and outputs as .npy files here (implies --run)");
ABSL_FLAG(int64_t, num_q_heads, 32, "query heads for --run");
ABSL_FLAG(int64_t, num_kv_heads, 8, "KV heads for --run");
ABSL_FLAG(int64_t, head_dim, 128, "head dimension for --run (64, 128, 256)");
ABSL_FLAG(std::string, dtype, "bfloat16", "bfloat16 or float16, for --run");
ABSL_FLAG(int64_t, window_left, -1, "sliding window left size for --run (-1: off)");
ABSL_FLAG(double, softcap, 0.0, "logit softcap for --run (0: off)");
ABSL_FLAG(int32_t, num_sms, 0, "SMs the plan is made for (0: the GPU's; 132 without a GPU)");
ABSL_FLAG(
    int32_t, ctas_per_sm, 0,
    "attention CTAs per SM the plan is made for (0: the kernel's on this GPU; 2 without one)");

namespace paged_attention {
namespace {

absl::Status MakeDirectory(const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::ErrnoToStatus(errno, absl::StrCat("--dump_dir: cannot create ", Quoted(dir)));
  }
  return absl::OkStatus();
}

AttentionOptions OptionsOf(const RunConfig& config) {
  AttentionOptions options = DefaultOptions(config.head_dim);
  options.window_left = config.window_left;
  options.softcap = config.softcap;
  return options;
}

// The plan's geometry: the flags' heads and mask, the SMs and CTAs per SM of
// this GPU's kernel unless given (an H200's without a GPU).
absl::StatusOr<PlannerConfig> PlannerConfigOf(const RunConfig& config) {
  PlannerConfig planner = HostPlannerConfig(config.num_q_heads, config.num_kv_heads,
                                            config.head_dim, OptionsOf(config));
  if (VisibleGpuCount() > 0) {
    ASSIGN_OR_RETURN(const KernelGeometry geometry,
                     QueryKernelGeometry(config.dtype, config.head_dim));
    planner.num_sms = geometry.num_sms;
    planner.ctas_per_sm = geometry.ctas_per_sm;
  }
  const int32_t num_sms = absl::GetFlag(FLAGS_num_sms);
  const int32_t ctas_per_sm = absl::GetFlag(FLAGS_ctas_per_sm);
  if (num_sms < 0 || num_sms > 4096 || ctas_per_sm < 0 || ctas_per_sm > 64) {
    return absl::InvalidArgumentError(absl::StrCat("--num_sms = ", num_sms,
                                                   ", --ctas_per_sm = ", ctas_per_sm,
                                                   " must be in [0, 4096] and [0, 64]"));
  }
  if (num_sms > 0) planner.num_sms = num_sms;
  if (ctas_per_sm > 0) planner.ctas_per_sm = ctas_per_sm;
  RETURN_IF_ERROR(ValidatePlannerConfig(planner));
  return planner;
}

// Rows [0, tokens) of an lse laid out [heads, stride], as [heads, tokens].
std::vector<double> LiveLse(const std::vector<double>& lse, int64_t heads, int64_t stride,
                            int64_t tokens) {
  std::vector<double> live;
  live.reserve(heads * tokens);
  for (int64_t h = 0; h < heads; ++h) {
    live.insert(live.end(), lse.begin() + h * stride, lse.begin() + h * stride + tokens);
  }
  return live;
}

// [tokens, max_k] of the live tokens, row-major, 1 where query row r may see
// key column c of its request: c < kv_len, and c on or before the row's
// diagonal (kv_len - q_len + j, the row's own key) for a causal batch; for
// a tree batch every committed key and, of the last D (draft) keys, those of
// the row's mask (its ancestors and itself); then the sliding window,
// c >= diagonal - window_left, by key index as for a causal batch.
// `max_k` >= every request's kv_len.
std::vector<uint8_t> VisibilityMask(const ValidatedBatch& batch, int64_t max_k,
                                    int32_t window_left) {
  const int64_t draft_keys = batch.tree_draft_keys();
  std::vector<uint8_t> mask(int64_t{batch.descriptor().num_tokens()} * max_k, 0);
  int64_t row = 0;
  for (const RequestEntry& r : batch.requests()) {
    const int64_t kv_len = r.kv_len(), first_draft = kv_len - draft_keys;
    for (int32_t j = 0; j < r.new_tokens; ++j, ++row) {
      const int64_t diagonal = kv_len - r.new_tokens + j;
      const int64_t lo = window_left < 0 ? 0 : std::max<int64_t>(0, diagonal - window_left);
      uint8_t* cells = mask.data() + row * max_k;
      for (int64_t c = lo; c < kv_len; ++c) {
        if (batch.has_tree() && c >= first_draft) {
          cells[c] = (batch.tree_masks()[row] >> (c - first_draft)) & 1;
        } else {
          cells[c] = c <= diagonal;
        }
      }
    }
  }
  return mask;
}

// Writes the inputs and outputs of one attention run, for the live requests
// and tokens, as .npy + meta.json. `out` is [tokens, heads, head_dim] and `lse`
// [heads, tokens] over the live tokens.
absl::Status Dump(const std::string& dir, const RunConfig& config, const AttentionData& data,
                  const HostMetadata& plan, const std::vector<double>& out,
                  const std::vector<double>& lse, const std::string& backend,
                  const ValidatedBatch& validated) {
  const BatchDescriptor& batch = validated.descriptor();
  RETURN_IF_ERROR(MakeDirectory(dir));
  const KvCacheLayout& layout = data.kv.layout();
  const int64_t tokens = batch.num_tokens(), hq = config.num_q_heads, d = config.head_dim;
  const int64_t bs = batch.batch_size(), stride = plan.layout.max_pages_per_request;
  std::vector<uint8_t> q(data.q);
  q.resize(tokens * hq * d * 2, 0);
  const std::vector<int64_t> cache_shape = {layout.num_pages, layout.page_size, layout.num_kv_heads,
                                            layout.head_dim};
  std::vector<float> out32(out.begin(), out.begin() + tokens * hq * d);
  std::vector<float> lse32(lse.begin(), lse.begin() + hq * tokens);
  std::vector<int32_t> cu_seqlens_k(bs + 1, 0);
  int64_t max_k = 0;
  for (int64_t i = 0; i < bs; ++i) {
    cu_seqlens_k[i + 1] = cu_seqlens_k[i] + plan.cache_seqlens[i];
    max_k = std::max<int64_t>(max_k, batch.requests[i].kv_len());
  }
  // Bounded by kMaxDumpMaskBytes (CheckRunLimits).
  const std::vector<uint8_t> mask = VisibilityMask(validated, max_k, config.window_left);
  const std::vector<int32_t> parents = validated.tree_parents();
  const int64_t draft_keys = validated.tree_draft_keys();
  struct Array {
    const char* name;
    const char* descr;
    std::vector<int64_t> shape;
    const void* data;
    size_t bytes;
  };
  const Array arrays[] = {
      {"q", "<u2", {tokens, hq, d}, q.data(), q.size()},
      {"k_cache", "<u2", cache_shape, data.kv.k_data(), data.kv.size_bytes()},
      {"v_cache", "<u2", cache_shape, data.kv.v_data(), data.kv.size_bytes()},
      {"page_table", "<i4", {bs, stride}, plan.page_table.data(), size_t(bs * stride * 4)},
      {"cache_seqlens", "<i4", {bs}, plan.cache_seqlens.data(), size_t(bs * 4)},
      {"cu_seqlens_q", "<i4", {bs + 1}, plan.cu_seqlens_q.data(), size_t((bs + 1) * 4)},
      {"cu_seqlens_k", "<i4", {bs + 1}, cu_seqlens_k.data(), cu_seqlens_k.size() * 4},
      {"out", "<f4", {tokens, hq, d}, out32.data(), out32.size() * 4},
      {"lse", "<f4", {hq, tokens}, lse32.data(), lse32.size() * 4},
      {"tree_mask", "|b1", {tokens, max_k}, mask.data(), mask.size()},
      {"tree_parents", "<i4", {bs, draft_keys}, parents.data(), parents.size() * 4},
  };
  nlohmann::json meta;
  for (const Array& array : arrays) {
    // A batch without a tree has no parents to write.
    if (array.name == std::string("tree_parents") && !validated.has_tree()) continue;
    RETURN_IF_ERROR(WriteNpy(absl::StrCat(dir, "/", array.name, ".npy"), array.descr, array.shape,
                             array.data, array.bytes));
    meta["shapes"][array.name] = array.shape;
  }
  meta["dtype"] = DTypeName(config.dtype);
  meta["storage"] = "q, k_cache, v_cache: dtype bit patterns as uint16; out, lse: float32";
  meta["mode"] = std::string(ForwardModeName(batch.mode));
  meta["live_requests"] = batch.batch_size();
  meta["live_q_tokens"] = batch.num_tokens();
  meta["num_q_heads"] = config.num_q_heads;
  meta["num_kv_heads"] = config.num_kv_heads;
  meta["head_dim"] = config.head_dim;
  meta["page_size"] = plan.shape.page_size;
  meta["workers"] = plan.layout.num_workers;
  meta["segments"] = plan.summary.partition.num_segments;
  meta["merge_tasks"] = plan.summary.partition.num_merge_tasks;
  const AttentionOptions options = OptionsOf(config);
  meta["scale"] = options.softmax_scale;
  meta["causal"] = "bottom-right: query j of q_len Lq sees keys <= j + Lk - Lq";
  meta["topk"] = batch.spec.topk;
  meta["tree_draft_keys"] = draft_keys;
  meta["tree_mask"] =
      "query row r sees key c of its request: causal, or for a tree every committed key and its "
      "ancestors-or-self of the last tree_draft_keys keys (tree_parents); then the window";
  meta["window_left"] = options.window_left;
  meta["softcap"] = options.softcap;
  meta["backend"] = backend;
  ASSIGN_OR_RETURN(CheckedFile file, CheckedFile::Create(dir + "/meta.json"));
  file.Write(meta.dump(2));
  file.Write("\n");
  return file.Close();
}

// The GPU runner of a file planned at a CUDA-graph capacity: one captured
// graph replayed for every batch, in order (made at the first batch).
struct GraphRun {
  PlanShape shape;
  std::unique_ptr<GpuAttentionRunner> runner;
};

// Runs attention for one planned batch; returns the "run" JSON object's text.
absl::StatusOr<std::string> RunAttention(const RunConfig& config, const PlannerConfig& planner,
                                         const Scenario& scenario, const HostMetadata& plan,
                                         GraphRun* graph, uint64_t seed,
                                         const std::string& dump_dir) {
  const KvPagePool& pool = *scenario.pool;
  const ValidatedBatch& batch = scenario.batch;
  const AttentionOptions options = OptionsOf(config);
  ASSIGN_OR_RETURN(AttentionData data,
                   MakeAttentionData(pool, batch, config.num_q_heads, config.num_kv_heads,
                                     config.head_dim, config.dtype, seed));
  const HostAttentionResult reference =
      AttendLogicalSequences(LogicalRequestsOf(pool, batch, data), config.num_q_heads,
                             config.num_kv_heads, config.head_dim, options);
  const bool gpu = VisibleGpuCount() > 0;
  const int64_t tokens = batch.descriptor().num_tokens();
  std::vector<double> out, lse;
  int64_t lse_stride = tokens;
  if (gpu) {
    absl::StatusOr<AttentionOutputs> outputs;
    if (graph != nullptr) {
      if (graph->runner == nullptr) {
        ASSIGN_OR_RETURN(graph->runner,
                         GpuAttentionRunner::Create(pool, graph->shape, planner, config.dtype,
                                                    LaunchKind::kGraph));
      }
      outputs = graph->runner->Run(data, pool, batch, options);
      lse_stride = int64_t{graph->shape.max_batch_size} * graph->shape.max_q_len;
    } else {
      outputs = RunKernelEager(data, pool, batch, planner, options);
    }
    RETURN_IF_ERROR(outputs.status());
    out = std::move(outputs->out);
    lse = std::move(outputs->lse);
  } else {
    // The float64 executor following the very plan the kernels would run.
    data.q.resize(int64_t{plan.View().total_q_tokens} * config.num_q_heads * config.head_dim * 2,
                  0);
    ASSIGN_OR_RETURN(HostAttentionResult result,
                     RunHostPlannedAttention(HostArgs(data, plan.View(), options)));
    out = std::move(result.out);
    lse = std::move(result.lse);
    lse_stride = plan.View().total_q_tokens;
  }
  const int64_t live = reference.out.size();
  // A runner that returned less than the launch covers is our bug: say so
  // rather than read past its vectors.
  if (static_cast<int64_t>(out.size()) < live ||
      static_cast<int64_t>(lse.size()) < int64_t{config.num_q_heads} * lse_stride) {
    return absl::InternalError(absl::StrCat("attention run returned ", out.size(), " outputs and ",
                                            lse.size(), " lse values for ", live, " and ",
                                            int64_t{config.num_q_heads} * lse_stride));
  }
  lse = LiveLse(lse, config.num_q_heads, lse_stride, tokens);
  double error_sq = 0, norm_sq = 0;
  for (int64_t i = 0; i < live; ++i) {
    error_sq += (out[i] - reference.out[i]) * (out[i] - reference.out[i]);
    norm_sq += reference.out[i] * reference.out[i];
  }
  const std::string backend = gpu ? "gpu" : "host";
  if (!dump_dir.empty()) {
    RETURN_IF_ERROR(Dump(dump_dir, config, data, plan, out, lse, backend, batch));
  }
  nlohmann::json run;
  run["backend"] = backend;
  run["max_abs_error"] = MaxAbsDiff(out, reference.out, live);
  run["rel_l2_error"] = norm_sq > 0 ? std::sqrt(error_sq / norm_sq) : std::sqrt(error_sq);
  return run.dump();
}

absl::Status WithBatch(size_t b, const absl::Status& status) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat("batch ", b, ": ", status.message()));
}

// Builds and plans every batch of `specs` in order (eagerly, or at the
// capacity of one CUDA graph captured for the file), calling `visit` with each
// and the graph capacity (null when eager).
using PlannedBatch = std::function<absl::Status(size_t b, const Scenario& scenario,
                                                const HostMetadata& plan, const PlanShape* graph)>;
absl::Status PlanEveryBatch(const std::vector<ScenarioSpec>& specs, const RunConfig& config,
                            const PlannerConfig& planner, const PlannedBatch& visit) {
  int32_t max_q_len = 1;
  for (const ScenarioSpec& spec : specs) {
    for (int32_t n : spec.new_tokens) max_q_len = std::max(max_q_len, n);
  }
  for (size_t b = 0; b < specs.size(); ++b) {
    absl::StatusOr<Scenario> scenario = BuildScenario(specs[b]);
    RETURN_IF_ERROR(WithBatch(b, scenario.status()));
    absl::StatusOr<HostMetadata> plan;
    PlanShape shape;
    if (config.graph_max_batch == 0) {
      plan = PlanEager(scenario->batch, *scenario->pool, planner);
    } else {
      shape = CaptureShape(*scenario->pool, config.graph_max_batch, max_q_len, TreeMasksFor(specs));
      plan = PlanOnHost(scenario->batch, *scenario->pool, planner, shape);
    }
    RETURN_IF_ERROR(WithBatch(b, plan.status()));
    RETURN_IF_ERROR(
        WithBatch(b, visit(b, *scenario, *plan, config.graph_max_batch == 0 ? nullptr : &shape)));
  }
  return absl::OkStatus();
}

// Everything but the output; returns the status plan_batch exits with.
absl::Status Run() {
  const std::string path = absl::GetFlag(FLAGS_batch);
  if (path.empty()) return absl::InvalidArgumentError("--batch=FILE.json is required");
  RunFlags flags;
  flags.graph_max_batch = absl::GetFlag(FLAGS_graph_max_batch);
  flags.run = absl::GetFlag(FLAGS_run);
  flags.dump_dir = absl::GetFlag(FLAGS_dump_dir);
  flags.num_q_heads = absl::GetFlag(FLAGS_num_q_heads);
  flags.num_kv_heads = absl::GetFlag(FLAGS_num_kv_heads);
  flags.head_dim = absl::GetFlag(FLAGS_head_dim);
  flags.dtype = absl::GetFlag(FLAGS_dtype);
  flags.window_left = absl::GetFlag(FLAGS_window_left);
  flags.softcap = absl::GetFlag(FLAGS_softcap);
  ASSIGN_OR_RETURN(const RunConfig config, ValidateRunFlags(flags));
  ASSIGN_OR_RETURN(const PlannerConfig planner, PlannerConfigOf(config));

  absl::StatusOr<std::string> text = ReadBoundedFile(path, kMaxBatchFileBytes);
  if (!text.ok()) {
    return absl::Status(text.status().code(), absl::StrCat("--batch: ", text.status().message()));
  }
  ASSIGN_OR_RETURN(BatchFile file, ParseBatchFile(*text));
  text->clear();
  text->shrink_to_fit();
  RETURN_IF_ERROR(UseCommonPool(file.specs));  // one pool layout for all batches (batch_json.h)
  RETURN_IF_ERROR(CheckRunLimits(file.specs, config));

  // Pass 1: every batch built and planned, nothing kept, nothing printed, so
  // that any invalid batch fails the run before stdout sees a byte.
  RETURN_IF_ERROR(PlanEveryBatch(file.specs, config, planner,
                                 [](size_t, const Scenario&, const HostMetadata&,
                                    const PlanShape*) { return absl::OkStatus(); }));

  // Pass 2: the same plans again, each run and written out as it is made.
  if (!config.dump_dir.empty()) RETURN_IF_ERROR(MakeDirectory(config.dump_dir));
  CheckedFile out = CheckedFile::Stdout();
  GraphRun graph;
  const absl::Status planned = PlanEveryBatch(
      file.specs, config, planner,
      [&](size_t b, const Scenario& scenario, const HostMetadata& plan,
          const PlanShape* capture) -> absl::Status {
        std::string run;
        if (config.run) {
          std::string dump_dir = config.dump_dir;
          if (!dump_dir.empty() && file.is_array) dump_dir = absl::StrCat(dump_dir, "/batch_", b);
          if (capture != nullptr) graph.shape = *capture;
          ASSIGN_OR_RETURN(run, RunAttention(config, planner, scenario, plan,
                                             capture != nullptr ? &graph : nullptr,
                                             file.specs[b].seed, dump_dir));
        }
        // Same bytes as one "[" + join(batches, ",\n") + "]" (or the object
        // alone) followed by a newline.
        if (file.is_array) out.Write(b == 0 ? "[" : ",\n");
        RETURN_IF_ERROR(WriteMetadataJson(plan, scenario.batch, *scenario.pool, run,
                                          [&out](absl::string_view piece) { out.Write(piece); }));
        // Stop at the first failed write (e.g. a full disk) rather than plan on.
        return out.status();
      });
  if (!planned.ok()) {
    // Stdout's own failure, if any, is the root cause; otherwise the batch's.
    // Whatever was written stays cut off (see the file comment).
    if (!out.status().ok()) return out.status();
    out.Close().IgnoreError();
    return planned;
  }
  out.Write(file.is_array ? "]\n" : "\n");
  return out.Close();
}

}  // namespace
}  // namespace paged_attention

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Prints the attention metadata for a batch file: plan_batch --batch=FILE.json "
      "[--graph_max_batch=N] [--run [--dump_dir=DIR] ...]");
  absl::ParseCommandLine(argc, argv);
  const absl::Status status = paged_attention::Run();
  if (!status.ok()) {
    // One line whatever the message holds: a path or a value may carry a newline.
    std::string message(status.message());
    std::replace(message.begin(), message.end(), '\n', ' ');
    std::fprintf(stderr, "plan_batch: %s\n", message.c_str());
    return 1;
  }
  return 0;
}
