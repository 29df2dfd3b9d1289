// libFuzzer target: the plan CLI's validated run configuration (see
// tools/FUZZING.md). An input is text: a first line of flags as on the
// command line ("--run --head_dim=96 --graph_max_batch=4096"), the rest a
// batch file. The flags go through ValidateRunFlags, the file through
// ParseBatchFile and UseCommonPool, both through CheckRunLimits, whose
// verdict is checked against an exact (128-bit) recomputation of every size:
// whatever it lets through is within every documented limit, and what it
// refuses is past one. What is let through and small is then built for
// real (the graph capture, each batch's replay, the attention inputs).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "attention/planner/metadata_planner.h"
#include "testing/batch_scenario.h"
#include "testing/fuzz_input.h"
#include "tools/batch_json.h"
#include "tools/run_config.h"

namespace paged_attention {
namespace {

using int128 = __int128;

// Parses one "--name=value" as absl's flags would; false when absl would
// refuse it (the CLI then exits before our code runs).
bool SetFlag(RunFlags& flags, absl::string_view token) {
  const size_t eq = token.find('=');
  const absl::string_view name = token.substr(0, eq);
  const absl::string_view value = eq == absl::string_view::npos ? "" : token.substr(eq + 1);
  auto integer = [&](int64_t& field) { return absl::SimpleAtoi(value, &field); };
  if (name == "--graph_max_batch") return integer(flags.graph_max_batch);
  if (name == "--num_q_heads") return integer(flags.num_q_heads);
  if (name == "--num_kv_heads") return integer(flags.num_kv_heads);
  if (name == "--head_dim") return integer(flags.head_dim);
  if (name == "--window_left") return integer(flags.window_left);
  if (name == "--softcap") return absl::SimpleAtod(value, &flags.softcap);
  if (name == "--dtype") return (flags.dtype = std::string(value), true);
  if (name == "--dump_dir") return (flags.dump_dir = std::string(value), true);
  if (name == "--run") return (flags.run = value != "false", true);
  return false;
}

int128 CeilDiv(int128 a, int128 b) { return (a + b - 1) / b; }

// The sizes CheckRunLimits judges, exactly (EstimateRunCost's formula).
struct Exact {
  int128 host_bytes = 0, work = 0, graph_entries = 0, graph_tokens = 0, graph_keys = 0;
  int128 dump_mask = 0;
};

Exact ExactCost(const ScenarioSpec& spec, const RunConfig& config, int32_t max_q_len) {
  Exact cost;
  const int128 page_size = std::max(spec.page_size, 1);
  int128 prefix_rows = 0, new_rows = 0, longest = 1;
  for (size_t i = 0; i < spec.prefix_lens.size(); ++i) {
    const int128 prefix = spec.prefix_lens[i], fresh = spec.new_tokens[i];
    prefix_rows += prefix;
    new_rows += fresh;
    longest = std::max(longest, prefix + fresh);
    cost.work += fresh * (prefix + fresh) * config.num_q_heads * config.head_dim;
  }
  const int128 row_width = int128{spec.max_context_len} + spec.draft_headroom;
  int128 query_tokens = new_rows;
  if (config.graph_max_batch > 0) {
    cost.graph_tokens = int128{config.graph_max_batch} * std::max(max_q_len, 1);
    cost.graph_keys = int128{config.graph_max_batch} * row_width;
    cost.graph_entries = int128{config.graph_max_batch} * CeilDiv(row_width, page_size);
    query_tokens = std::max(query_tokens, cost.graph_tokens);
    cost.work += cost.graph_tokens * config.num_q_heads * config.head_dim;
  }
  const int128 row_elements = int128{config.num_kv_heads} * config.head_dim;
  cost.host_bytes =
      2 * int128{spec.num_pages} * page_size * row_elements * DTypeSize(config.dtype) +
      40 * (prefix_rows + new_rows + page_size) * row_elements +
      48 * query_tokens * config.num_q_heads * (config.head_dim + 1);
  if (!config.dump_dir.empty()) cost.dump_mask = new_rows * longest;
  return cost;
}

void Run(absl::string_view text) {
  const size_t newline = text.find('\n');
  if (newline == absl::string_view::npos) return;
  RunFlags flags;
  for (absl::string_view token : absl::StrSplit(text.substr(0, newline), ' ', absl::SkipEmpty())) {
    if (!SetFlag(flags, token)) return;
  }
  const absl::StatusOr<RunConfig> config = ValidateRunFlags(flags);
  if (!config.ok()) {
    FUZZ_CHECK(config.status().code() == absl::StatusCode::kInvalidArgument ||
               config.status().code() == absl::StatusCode::kUnimplemented);
    FUZZ_CHECK(absl::StartsWith(config.status().message(), "--"));
    return;
  }
  FUZZ_CHECK(config->graph_max_batch >= 0 && config->graph_max_batch <= kMaxGraphMaxBatch);
  FUZZ_CHECK(config->num_q_heads >= 1 && config->num_q_heads <= kMaxNumHeads);
  FUZZ_CHECK(config->num_kv_heads >= 1 && config->num_q_heads % config->num_kv_heads == 0);
  FUZZ_CHECK(config->head_dim == 64 || config->head_dim == 128 || config->head_dim == 256);
  FUZZ_CHECK(config->window_left >= -1);
  FUZZ_CHECK(config->softcap >= 0 && config->softcap <= std::numeric_limits<float>::max());
  FUZZ_CHECK((config->softcap > 0) == (flags.softcap > 0));
  FUZZ_CHECK(config->run == (flags.run || !flags.dump_dir.empty()));

  absl::StatusOr<BatchFile> file = ParseBatchFile(text.substr(newline + 1));
  if (!file.ok()) return;
  std::vector<ScenarioSpec>& specs = file->specs;
  if (!UseCommonPool(specs).ok()) return;

  const absl::Status checked = CheckRunLimits(specs, *config);
  int32_t max_q_len = 1;
  for (const ScenarioSpec& spec : specs) {
    for (int32_t n : spec.new_tokens) max_q_len = std::max(max_q_len, n);
  }
  constexpr int128 kInt32Max = std::numeric_limits<int32_t>::max();
  bool within = true;
  for (const ScenarioSpec& spec : specs) {
    const Exact cost = ExactCost(spec, *config, max_q_len);
    if (config->graph_max_batch > 0) {
      within = within && spec.page_size == specs[0].page_size && cost.graph_tokens <= kInt32Max &&
               cost.graph_keys <= kInt32Max && cost.graph_entries <= kMaxGraphPageTableEntries;
    }
    if (config->run) {
      within = within && cost.host_bytes <= kMaxRunHostBytes && cost.work <= kMaxRunAttentionWork &&
               cost.dump_mask <= kMaxDumpMaskBytes;
    }
  }
  FUZZ_CHECK(checked.ok() == within);
  if (!checked.ok()) {
    FUZZ_CHECK(checked.code() == absl::StatusCode::kResourceExhausted ||
               checked.code() == absl::StatusCode::kInvalidArgument);
    FUZZ_CHECK(absl::StartsWith(checked.message(), "batch "));
    return;
  }

  // Small enough to build in microseconds: the planner must take what the
  // limits let through (its own int32 checks never fire), and --run's
  // inputs must build.
  const ScenarioSpec& first = specs.front();
  const int64_t table =
      int64_t{first.max_requests} * (first.max_context_len + first.draft_headroom);
  if (table > (1 << 16) || int64_t{first.num_pages} * first.page_size > (1 << 16)) return;
  for (const ScenarioSpec& spec : specs) {
    absl::StatusOr<Scenario> scenario = BuildScenario(spec);
    if (!scenario.ok()) continue;  // the batch itself is bad: not this target's concern
    if (config->graph_max_batch > 0) {
      const PlanShape capture =
          CaptureShape(*scenario->pool, config->graph_max_batch, max_q_len, TreeMasksFor(specs));
      if (int64_t{capture.max_batch_size} *
              ((capture.max_kv_len + capture.page_size - 1) / capture.page_size) >
          (1 << 16)) {
        return;
      }
      const absl::StatusOr<HostMetadata> replayed = PlanOnHost(
          scenario->batch, *scenario->pool,
          HostPlannerConfig(config->num_q_heads, config->num_kv_heads, config->head_dim), capture);
      FUZZ_CHECK(replayed.ok() ||
                 (replayed.status().code() == absl::StatusCode::kFailedPrecondition &&
                  scenario->batch.batch_size() > config->graph_max_batch));
    }
    if (config->run && ExactCost(spec, *config, max_q_len).host_bytes <= (4 << 20)) {
      FUZZ_CHECK(MakeAttentionData(*scenario->pool, scenario->batch, config->num_q_heads,
                                   config->num_kv_heads, config->head_dim, config->dtype, spec.seed)
                     .ok());
    }
  }
}

}  // namespace
}  // namespace paged_attention

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  paged_attention::Run(absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
