// plan_batch: prints the attention metadata our planner makes for a batch.
//
//   bazel run //tools:plan_batch -- --batch=FILE.json [--graph_max_batch=N]
//
// The batch file format is in README.md (and tools/batch_json.h). For each
// batch the tool creates the requests in a fresh pool whose pages are shuffled
// by the batch's seed, writes the new tokens as an engine would, builds and
// validates the descriptor, and plans it: eagerly, or with --graph_max_batch
// on one CUDA-graph state captured for N requests, replaying the batches in
// order. Output: the metadata as JSON on stdout (an object, or an array for an
// array input).
//
// --run also executes attention on random inputs drawn from the batch's seed:
// the CUDA kernel when a GPU is present (through a captured CUDA graph with
// --graph_max_batch), the float64 host executor otherwise, and adds "run"
// (backend, max abs and relative L2 error against the float64 reference).
// --dump_dir=DIR writes q, k_cache, v_cache, page_table, cache_seqlens,
// cu_seqlens_q, cu_seqlens_k, out, lse as .npy files plus meta.json (one
// folder batch_N per batch for an array input).
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
#include "attention/base/status_macros.h"
#include "attention/planner/graph_metadata.h"
#include "attention/planner/metadata_planner.h"
#include "nlohmann/json.hpp"
#include "testing/attention_check.h"
#include "testing/host_executor.h"
#include "tools/batch_file.h"
#include "tools/batch_json.h"
#include "tools/batch_scenario.h"
#include "tools/checked_file.h"
#include "tools/gpu_attention.h"
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

