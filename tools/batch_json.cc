#include "tools/batch_json.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "attention/base/status_macros.h"
#include "nlohmann/json.hpp"

namespace paged_attention {
namespace {

using nlohmann::json;

// A JSON value for an error message: its dump, cut to a readable length.
std::string Brief(const json& value) {
  constexpr size_t kMaxChars = 64;
  std::string text = value.is_structured() && value.size() > 8
                         ? std::string(value.is_array() ? "[...]" : "{...}")
                         : value.dump();
  if (text.size() > kMaxChars) text = text.substr(0, kMaxChars) + "...";
  return text;
}

// How deeply arrays and objects nest in `text` (outside strings), counting
// no further than `limit` + 1. A cheap pre-scan, so no later step (parse,
// dump, destruction) ever sees a deep document.
int NestingDepth(absl::string_view text, int limit) {
  int depth = 0, max_depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      max_depth = std::max(max_depth, ++depth);
      if (max_depth > limit) break;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return max_depth;
}

class BatchParser {
 public:
  BatchParser(const json& object, int index)
      : object_(object), where_(absl::StrCat("batch ", index)) {}

  absl::StatusOr<ScenarioSpec> Parse() {
    if (!object_.is_object()) return Error(absl::StrCat(where_, " is not a JSON object"));
    for (const auto& item : object_.items()) {
      static const char* kKnown[] = {"mode",       "page_size",      "seq_lens_convention",
                                     "seq_lens",   "new_tokens",     "num_draft_tokens",
                                     "draft_step", "accept_lengths", "seed"};
      if (std::none_of(std::begin(kKnown), std::end(kKnown),
                       [&](const char* known) { return item.key() == known; })) {
        return Error(absl::StrCat(where_, ": unknown field ", Brief(json(item.key()))));
      }
    }
    ScenarioSpec spec;
    ASSIGN_OR_RETURN(std::string mode_name, RequiredString("mode"));
    // No forward mode name is long: quote at most a prefix of a long one.
    if (mode_name.size() > 32) mode_name = mode_name.substr(0, 32) + "...";
    absl::StatusOr<ForwardMode> mode = ParseForwardMode(mode_name);
    if (!mode.ok()) return Error(absl::StrCat(where_, ": mode: ", mode.status().message()));
    spec.mode = *mode;
    ASSIGN_OR_RETURN(std::string convention, RequiredString("seq_lens_convention"));
    if (convention == "prefix_only") {
      spec.convention = SeqLensConvention::kPrefixOnly;
    } else if (convention == "includes_new_tokens") {
      spec.convention = SeqLensConvention::kIncludesNewTokens;
    } else {
      return Error(absl::StrCat(where_, ": seq_lens_convention = ", Brief(json(convention)),
                                " must be \"prefix_only\" or \"includes_new_tokens\""));
    }
    ASSIGN_OR_RETURN(std::optional<int64_t> page_size, Integer("page_size", 1, 1 << 16));
    if (!page_size) return Error(absl::StrCat(where_, ": page_size is required"));
    spec.page_size = static_cast<int32_t>(*page_size);
    ASSIGN_OR_RETURN(std::optional<int64_t> draft_tokens, Integer("num_draft_tokens", 0, 1024));
    spec.spec.num_draft_tokens = static_cast<int32_t>(draft_tokens.value_or(0));
    ASSIGN_OR_RETURN(std::optional<int64_t> draft_step, Integer("draft_step", -1, 1024));
    spec.spec.draft_step = static_cast<int32_t>(draft_step.value_or(-1));
    ASSIGN_OR_RETURN(std::optional<int64_t> seed,
                     Integer("seed", 0, std::numeric_limits<int64_t>::max()));
    spec.seed = static_cast<uint64_t>(seed.value_or(0));

    ASSIGN_OR_RETURN(std::optional<std::vector<int32_t>> seq_lens, IntArray("seq_lens"));
    ASSIGN_OR_RETURN(std::optional<std::vector<int32_t>> new_tokens, IntArray("new_tokens"));
    ASSIGN_OR_RETURN(std::optional<std::vector<int32_t>> accept, IntArray("accept_lengths"));
    if (accept) spec.spec.accept_lengths = *accept;
    if (spec.mode == ForwardMode::kIdle) {
      if ((seq_lens && !seq_lens->empty()) || (new_tokens && !new_tokens->empty())) {
        return Error(absl::StrCat(where_, ": an IDLE batch has no requests"));
      }
      return spec;
    }
    if (!seq_lens) return Error(absl::StrCat(where_, ": seq_lens is required"));
    const size_t bs = seq_lens->size();
    if (!new_tokens) {
      // Modes whose new-token count is fixed may leave it out.
      int32_t fixed = 0;
      if (spec.mode == ForwardMode::kDecode) fixed = 1;
      if (spec.mode == ForwardMode::kTargetVerify || spec.mode == ForwardMode::kDraftExtendV2) {
        fixed = spec.spec.num_draft_tokens;
      }
      if (fixed == 0) {
        return Error(
            absl::StrCat(where_, ": new_tokens is required for mode ", ForwardModeName(spec.mode)));
      }
      new_tokens = std::vector<int32_t>(bs, fixed);
    }
    if (new_tokens->size() != bs) {
      return Error(absl::StrCat(where_, ": new_tokens has ", new_tokens->size(),
                                " entries but seq_lens has ", bs));
    }
    for (size_t i = 0; i < bs; ++i) {
      int64_t prefix = (*seq_lens)[i];
      if (spec.convention == SeqLensConvention::kIncludesNewTokens) prefix -= (*new_tokens)[i];
      if (prefix < 0) {
        return Error(absl::StrCat(where_, ": request ", i, ": seq_lens[", i, "] = ", (*seq_lens)[i],
                                  " is smaller than new_tokens[", i, "] = ", (*new_tokens)[i],
                                  " under includes_new_tokens"));
      }
      spec.prefix_lens.push_back(static_cast<int32_t>(prefix));
    }
    spec.new_tokens = *new_tokens;
    return spec;
  }

