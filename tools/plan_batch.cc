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
#include <algorithm>
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
#include "attention/base/status_macros.h"
#include "attention/planner/graph_metadata.h"
#include "attention/planner/metadata_planner.h"
#include "tools/batch_json.h"
#include "tools/batch_scenario.h"

ABSL_FLAG(std::string, batch, "", "path of the batch file (JSON)");
ABSL_FLAG(int32_t, graph_max_batch, 0,
          "plan on one CUDA-graph state captured for this many requests (0: eager)");

namespace paged_attention {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream file(path);
  if (!file) return absl::NotFoundError(absl::StrCat("--batch: cannot read \"", path, "\""));
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

// Every batch of a file gets a fresh pool of one common layout (the largest
// needed), as one captured graph state requires; eager and graph plans of a
// file then see the same pages.
void UseCommonPool(std::vector<ScenarioSpec>& specs) {
  int32_t context = 1, pages = 0, draft = 1, max_batch = 1;
  for (const ScenarioSpec& spec : specs) {
    int32_t batch_pages = 0;
    for (size_t i = 0; i < spec.prefix_lens.size(); ++i) {
      const int32_t total = spec.prefix_lens[i] + spec.new_tokens[i];
      context = std::max(context, total);
      batch_pages += (total + spec.page_size - 1) / spec.page_size + 1;
    }
    pages = std::max(pages, batch_pages);
    max_batch = std::max(max_batch, static_cast<int32_t>(spec.prefix_lens.size()));
    draft = std::max(draft, spec.spec.num_draft_tokens);
  }
  for (ScenarioSpec& spec : specs) {
    spec.max_context_len = context;
    spec.num_pages = pages + max_batch + 9;
    spec.max_requests = max_batch + 2;
    spec.draft_headroom = draft;
  }
}

absl::StatusOr<std::string> Run() {
  const std::string path = absl::GetFlag(FLAGS_batch);
  if (path.empty()) return absl::InvalidArgumentError("--batch=FILE.json is required");
  const int32_t graph_max_batch = absl::GetFlag(FLAGS_graph_max_batch);
  if (graph_max_batch < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--graph_max_batch = ", graph_max_batch, " must be >= 0"));
  }
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  const bool is_array = text.find_first_not_of(" \t\r\n") != std::string::npos &&
                        text[text.find_first_not_of(" \t\r\n")] == '[';
  ASSIGN_OR_RETURN(std::vector<ScenarioSpec> specs, ParseBatchFile(text));
  UseCommonPool(specs);

  std::vector<std::string> outputs;
  std::unique_ptr<GraphMetadataState> graph;
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
        GraphCaptureConfig config;
        config.max_batch_size = graph_max_batch;
        config.max_q_len = 1;
        for (const ScenarioSpec& spec : specs) {
          for (int32_t n : spec.new_tokens) config.max_q_len = std::max(config.max_q_len, n);
        }
        config.page_size = scenario->pool->page_size();
        config.row_width = scenario->pool->row_width();
        config.num_rows = scenario->pool->max_requests();
        ASSIGN_OR_RETURN(graph, GraphMetadataState::CaptureOnHost(config));
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
    outputs.push_back(MetadataJson(*plan, scenario->batch, *scenario->pool));
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
