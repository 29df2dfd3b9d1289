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
// array input). Invalid input: one line on stderr, non-zero exit, no stdout.
//
// --run also executes attention on random inputs drawn from the batch's seed:
// the CUDA kernel when a GPU is present (through a captured CUDA graph with
// --graph_max_batch), the float64 host executor otherwise, and adds "run"
// (backend, max abs and relative L2 error against the float64 reference).
// --dump_dir=DIR writes q, k_cache, v_cache, page_table, cache_seqlens,
// cu_seqlens_q, cu_seqlens_k, out, lse as .npy files plus meta.json (one
// folder batch_N per batch for an array input).
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "attention/base/device_info.h"
#include "attention/base/status_macros.h"
#include "attention/planner/graph_metadata.h"
#include "attention/planner/metadata_planner.h"
#include "nlohmann/json.hpp"
#include "testing/attention_check.h"
#include "testing/host_executor.h"
#include "tools/batch_json.h"
#include "testing/batch_scenario.h"
#include "testing/gpu_attention.h"
#include "tools/npy.h"

ABSL_FLAG(std::string, batch, "", "path of the batch file (JSON)");
ABSL_FLAG(int32_t, graph_max_batch, 0,
          "plan on one CUDA-graph state captured for this many requests (0: eager)");
ABSL_FLAG(bool, run, false, "execute attention (GPU kernel, or host executor without a GPU)");
ABSL_FLAG(std::string, dump_dir, "", "write inputs and outputs as .npy files here (implies --run)");
ABSL_FLAG(int32_t, num_q_heads, 32, "query heads for --run");
ABSL_FLAG(int32_t, num_kv_heads, 8, "KV heads for --run");
ABSL_FLAG(int32_t, head_dim, 128, "head dimension for --run (64, 128, 256)");
ABSL_FLAG(std::string, dtype, "bfloat16", "bfloat16 or float16, for --run");
ABSL_FLAG(int32_t, window_left, -1, "sliding window left size for --run (-1: off)");
ABSL_FLAG(double, softcap, 0.0, "logit softcap for --run (0: off)");

namespace paged_attention {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream file(path);
  if (!file) return absl::NotFoundError(absl::StrCat("--batch: cannot read \"", path, "\""));
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

struct RunSettings {
  bool enabled = false;
  std::string dump_dir;
  int32_t num_q_heads = 0, num_kv_heads = 0, head_dim = 0;
  DType dtype = DType::kBFloat16;
  AttentionOptions options;
};

absl::StatusOr<RunSettings> ReadRunFlags() {
  RunSettings settings;
  settings.dump_dir = absl::GetFlag(FLAGS_dump_dir);
  settings.enabled = absl::GetFlag(FLAGS_run) || !settings.dump_dir.empty();
  settings.num_q_heads = absl::GetFlag(FLAGS_num_q_heads);
  settings.num_kv_heads = absl::GetFlag(FLAGS_num_kv_heads);
  settings.head_dim = absl::GetFlag(FLAGS_head_dim);
  if (settings.num_q_heads < 1 || settings.num_kv_heads < 1 || settings.head_dim < 1 ||
      settings.num_q_heads % settings.num_kv_heads != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--num_q_heads = ", settings.num_q_heads, ", --num_kv_heads = ", settings.num_kv_heads,
        ", --head_dim = ", settings.head_dim,
        ": need positive values with num_q_heads a multiple of num_kv_heads"));
  }
  const std::string dtype = absl::GetFlag(FLAGS_dtype);
  if (dtype == "bfloat16") {
    settings.dtype = DType::kBFloat16;
  } else if (dtype == "float16") {
    settings.dtype = DType::kFloat16;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--dtype = \"", dtype, "\" must be bfloat16 or float16"));
  }
  settings.options = DefaultOptions(settings.head_dim);
  settings.options.window_left = absl::GetFlag(FLAGS_window_left);
  settings.options.softcap = static_cast<float>(absl::GetFlag(FLAGS_softcap));
  if (settings.options.window_left < -1 || settings.options.softcap < 0) {
    return absl::InvalidArgumentError(absl::StrCat("--window_left = ", settings.options.window_left,
                                                   ", --softcap = ", settings.options.softcap,
                                                   " out of range"));
  }
  return settings;
}