 private:
  static absl::Status Error(std::string message) {
    return absl::InvalidArgumentError(std::move(message));
  }

  absl::StatusOr<std::string> RequiredString(const char* field) {
    const auto it = object_.find(field);
    if (it == object_.end()) return Error(absl::StrCat(where_, ": ", field, " is required"));
    if (!it->is_string()) {
      return Error(absl::StrCat(where_, ": ", field, " = ", Brief(*it), " must be a string"));
    }
    return it->get<std::string>();
  }

  absl::StatusOr<std::optional<int64_t>> Integer(const char* field, int64_t lo, int64_t hi) {
    const auto it = object_.find(field);
    if (it == object_.end()) return std::optional<int64_t>();
    if (!it->is_number_integer()) {
      return Error(absl::StrCat(where_, ": ", field, " = ", Brief(*it), " must be an integer"));
    }
    // An unsigned value past int64 is out of every range (not clamped into it).
    const bool too_large =
        it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(hi);
    const int64_t value = too_large ? hi : it->get<int64_t>();
    if (too_large || value < lo || value > hi) {
      return Error(
          absl::StrCat(where_, ": ", field, " = ", Brief(*it), " must be in [", lo, ", ", hi, "]"));
    }
    return std::optional<int64_t>(value);
  }

  absl::StatusOr<std::optional<std::vector<int32_t>>> IntArray(const char* field) {
    const auto it = object_.find(field);
    if (it == object_.end()) return std::optional<std::vector<int32_t>>();
    if (!it->is_array()) {
      return Error(absl::StrCat(where_, ": ", field, " = ", Brief(*it), " must be an array"));
    }
    if (it->size() > static_cast<size_t>(kMaxRequestsPerBatch)) {
      return Error(absl::StrCat(where_, ": ", field, " has ", it->size(),
                                " entries, more than the ", kMaxRequestsPerBatch,
                                " requests a batch may have"));
    }
    std::vector<int32_t> values;
    values.reserve(it->size());
    for (size_t i = 0; i < it->size(); ++i) {
      const json& element = (*it)[i];
      if (!element.is_number_integer() || element.get<int64_t>() < 0 ||
          element.get<int64_t>() > kMaxLength ||
          (element.is_number_unsigned() && element.get<uint64_t>() > uint64_t(kMaxLength))) {
        return Error(absl::StrCat(where_, ": request ", i, ": ", field, "[", i, "] = ",
                                  Brief(element), " must be an integer in [0, ", kMaxLength, "]"));
      }
      values.push_back(static_cast<int32_t>(element.get<int64_t>()));
    }
    return std::optional<std::vector<int32_t>>(std::move(values));
  }

