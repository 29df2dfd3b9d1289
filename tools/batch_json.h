// The plan CLI's batch file format (documented in README.md) and its output.
//
// A batch file holds one batch object or an array of them:
//   {"mode": "DRAFT_EXTEND_V2", "page_size": 4,
//    "seq_lens_convention": "prefix_only" | "includes_new_tokens",
//    "seq_lens": [...], "new_tokens": [...], "num_draft_tokens": n,
//    "draft_step": s, "accept_lengths": [...], "seed": k}
// Errors name the batch, the field, the request and the value, in one line.
#ifndef TOOLS_BATCH_JSON_H_
#define TOOLS_BATCH_JSON_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "attention/planner/metadata_planner.h"
#include "kv_cache/page_pool.h"
#include "spec_decode/batch_descriptor.h"
#include "tools/batch_scenario.h"

namespace paged_attention {

// Parses a batch file into scenario specs (prefix lengths derived from
// seq_lens under the named convention). InvalidArgument on any bad input.
absl::StatusOr<std::vector<ScenarioSpec>> ParseBatchFile(absl::string_view text);

// The metadata of the live requests as one JSON object: mode, cache_seqlens,
// cu_seqlens_q, cu_seqlens_k, max_seq_len_q, max_seq_len_k, page_table (each
// request's used entries), token_slots (each request's slots 0..cache_seqlens-1).
std::string MetadataJson(const HostMetadata& metadata, const BatchDescriptor& batch,
                         const KvPagePool& pool);

}  // namespace paged_attention

#endif  // TOOLS_BATCH_JSON_H_