absl::Status MakeDirectory(const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::NotFoundError(absl::StrCat("--dump_dir: cannot create \"", dir, "\""));
  }
  return absl::OkStatus();
}

// Writes the inputs and outputs of one attention run as .npy + meta.json.
absl::Status Dump(const std::string& dir, const RunSettings& settings, const AttentionData& data,
                  const HostMetadata& plan, const std::vector<double>& out,
                  const std::vector<double>& lse, const std::string& backend,
                  const BatchDescriptor& batch) {
  RETURN_IF_ERROR(MakeDirectory(dir));
  const KvCacheLayout& layout = data.kv.layout();
  const int64_t tokens = plan.total_q_tokens, hq = settings.num_q_heads, d = settings.head_dim;
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
  meta["dtype"] = DTypeName(settings.dtype);
  meta["storage"] = "q, k_cache, v_cache: dtype bit patterns as uint16; out, lse: float32";
  meta["mode"] = std::string(ForwardModeName(batch.mode));
  meta["live_requests"] = batch.batch_size();
  meta["live_q_tokens"] = batch.num_tokens();
  meta["num_q_heads"] = settings.num_q_heads;
  meta["num_kv_heads"] = settings.num_kv_heads;
  meta["head_dim"] = settings.head_dim;
  meta["page_size"] = plan.page_size;
  meta["num_kv_splits"] = plan.num_kv_splits;
  meta["scale"] = settings.options.softmax_scale;
  meta["causal"] = "bottom-right: query j of q_len Lq sees keys <= j + Lk - Lq";
  meta["window_left"] = settings.options.window_left;
  meta["softcap"] = settings.options.softcap;
  meta["backend"] = backend;
  std::ofstream file(dir + "/meta.json");
  file << meta.dump(2) << "\n";
  if (!file) return absl::InternalError(absl::StrCat("write of ", dir, "/meta.json failed"));
  return absl::OkStatus();
}

// Runs attention for one planned batch; returns the "run" JSON object's text.
absl::StatusOr<std::string> RunAttention(const RunSettings& settings, const Scenario& scenario,
                                         const HostMetadata& plan,
                                         const GraphCaptureConfig* capture, uint64_t seed,
                                         const std::string& dump_dir) {
  const KvPagePool& pool = *scenario.pool;
  const BatchDescriptor& batch = scenario.batch;
  ASSIGN_OR_RETURN(AttentionData data,
                   MakeAttentionData(pool, batch, settings.num_q_heads, settings.num_kv_heads,
                                     settings.head_dim, settings.dtype, seed));
  const HostAttentionResult reference =
      AttendLogicalSequences(LogicalRequestsOf(pool, batch, data), settings.num_q_heads,
                             settings.num_kv_heads, settings.head_dim, settings.options);
  const bool gpu = VisibleGpuCount() > 0;
  std::vector<double> out, lse;
  if (gpu) {
    ASSIGN_OR_RETURN(AttentionOutputs outputs,
                     capture != nullptr
                         ? RunKernelGraphReplay(data, pool, batch, *capture, settings.options)
                         : RunKernelEager(data, plan, settings.options));
    out = std::move(outputs.out);
    lse = std::move(outputs.lse);
  } else {
    data.q.resize(int64_t{plan.total_q_tokens} * settings.num_q_heads * settings.head_dim * 2, 0);
    ASSIGN_OR_RETURN(HostAttentionResult result,
                     RunHostPagedAttention(HostArgs(data, plan.View(), settings.options)));
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
    RETURN_IF_ERROR(Dump(dump_dir, settings, data, plan, out, lse, backend, batch));
  }
  nlohmann::json run;
  run["backend"] = backend;
  run["max_abs_error"] = MaxAbsDiff(out, reference.out, live);
  run["rel_l2_error"] = norm_sq > 0 ? std::sqrt(error_sq / norm_sq) : std::sqrt(error_sq);
  return run.dump();
}

