// The plan CLI's run configuration (--graph_max_batch and the --run flags),
// validated before anything is built, and the limits on what a batch file
// may make plan_batch allocate or compute. Every size is computed in int64
// (saturating, so no product can overflow) and compared with a documented
// limit (README.md, "Limits") before any allocation; the errors name the flag
// or the batch and the bytes or work it would take.
//
//   ASSIGN_OR_RETURN(RunConfig config, ValidateRunFlags(flags));
//   ASSIGN_OR_RETURN(BatchFile file, ParseBatchFile(text));
//   RETURN_IF_ERROR(UseCommonPool(file.specs));
//   RETURN_IF_ERROR(CheckRunLimits(file.specs, config));  // then build and plan
#ifndef TOOLS_RUN_CONFIG_H_
#define TOOLS_RUN_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "attention/base/dtype.h"
#include "testing/batch_scenario.h"
#include "tools/batch_json.h"

namespace paged_attention {

// --graph_max_batch: no batch of a file has more requests than this.
inline constexpr int64_t kMaxGraphMaxBatch = kMaxRequestsPerBatch;
// --num_q_heads, --num_kv_heads.
inline constexpr int64_t kMaxNumHeads = 256;
// The captured graph state's page table: --graph_max_batch *
// ceil(row width / page_size) entries, like the common pool's table.
inline constexpr int64_t kMaxGraphPageTableEntries = kMaxCommonPoolTableEntries;
// Host memory one batch's --run may take (see EstimateRunCost).
inline constexpr int64_t kMaxRunHostBytes = int64_t{2} << 30;
// One batch's attention work for --run: sum over requests (padding rows of a
// graph replay included) of query tokens * key rows * num_q_heads *
// head_dim. The float64 references run on the host whatever the backend;
// this is about a minute of them in a fastbuild binary.
inline constexpr int64_t kMaxRunAttentionWork = int64_t{1} << 31;
// One batch's --dump_dir tree_mask.npy: live query tokens * the longest
// request's keys, one byte each (held in memory while it is written).
inline constexpr int64_t kMaxDumpMaskBytes = int64_t{1} << 28;

// The flags as given (int64 and double, so that no value is clamped or
// wrapped before it is checked).
struct RunFlags {
  int64_t graph_max_batch = 0;
  bool run = false;
  std::string dump_dir;
  int64_t num_q_heads = 32;
  int64_t num_kv_heads = 8;
  int64_t head_dim = 128;
  std::string dtype = "bfloat16";
  int64_t window_left = -1;
  double softcap = 0.0;
};

// The validated configuration.
struct RunConfig {
  int32_t graph_max_batch = 0;  // 0: eager planning
  bool run = false;             // --run, or implied by --dump_dir
  std::string dump_dir;         // empty: no dump
  int32_t num_q_heads = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;
  DType dtype = DType::kBFloat16;
  int32_t window_left = -1;
  float softcap = 0.0f;
};

// Checks every flag on its own (errors name the flag and the value):
// --graph_max_batch in [0, kMaxGraphMaxBatch]; --num_q_heads and
// --num_kv_heads in [1, kMaxNumHeads], q a multiple of kv; --head_dim 64, 128
// or 256 (Unimplemented otherwise: the kernels exist for those); --dtype
// bfloat16 or float16; --window_left -1 or in [0, INT32_MAX]; --softcap finite,
// >= 0 and, if > 0, still > 0 and finite as a float (the kernel's type).
// InvalidArgument otherwise.
absl::StatusOr<RunConfig> ValidateRunFlags(const RunFlags& flags);

// What one batch would take (saturating at INT64_MAX).
struct RunCost {
  // Host bytes of --run: the K/V pool (2 * slots * num_kv_heads * head_dim *
  // dtype size) plus 40 bytes per element of every key row written (random
  // inputs in float and dtype, the float64 reference's K and V) plus 48 bytes
  // per (query token, head) * (head_dim + 1) (Q in float, dtype and float64;
  // outputs and lse of the reference and of the run; the dump's copies).
  // Query tokens are the replayed capacity (--graph_max_batch * the longest
  // new_tokens of the file) with --graph_max_batch, the live ones otherwise.
  int64_t host_bytes = 0;
  // See kMaxRunAttentionWork.
  int64_t attention_work = 0;
  // --graph_max_batch * ceil(row width / page_size); 0 when eager.
  int64_t graph_page_table_entries = 0;
  // --graph_max_batch * the longest new_tokens / * row width; 0 when eager.
  int64_t graph_query_tokens = 0;
  int64_t graph_key_rows = 0;
  // With --dump_dir: bytes of tree_mask.npy (live query tokens * the longest
  // prefix + new_tokens); 0 otherwise.
  int64_t dump_mask_bytes = 0;
};

// The cost of `spec` (its pool sizes as UseCommonPool or BuildScenario set
// them) under `config`; `max_q_len` is the longest new_tokens of the file.
RunCost EstimateRunCost(const ScenarioSpec& spec, const RunConfig& config, int32_t max_q_len);

// Checks every batch of a file (after UseCommonPool) against the limits
// before anything is built. With --graph_max_batch: one page_size for all
// batches (one captured state serves them), the graph's query tokens and key
// rows within int32 and its page table within kMaxGraphPageTableEntries. With
// --run: each batch within kMaxRunHostBytes and kMaxRunAttentionWork; with
// --dump_dir: within kMaxDumpMaskBytes.
// ResourceExhausted naming the batch, the flag and the bytes or work;
// InvalidArgument for mixed page sizes.
absl::Status CheckRunLimits(absl::Span<const ScenarioSpec> specs, const RunConfig& config);

}  // namespace paged_attention

#endif  // TOOLS_RUN_CONFIG_H_