namespace paged_attention {
namespace {

absl::Status MakeDirectory(const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::ErrnoToStatus(errno, absl::StrCat("--dump_dir: cannot create \"", dir, "\""));
  }
  return absl::OkStatus();
}

AttentionOptions OptionsOf(const RunConfig& config) {
  AttentionOptions options = DefaultOptions(config.head_dim);
  options.window_left = config.window_left;
  options.softcap = config.softcap;
  return options;
}

// Writes the inputs and outputs of one attention run as .npy + meta.json.
absl::Status Dump(const std::string& dir, const RunConfig& config, const AttentionData& data,
                  const HostMetadata& plan, const std::vector<double>& out,
                  const std::vector<double>& lse, const std::string& backend,
                  const BatchDescriptor& batch) {
  RETURN_IF_ERROR(MakeDirectory(dir));
  const KvCacheLayout& layout = data.kv.layout();
  const int64_t tokens = plan.total_q_tokens, hq = config.num_q_heads, d = config.head_dim;
  const int64_t bs = plan.batch_size;
  std::vector<uint8_t> q(data.q);
  q.resize(tokens * hq * d * 2, 0);
  const std::vector<int64_t> cache_shape = {layout.num_pages, layout.page_size, layout.num_kv_heads,
                                            layout.head_dim};
  std::vector<float> out32(out.begin(), out.end()), lse32(lse.begin(), lse.end());
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
      {"page_table",
       "<i4",
       {bs, plan.max_pages_per_request},
       plan.page_table.data(),
       plan.page_table.size() * 4},
      {"cache_seqlens", "<i4", {bs}, plan.cache_seqlens.data(), plan.cache_seqlens.size() * 4},
      {"cu_seqlens_q", "<i4", {bs + 1}, plan.cu_seqlens_q.data(), plan.cu_seqlens_q.size() * 4},
      {"cu_seqlens_k", "<i4", {bs + 1}, plan.cu_seqlens_k.data(), plan.cu_seqlens_k.size() * 4},
      {"out", "<f4", {tokens, hq, d}, out32.data(), out32.size() * 4},
      {"lse", "<f4", {hq, tokens}, lse32.data(), lse32.size() * 4},
  };
  nlohmann::json meta;
  for (const Array& array : arrays) {
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
  meta["page_size"] = plan.page_size;
  meta["num_kv_splits"] = plan.num_kv_splits;
  const AttentionOptions options = OptionsOf(config);
  meta["scale"] = options.softmax_scale;
  meta["causal"] = "bottom-right: query j of q_len Lq sees keys <= j + Lk - Lq";
  meta["window_left"] = options.window_left;
  meta["softcap"] = options.softcap;
  meta["backend"] = backend;
  ASSIGN_OR_RETURN(CheckedFile file, CheckedFile::Create(dir + "/meta.json"));
  file.Write(meta.dump(2));
  file.Write("\n");
  return file.Close();
}

// Runs attention for one planned batch; returns the "run" JSON object's text.
absl::StatusOr<std::string> RunAttention(const RunConfig& config, const Scenario& scenario,
                                         const HostMetadata& plan,
                                         const GraphCaptureConfig* capture, uint64_t seed,
                                         const std::string& dump_dir) {
  const KvPagePool& pool = *scenario.pool;
  const BatchDescriptor& batch = scenario.batch;
  const AttentionOptions options = OptionsOf(config);
  ASSIGN_OR_RETURN(AttentionData data,
                   MakeAttentionData(pool, batch, config.num_q_heads, config.num_kv_heads,
                                     config.head_dim, config.dtype, seed));
  const HostAttentionResult reference =
      AttendLogicalSequences(LogicalRequestsOf(pool, batch, data), config.num_q_heads,
                             config.num_kv_heads, config.head_dim, options);
  const bool gpu = VisibleGpuCount() > 0;
  std::vector<double> out, lse;
  if (gpu) {
    ASSIGN_OR_RETURN(AttentionOutputs outputs,
                     capture != nullptr ? RunKernelGraphReplay(data, pool, batch, *capture, options)
                                        : RunKernelEager(data, plan, options));
    out = std::move(outputs.out);
    lse = std::move(outputs.lse);
  } else {
    data.q.resize(int64_t{plan.total_q_tokens} * config.num_q_heads * config.head_dim * 2, 0);
    ASSIGN_OR_RETURN(HostAttentionResult result,
                     RunHostPagedAttention(HostArgs(data, plan.View(), options)));
    out = std::move(result.out);
    lse = std::move(result.lse);
  }
  const int64_t live = reference.out.size();
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

// Builds and plans every batch of `specs` in order (eagerly, or replayed on
// one graph state captured for the file), calling `visit` with each.
using PlannedBatch =
    std::function<absl::Status(size_t b, const Scenario& scenario, const HostMetadata& plan,
                               const GraphCaptureConfig* capture)>;
absl::Status PlanEveryBatch(const std::vector<ScenarioSpec>& specs, const RunConfig& config,
                            const PlannedBatch& visit) {
  std::unique_ptr<GraphMetadataState> graph;
  GraphCaptureConfig capture;
  for (size_t b = 0; b < specs.size(); ++b) {
    absl::StatusOr<Scenario> scenario = BuildScenario(specs[b]);
    RETURN_IF_ERROR(WithBatch(b, scenario.status()));
    absl::StatusOr<HostMetadata> plan;
    if (config.graph_max_batch == 0) {
      plan = PlanEager(scenario->batch, *scenario->pool, PlannerConfig{});
    } else {
      if (graph == nullptr) {
        int32_t max_q_len = 1;
        for (const ScenarioSpec& spec : specs) {
          for (int32_t n : spec.new_tokens) max_q_len = std::max(max_q_len, n);
        }
        capture = CaptureConfigForPool(*scenario->pool, config.graph_max_batch, max_q_len);
        absl::StatusOr<std::unique_ptr<GraphMetadataState>> captured =
            GraphMetadataState::CaptureOnHost(capture);
        RETURN_IF_ERROR(WithBatch(b, captured.status()));
        graph = *std::move(captured);
      }
      const absl::Status replayed = graph->Replay(scenario->batch, *scenario->pool);
      plan = replayed.ok() ? graph->ReadBack() : absl::StatusOr<HostMetadata>(replayed);
    }
    RETURN_IF_ERROR(WithBatch(b, plan.status()));
    RETURN_IF_ERROR(
        WithBatch(b, visit(b, *scenario, *plan, graph != nullptr ? &capture : nullptr)));
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
  RETURN_IF_ERROR(PlanEveryBatch(file.specs, config,
                                 [](size_t, const Scenario&, const HostMetadata&,
                                    const GraphCaptureConfig*) { return absl::OkStatus(); }));

  // Pass 2: the same plans again, each run and written out as it is made.
  if (!config.dump_dir.empty()) RETURN_IF_ERROR(MakeDirectory(config.dump_dir));
  CheckedFile out = CheckedFile::Stdout();
  const absl::Status planned = PlanEveryBatch(
      file.specs, config,
      [&](size_t b, const Scenario& scenario, const HostMetadata& plan,
          const GraphCaptureConfig* capture) -> absl::Status {
        std::string run;
        if (config.run) {
          std::string dump_dir = config.dump_dir;
          if (!dump_dir.empty() && file.is_array) dump_dir = absl::StrCat(dump_dir, "/batch_", b);
          ASSIGN_OR_RETURN(
              run, RunAttention(config, scenario, plan, capture, file.specs[b].seed, dump_dir));
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