absl::StatusOr<std::string> Run() {
  const std::string path = absl::GetFlag(FLAGS_batch);
  if (path.empty()) return absl::InvalidArgumentError("--batch=FILE.json is required");
  const int32_t graph_max_batch = absl::GetFlag(FLAGS_graph_max_batch);
  if (graph_max_batch < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--graph_max_batch = ", graph_max_batch, " must be >= 0"));
  }
  ASSIGN_OR_RETURN(const RunSettings run_settings, ReadRunFlags());
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  const bool is_array = text.find_first_not_of(" \t\r\n") != std::string::npos &&
                        text[text.find_first_not_of(" \t\r\n")] == '[';
  ASSIGN_OR_RETURN(std::vector<ScenarioSpec> specs, ParseBatchFile(text));
  RETURN_IF_ERROR(UseCommonPool(specs));  // one pool layout for all batches (batch_json.h)

  std::vector<std::string> outputs;
  std::unique_ptr<GraphMetadataState> graph;
  GraphCaptureConfig capture;
  for (size_t b = 0; b < specs.size(); ++b) {
    const std::string where = absl::StrCat("batch ", b, ": ");
    absl::StatusOr<Scenario> scenario = BuildScenario(specs[b]);
    if (!scenario.ok()) {
      return absl::Status(scenario.status().code(),
                          absl::StrCat(where, scenario.status().message()));
    }
    absl::StatusOr<HostMetadata> plan;
    if (graph_max_batch == 0) {
      plan = PlanEager(scenario->batch, *scenario->pool, PlannerConfig{});
    } else {
      if (graph == nullptr) {
        int32_t max_q_len = 1;
        for (const ScenarioSpec& spec : specs) {
          for (int32_t n : spec.new_tokens) max_q_len = std::max(max_q_len, n);
        }
        capture = CaptureConfigForPool(*scenario->pool, graph_max_batch, max_q_len);
        ASSIGN_OR_RETURN(graph, GraphMetadataState::CaptureOnHost(capture));
      }
      absl::Status replayed = graph->Replay(scenario->batch, *scenario->pool);
      if (replayed.ok()) {
        plan = graph->ReadBack();
      } else {
        plan = replayed;
      }
    }
    if (!plan.ok()) {
      return absl::Status(plan.status().code(), absl::StrCat(where, plan.status().message()));
    }
    std::string run;
    if (run_settings.enabled) {
      std::string dump_dir = run_settings.dump_dir;
      if (!dump_dir.empty() && is_array) dump_dir = absl::StrCat(dump_dir, "/batch_", b);
      if (!run_settings.dump_dir.empty()) RETURN_IF_ERROR(MakeDirectory(run_settings.dump_dir));
      absl::StatusOr<std::string> ran =
          RunAttention(run_settings, *scenario, *plan, graph != nullptr ? &capture : nullptr,
                       specs[b].seed, dump_dir);
      if (!ran.ok()) {
        return absl::Status(ran.status().code(), absl::StrCat(where, ran.status().message()));
      }
      run = *std::move(ran);
    }
    outputs.push_back(MetadataJson(*plan, scenario->batch, *scenario->pool, run));
  }
  if (!is_array) return outputs[0];
  return absl::StrCat("[", absl::StrJoin(outputs, ",\n"), "]");
}

}  // namespace
}  // namespace paged_attention

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Prints the attention metadata for a batch file: plan_batch --batch=FILE.json "
      "[--graph_max_batch=N]");
  absl::ParseCommandLine(argc, argv);
  const absl::StatusOr<std::string> json = paged_attention::Run();
  if (!json.ok()) {
    std::fprintf(stderr, "plan_batch: %s\n", std::string(json.status().message()).c_str());
    return 1;
  }
  std::printf("%s\n", json->c_str());
  return 0;
}