  const json& object_;
  std::string where_;
};

}  // namespace

absl::StatusOr<std::vector<ScenarioSpec>> ParseBatchFile(absl::string_view text) {
  if (static_cast<int64_t>(text.size()) > kMaxBatchFileBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch file has ", text.size(), " bytes, more than the limit of ", kMaxBatchFileBytes));
  }
  if (NestingDepth(text, kMaxBatchFileDepth) > kMaxBatchFileDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch file nests arrays/objects more than ", kMaxBatchFileDepth, " deep"));
  }
  const json root = json::parse(text.begin(), text.end(), /*cb=*/nullptr,
                                /*allow_exceptions=*/false);
  if (root.is_discarded()) return absl::InvalidArgumentError("batch file is not valid JSON");
  std::vector<ScenarioSpec> specs;
  if (root.is_array()) {
    if (root.empty()) return absl::InvalidArgumentError("batch file holds an empty array");
    if (root.size() > static_cast<size_t>(kMaxBatchesPerFile)) {
      return absl::InvalidArgumentError(absl::StrCat("batch file holds ", root.size(),
                                                     " batches, more than the limit of ",
                                                     kMaxBatchesPerFile));
    }
    for (size_t i = 0; i < root.size(); ++i) {
      ASSIGN_OR_RETURN(ScenarioSpec spec, BatchParser(root[i], static_cast<int>(i)).Parse());
      specs.push_back(std::move(spec));
    }
    return specs;
  }
  ASSIGN_OR_RETURN(ScenarioSpec spec, BatchParser(root, 0).Parse());
  specs.push_back(std::move(spec));
  return specs;
}

absl::Status UseCommonPool(std::vector<ScenarioSpec>& specs) {
  // int64 throughout: the per-field limits bound each value, not the products.
  int64_t context = 1, pages = 0, draft = 1, max_batch = 1;
  size_t longest_batch = 0, longest_request_batch = 0;
  for (size_t b = 0; b < specs.size(); ++b) {
    const ScenarioSpec& spec = specs[b];
    if (spec.page_size < 1 || spec.new_tokens.size() != spec.prefix_lens.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "batch ", b, ": page_size = ", spec.page_size, ", ", spec.prefix_lens.size(),
          " prefix_lens and ", spec.new_tokens.size(), " new_tokens do not form a batch"));
    }
    int64_t batch_pages = 0;
    for (size_t i = 0; i < spec.prefix_lens.size(); ++i) {
      const int64_t total = int64_t{spec.prefix_lens[i]} + spec.new_tokens[i];
      if (total > context) {
        context = total;
        longest_request_batch = b;
      }
      batch_pages += (total + spec.page_size - 1) / spec.page_size + 1;
    }
    pages = std::max(pages, batch_pages);
    if (static_cast<int64_t>(spec.prefix_lens.size()) > max_batch) {
      max_batch = static_cast<int64_t>(spec.prefix_lens.size());
      longest_batch = b;
    }
    draft = std::max<int64_t>(draft, spec.spec.num_draft_tokens);
  }
  const int64_t max_requests = max_batch + 2;
  const int64_t row_width = context + draft;
  if (max_requests * row_width > kMaxCommonPoolTableEntries) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "common pool: max_requests ", max_requests, " (batch ", longest_batch, ") * row width ",
        row_width, " (batch ", longest_request_batch, ") = ", max_requests * row_width,
        " req_to_token entries exceed the limit of ", kMaxCommonPoolTableEntries));
  }
  const int64_t num_pages = pages + max_batch + 9;
  if (num_pages > std::numeric_limits<int32_t>::max()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("common pool: ", num_pages, " pages do not fit int32"));
  }
  for (ScenarioSpec& spec : specs) {
    spec.max_context_len = static_cast<int32_t>(context);
    spec.num_pages = static_cast<int32_t>(num_pages);
    spec.max_requests = static_cast<int32_t>(max_requests);
    spec.draft_headroom = static_cast<int32_t>(draft);
  }
  return absl::OkStatus();
}

std::string MetadataJson(const HostMetadata& metadata, const BatchDescriptor& batch,
                         const KvPagePool& pool, absl::string_view run) {
  const int32_t live = batch.batch_size();
  json out = json::object();
  out["mode"] = std::string(ForwardModeName(batch.mode));
  out["page_size"] = metadata.page_size;
  out["cache_seqlens"] =
      std::vector<int32_t>(metadata.cache_seqlens.begin(), metadata.cache_seqlens.begin() + live);
  out["cu_seqlens_q"] =
      std::vector<int32_t>(metadata.cu_seqlens_q.begin(), metadata.cu_seqlens_q.begin() + live + 1);
  out["cu_seqlens_k"] =
      std::vector<int32_t>(metadata.cu_seqlens_k.begin(), metadata.cu_seqlens_k.begin() + live + 1);
  int32_t max_q = 0, max_k = 0;
  json page_table = json::array(), token_slots = json::array();
  for (int32_t i = 0; i < live; ++i) {
    max_q = std::max(max_q, metadata.cu_seqlens_q[i + 1] - metadata.cu_seqlens_q[i]);
    max_k = std::max(max_k, metadata.cache_seqlens[i]);
    const auto row = metadata.page_table.begin() + int64_t{i} * metadata.max_pages_per_request;
    page_table.push_back(std::vector<int32_t>(row, row + metadata.num_pages_per_request[i]));
    std::vector<int32_t> slots;
    for (int32_t t = 0; t < metadata.cache_seqlens[i]; ++t) {
      slots.push_back(pool.Slot(batch.requests[i].row, t).value_or(-1));
    }
    token_slots.push_back(std::move(slots));
  }
  out["max_seq_len_q"] = max_q;
  out["max_seq_len_k"] = max_k;
  out["num_kv_splits"] = metadata.num_kv_splits;
  out["page_table"] = std::move(page_table);
  out["token_slots"] = std::move(token_slots);
  if (!run.empty()) out["run"] = json::parse(run.begin(), run.end());
  return out.dump();
}

}  // namespace paged_attention
