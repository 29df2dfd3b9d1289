// Random, mode-appropriate batches for sweeps over every forward mode.
#ifndef TESTING_RANDOM_BATCH_H_
#define TESTING_RANDOM_BATCH_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "spec_decode/batch_descriptor.h"
#include "spec_decode/forward_mode.h"
#include "testing/batch_scenario.h"

namespace paged_attention {

// A mode and the seq_lens convention the caller declares (both are valid for
// every mode: the descriptor only needs the caller to say which one it uses).
struct ModeCase {
  ForwardMode mode;
  SeqLensConvention convention;
  bool draft_decode = false;  // DECODE as draft step s >= 0
  std::string Name() const;
};

// Every mode the planner supports (IDLE included), each in both conventions,
// plus the draft decode steps.
std::vector<ModeCase> AllModeCases();

struct RandomBatchLimits {
  int32_t max_batch_size = 6;
  int32_t max_prefix = 300;
  int32_t max_extend = 40;       // new tokens of EXTEND/MIXED requests
  int32_t num_draft_tokens = 4;  // TARGET_VERIFY / DRAFT_EXTEND(_V2) / draft steps
};

// The most query tokens one request of `mode_case` can have under `limits`
// (the max_q_len a CUDA graph for it is captured with).
int32_t MaxQLenFor(const ModeCase& mode_case, const RandomBatchLimits& limits);

// Random lengths for `mode_case`: skewed on purpose (one long request among
// short ones about half the time) and with prefixes ending on page boundaries
// and one past them.
ScenarioSpec RandomScenarioSpec(const ModeCase& mode_case, int32_t page_size,
                                const RandomBatchLimits& limits, std::mt19937_64& rng);

}  // namespace paged_attention

#endif  // TESTING_RANDOM_BATCH_H_
