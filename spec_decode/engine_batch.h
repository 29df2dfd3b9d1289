// Builds engine-style batch inputs the way an engine would, against a real
// page pool: for the plan CLI, tests and benchmarks that need a consistent
// (pool, EngineBatchInputs) pair for any mode and either seq_lens convention.
//
//   KvPagePool pool = ...;
//   ASSIGN_OR_RETURN(EngineBatchInputs inputs,
//       MakeEngineBatch(pool, ForwardMode::kDraftExtendV2,
//                       SeqLensConvention::kIncludesNewTokens,
//                       /*prefix_lens=*/{100, 5}, /*new_tokens=*/{4, 4},
//                       SpecInfo{.num_draft_tokens = 4}));
//   ASSIGN_OR_RETURN(BatchDescriptor batch, BuildBatchDescriptor(inputs, pool));
#ifndef SPEC_DECODE_ENGINE_BATCH_H_
#define SPEC_DECODE_ENGINE_BATCH_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kv_cache/page_pool.h"
#include "spec_decode/batch_descriptor.h"
#include "spec_decode/forward_mode.h"

namespace paged_attention {

// Creates one pool request per entry of prefix_lens / new_tokens and fills in
// the step as the engine would before the forward:
// - the request is extended to its committed length: prefix_lens[i], or for a
//   draft decode step s (DECODE with spec.draft_step = s >= 0) prefix_lens[i] -
//   s x topk (each earlier step wrote one token per branch);
// - this step's slots are allocated: Extend (committed) for EXTEND, MIXED,
//   DECODE and DRAFT_EXTEND; ReserveDraft for TARGET_VERIFY, DRAFT_EXTEND_V2
//   and draft decode (which reserves s x topk + new_tokens[i], the earlier
//   steps' draft slots included).
// Returns inputs with seq_lens in `convention`, extend_seq_lens = new_tokens
// (left empty for DECODE and TARGET_VERIFY, as upstream does), out_cache_loc
// = req_to_token[row][prefix .. prefix + new), positions = prefix + j (in a
// tree: committed length + the node's depth), and `spec`. IDLE takes empty spans. The counts a mode
// fixes are checked here, by name (DECODE 1, a tree draft step spec.topk, TARGET_VERIFY and
// DRAFT_EXTEND_V2 spec.num_draft_tokens, DRAFT_EXTEND spec.accept_lengths[i] + 1 when given): the
// engine inputs leave DECODE's and TARGET_VERIFY's counts out, so a wrong one could not be told
// from a wrong seq_lens convention later. The rest of the spec is BuildBatchDescriptor's to check.
//
// Errors: InvalidArgument for mismatched sizes, negative lengths, a mode or
// convention outside its enum, or a count the mode fixes; OutOfRange for
// prefix + new tokens past the pool's row width (all found before the pool
// is touched); the pool's errors otherwise (ResourceExhausted: pages or rows
// ran out). On any error the pool is left exactly as it was: the same counts,
// table and free lists, so it hands out the same rows and pages in the same
// order as if the call had not been made.
absl::StatusOr<EngineBatchInputs> MakeEngineBatch(KvPagePool& pool, ForwardMode mode,
                                                  SeqLensConvention convention,
                                                  absl::Span<const int32_t> prefix_lens,
                                                  absl::Span<const int32_t> new_tokens,
                                                  const SpecInfo& spec);

}  // namespace paged_attention

#endif  // SPEC_DECODE_ENGINE_BATCH_H_
