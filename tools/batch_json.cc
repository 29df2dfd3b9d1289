#include "tools/batch_json.h"

#include <algorithm>
#include <bitset>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "attention/base/status_macros.h"
#include "nlohmann/json.hpp"
#include "spec_decode/draft_tree.h"

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

// A SAX pass over the text before the DOM parse: the DOM parser keeps the
// last of two equal keys silently, so duplicates are found here, with the
// batch they are in. Also records whether the root is an array.
class StructureCheck : public nlohmann::json_sax<json> {
 public:
  bool root_is_array() const { return root_is_array_; }
  // Empty when the text is well formed; else the one-line error.
  const std::string& error() const { return error_; }

  bool null() override { return Value(); }
  bool boolean(bool) override { return Value(); }
  bool number_integer(number_integer_t) override { return Value(); }
  bool number_unsigned(number_unsigned_t) override { return Value(); }
  bool number_float(number_float_t, const string_t&) override { return Value(); }
  bool string(string_t&) override { return Value(); }
  bool binary(binary_t&) override { return Value(); }
  bool start_object(std::size_t) override { return Open(/*is_object=*/true); }
  bool start_array(std::size_t) override { return Open(/*is_object=*/false); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }
  bool key(string_t& key) override {
    Frame& frame = frames_.back();
    if (!frame.keys.insert(key).second) {
      // Inside a root array the batch is the root's latest element.
      const int64_t batch = root_is_array_ ? frames_.front().elements - 1 : 0;
      error_ = absl::StrCat("batch ", batch, ": field ", Brief(json(key)),
                            " appears twice in one object (each field may be given once)");
      return false;
    }
    return true;
  }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception&) override {
    error_ = absl::StrCat("batch file is not valid JSON (at byte ", position, ")");
    return false;
  }

 private:
  struct Frame {
    bool is_object = false;
    int64_t elements = 0;  // values seen so far in an array
    std::set<std::string> keys;
  };

  bool Value() {
    if (!frames_.empty() && !frames_.back().is_object) ++frames_.back().elements;
    return true;
  }
  bool Open(bool is_object) {
    if (frames_.empty()) root_is_array_ = !is_object;
    Value();
    frames_.push_back(Frame{is_object, 0, {}});
    return true;
  }
  bool Close() {
    frames_.pop_back();
    return true;
  }

  std::vector<Frame> frames_;
  bool root_is_array_ = false;
  std::string error_;
};

class BatchParser {
 public:
  BatchParser(const json& object, int index)
      : object_(object), where_(absl::StrCat("batch ", index)) {}

  absl::StatusOr<ScenarioSpec> Parse() {
    if (!object_.is_object()) return Error(absl::StrCat(where_, " is not a JSON object"));
    for (const auto& item : object_.items()) {
      static const char* kKnown[] = {"mode",
                                     "page_size",
                                     "seq_lens_convention",
                                     "seq_lens",
                                     "new_tokens",
                                     "num_draft_tokens",
                                     "draft_step",
                                     "accept_lengths",
                                     "topk",
                                     "tree_parents",
                                     "seed"};
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
    ASSIGN_OR_RETURN(std::optional<int64_t> topk, Integer("topk", 1, kMaxDraftTreeKeys));
    spec.spec.topk = static_cast<int32_t>(topk.value_or(1));
    ASSIGN_OR_RETURN(std::optional<int64_t> seed,
                     Integer("seed", 0, std::numeric_limits<int64_t>::max()));
    spec.seed = static_cast<uint64_t>(seed.value_or(0));

    ASSIGN_OR_RETURN(std::optional<std::vector<int32_t>> seq_lens, IntArray("seq_lens"));
    ASSIGN_OR_RETURN(std::optional<std::vector<int32_t>> new_tokens, IntArray("new_tokens"));
    ASSIGN_OR_RETURN(std::optional<std::vector<int32_t>> accept, IntArray("accept_lengths"));
    if (accept) spec.spec.accept_lengths = *accept;
    RETURN_IF_ERROR(CheckSpeculation(spec, draft_tokens.has_value()));
    ASSIGN_OR_RETURN(const std::optional<std::vector<int32_t>> tree_parents, TreeParents(spec));
    if (tree_parents) spec.spec.tree_parents = *tree_parents;
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
      if (spec.mode == ForwardMode::kDecode) fixed = IsTreeDraftStep(spec) ? spec.spec.topk : 1;
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
    if (accept && accept->size() != bs) {
      return Error(absl::StrCat(where_, ": accept_lengths has ", accept->size(),
                                " entries but seq_lens has ", bs));
    }
    const int32_t nd = spec.spec.num_draft_tokens;
    if (tree_parents && tree_parents->size() != bs * nd) {
      return Error(absl::StrCat(where_, ": tree_parents has ", tree_parents->size() / nd,
                                " entries but seq_lens has ", bs));
    }
    // A count the mode fixes is checked here, by name: left to the pool and
    // descriptor checks it surfaces as unwritten rows, blamed on seq_lens.
    for (size_t i = 0; i < bs; ++i) {
      int64_t fixed = -1;
      std::string why;
      switch (spec.mode) {
        case ForwardMode::kDecode:
          if (IsTreeDraftStep(spec)) {
            fixed = spec.spec.topk;
            why = absl::StrCat("a tree draft step writes topk = ", fixed,
                               " tokens per request (one per branch)");
          } else {
            fixed = 1;
            why = "DECODE writes 1 token per request";
          }
          break;
        case ForwardMode::kTargetVerify:
          fixed = spec.spec.num_draft_tokens;
          why = absl::StrCat("TARGET_VERIFY verifies num_draft_tokens = ", fixed,
                             " tokens per request");
          break;
        case ForwardMode::kDraftExtendV2:
          fixed = spec.spec.num_draft_tokens;
          why = absl::StrCat("DRAFT_EXTEND_V2 extends num_draft_tokens = ", fixed,
                             " tokens per request");
          break;
        case ForwardMode::kDraftExtend:
          if (accept) {
            fixed = int64_t{(*accept)[i]} + 1;
            why = absl::StrCat("DRAFT_EXTEND extends accept_lengths[", i, "] + 1 = ", fixed);
          }
          break;
        default:
          break;
      }
      if (fixed >= 0 && (*new_tokens)[i] != fixed) {
        return Error(absl::StrCat(where_, ": request ", i, ": new_tokens[", i,
                                  "] = ", (*new_tokens)[i], " but ", why));
      }
      if (spec.mode == ForwardMode::kDraftExtend &&
          (*new_tokens)[i] > int64_t{spec.spec.num_draft_tokens} + 1) {
        return Error(absl::StrCat(where_, ": request ", i, ": new_tokens[", i,
                                  "] = ", (*new_tokens)[i],
                                  " but DRAFT_EXTEND extends at most num_draft_tokens + 1 = ",
                                  int64_t{spec.spec.num_draft_tokens} + 1));
      }
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

  // A draft decode step with topk > 1 branches (spec_decode/draft_tree.h).
  static bool IsTreeDraftStep(const ScenarioSpec& spec) {
    return spec.mode == ForwardMode::kDecode && spec.spec.draft_step >= 0 && spec.spec.topk > 1;
  }

  // "tree_parents" flattened request-major, after CheckSpeculation: one list
  // of num_draft_tokens parents per request, each list a tree as
  // AncestorMasks accepts it (its errors, under this batch's name). Every
  // list's length is checked before its entries are read, so no list makes
  // the parser allocate more than kMaxDraftTreeKeys entries per request.
  absl::StatusOr<std::optional<std::vector<int32_t>>> TreeParents(const ScenarioSpec& spec) const {
    const auto it = object_.find("tree_parents");
    const int32_t topk = spec.spec.topk;
    if (it == object_.end()) {
      if (spec.mode == ForwardMode::kTargetVerify && topk > 1) {
        return Error(absl::StrCat(where_, ": topk = ", topk,
                                  " in TARGET_VERIFY needs tree_parents (per request, the parent "
                                  "of each of its num_draft_tokens = ",
                                  spec.spec.num_draft_tokens, " draft tokens)"));
      }
      return std::optional<std::vector<int32_t>>();
    }
    if (spec.mode != ForwardMode::kTargetVerify) {
      return Error(absl::StrCat(where_, ": tree_parents is only for TARGET_VERIFY, not ",
                                ForwardModeName(spec.mode),
                                " (a draft decode step's tree follows from topk and draft_step)"));
    }
    if (!it->is_array()) {
      return Error(absl::StrCat(where_, ": tree_parents = ", Brief(*it), " must be an array"));
    }
    if (it->size() > static_cast<size_t>(kMaxRequestsPerBatch)) {
      return Error(absl::StrCat(where_, ": tree_parents has ", it->size(),
                                " entries, more than the ", kMaxRequestsPerBatch,
                                " requests a batch may have"));
    }
    const int32_t nd = spec.spec.num_draft_tokens;
    std::vector<int32_t> flat;
    for (size_t i = 0; i < it->size(); ++i) {
      const json& list = (*it)[i];
      const std::string at = absl::StrCat(where_, ": request ", i, ": tree_parents[", i, "]");
      if (!list.is_array()) {
        return Error(absl::StrCat(at, " = ", Brief(list), " must be an array of parents"));
      }
      if (list.size() > static_cast<size_t>(kMaxDraftTreeKeys)) {
        return Error(absl::StrCat(at, " has ", list.size(), " entries, more than the ",
                                  kMaxDraftTreeKeys, " nodes a tree may have"));
      }
      if (list.size() != static_cast<size_t>(nd)) {
        return Error(
            absl::StrCat(at, " has ", list.size(), " entries but num_draft_tokens = ", nd));
      }
      std::vector<int32_t> parents;
      parents.reserve(list.size());
      for (size_t k = 0; k < list.size(); ++k) {
        const json& parent = list[k];
        if (!parent.is_number_integer() ||
            (parent.is_number_unsigned() &&
             parent.get<uint64_t>() >= uint64_t(kMaxDraftTreeKeys)) ||
            parent.get<int64_t>() < -1 || parent.get<int64_t>() >= kMaxDraftTreeKeys) {
          return Error(absl::StrCat(at, "[", k, "] = ", Brief(parent),
                                    " must be an integer in [-1, ", kMaxDraftTreeKeys - 1, "]"));
        }
        parents.push_back(static_cast<int32_t>(parent.get<int64_t>()));
      }
      // The descriptor's own check, so the file and the descriptor agree on
      // what a tree is (and say so in the same words).
      const absl::Status shape =
          AncestorMasks(parents, topk, static_cast<int64_t>(i), "tree_parents").status();
      if (!shape.ok()) return Error(absl::StrCat(where_, ": ", shape.message()));
      flat.insert(flat.end(), parents.begin(), parents.end());
    }
    return std::optional<std::vector<int32_t>>(std::move(flat));
  }

  // The speculative fields against the mode and each other, so that no
  // combination plans something other than what the file says.
  absl::Status CheckSpeculation(const ScenarioSpec& spec, bool has_draft_tokens) const {
    const int32_t nd = spec.spec.num_draft_tokens;
    const bool needs_drafts = spec.mode == ForwardMode::kTargetVerify ||
                              spec.mode == ForwardMode::kDraftExtend ||
                              spec.mode == ForwardMode::kDraftExtendV2;
    if (needs_drafts && nd < 1) {
      return Error(absl::StrCat(
          where_, ": num_draft_tokens ",
          has_draft_tokens ? absl::StrCat("= ", nd, " must be >= 1") : std::string("is required"),
          " for mode ", ForwardModeName(spec.mode)));
    }
    if (spec.spec.draft_step >= 0) {
      if (spec.mode != ForwardMode::kDecode) {
        return Error(absl::StrCat(where_, ": draft_step = ", spec.spec.draft_step,
                                  " is only for DECODE batches, not ", ForwardModeName(spec.mode)));
      }
      // Step s writes draft token s of num_draft_tokens.
      if (spec.spec.draft_step >= nd) {
        return Error(absl::StrCat(where_, ": draft_step = ", spec.spec.draft_step,
                                  " must be < num_draft_tokens = ", nd,
                                  " (step s writes draft token s)"));
      }
    }
    const int32_t topk = spec.spec.topk;
    if (topk > 1) {
      const bool draft_decode = spec.mode == ForwardMode::kDecode && spec.spec.draft_step >= 0;
      if (spec.mode != ForwardMode::kTargetVerify && !draft_decode) {
        return Error(absl::StrCat(where_, ": topk = ", topk,
                                  " is only for TARGET_VERIFY and draft DECODE steps "
                                  "(draft_step >= 0), not ",
                                  spec.mode == ForwardMode::kDecode
                                      ? std::string("DECODE without draft_step")
                                      : std::string(ForwardModeName(spec.mode))));
      }
      const int64_t keys = (int64_t{spec.spec.draft_step} + 1) * topk;
      if (draft_decode && keys > kMaxDraftTreeKeys) {
        return Error(
            absl::StrCat(where_, ": draft_step = ", spec.spec.draft_step, " with topk = ", topk,
                         " reads (", spec.spec.draft_step, " + 1) x ", topk, " = ", keys,
                         " draft keys per request; trees hold at most ", kMaxDraftTreeKeys));
      }
    }
    const std::vector<int32_t>& accept = spec.spec.accept_lengths;
    if (!accept.empty() && spec.mode != ForwardMode::kDraftExtend) {
      return Error(absl::StrCat(where_, ": accept_lengths is only for DRAFT_EXTEND, not ",
                                ForwardModeName(spec.mode)));
    }
    for (size_t i = 0; i < accept.size(); ++i) {
      if (accept[i] > nd) {
        return Error(absl::StrCat(where_, ": request ", i, ": accept_lengths[", i,
                                  "] = ", accept[i], " exceeds num_draft_tokens = ", nd,
                                  " (no more drafts than were proposed can be accepted)"));
      }
    }
    return absl::OkStatus();
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

absl::StatusOr<BatchFile> ParseBatchFile(absl::string_view text) {
  if (static_cast<int64_t>(text.size()) > kMaxBatchFileBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch file has ", text.size(), " bytes, more than the limit of ", kMaxBatchFileBytes));
  }
  // The JSON parser ends its input at a NUL byte and skips a leading byte
  // order mark: both would let it read something other than the file.
  if (const size_t nul = text.find('\0'); nul != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("batch file has a NUL byte at byte ", nul,
                                                   " (a JSON text has none; the rest would be "
                                                   "ignored)"));
  }
  if (absl::StartsWith(text, "\xEF\xBB\xBF")) {
    return absl::InvalidArgumentError(
        "batch file starts with a UTF-8 byte order mark (EF BB BF); save it without one");
  }
  if (NestingDepth(text, kMaxBatchFileDepth) > kMaxBatchFileDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch file nests arrays/objects more than ", kMaxBatchFileDepth, " deep"));
  }
  StructureCheck structure;
  json::sax_parse(text.begin(), text.end(), &structure, nlohmann::detail::input_format_t::json,
                  /*strict=*/true);
  if (!structure.error().empty()) return absl::InvalidArgumentError(structure.error());
  const json root = json::parse(text.begin(), text.end(), /*cb=*/nullptr,
                                /*allow_exceptions=*/false);
  if (root.is_discarded()) return absl::InvalidArgumentError("batch file is not valid JSON");
  BatchFile file;
  file.is_array = root.is_array();
  if (file.is_array != structure.root_is_array()) {
    return absl::InternalError("batch file: the two parses disagree on the root's type");
  }
  if (root.is_array()) {
    if (root.empty()) return absl::InvalidArgumentError("batch file holds an empty array");
    if (root.size() > static_cast<size_t>(kMaxBatchesPerFile)) {
      return absl::InvalidArgumentError(absl::StrCat("batch file holds ", root.size(),
                                                     " batches, more than the limit of ",
                                                     kMaxBatchesPerFile));
    }
    for (size_t i = 0; i < root.size(); ++i) {
      ASSIGN_OR_RETURN(ScenarioSpec spec, BatchParser(root[i], static_cast<int>(i)).Parse());
      file.specs.push_back(std::move(spec));
    }
    return file;
  }
  ASSIGN_OR_RETURN(ScenarioSpec spec, BatchParser(root, 0).Parse());
  file.specs.push_back(std::move(spec));
  return file;
}

bool IsTreeSpec(const ScenarioSpec& spec) {
  return spec.spec.topk > 1 || !spec.spec.tree_parents.empty();
}

TreeMasks TreeMasksFor(absl::Span<const ScenarioSpec> specs) {
  return std::any_of(specs.begin(), specs.end(), IsTreeSpec) ? TreeMasks::kPerQueryToken
                                                             : TreeMasks::kNone;
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

absl::Status WriteMetadataJson(const HostMetadata& metadata, const ValidatedBatch& validated,
                               const KvPagePool& pool, absl::string_view run, TextSink sink) {
  const BatchDescriptor& batch = validated.descriptor();
  // Every array is read at the live requests' indices: check they exist.
  const int64_t live = batch.batch_size();
  const int64_t stride = metadata.layout.max_pages_per_request;
  const int64_t page_size = metadata.shape.page_size;
  auto too_small = [&](const char* field, size_t size, int64_t need) {
    return absl::InvalidArgumentError(absl::StrCat("metadata.", field, " has ", size,
                                                   " entries, fewer than the ", need,
                                                   " the batch's ", live, " requests need"));
  };
  if (static_cast<int64_t>(metadata.cache_seqlens.size()) < live) {
    return too_small("cache_seqlens", metadata.cache_seqlens.size(), live);
  }
  if (static_cast<int64_t>(metadata.cu_seqlens_q.size()) < live + 1) {
    return too_small("cu_seqlens_q", metadata.cu_seqlens_q.size(), live + 1);
  }
  if (page_size < 1 || stride < 0 ||
      static_cast<int64_t>(metadata.page_table.size()) < live * stride) {
    return too_small("page_table", metadata.page_table.size(), live * std::max<int64_t>(stride, 0));
  }
  const PartitionCounts& partition = metadata.summary.partition;
  const int64_t workers = static_cast<int64_t>(metadata.worker_begin.size()) - 1;
  if (workers < 0 || partition.num_segments > static_cast<int64_t>(metadata.segments.size()) ||
      partition.num_merge_tasks > static_cast<int64_t>(metadata.merge_tasks.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("metadata work plan: ", metadata.worker_begin.size(), " worker offsets, ",
                     metadata.segments.size(), " segments, ", metadata.merge_tasks.size(),
                     " merge tasks for a plan of ", partition.num_segments, " segments and ",
                     partition.num_merge_tasks, " merge tasks"));
  }
  for (int64_t i = 0; i < live; ++i) {
    const int64_t pages = (int64_t{metadata.cache_seqlens[i]} + page_size - 1) / page_size;
    if (pages < 0 || pages > stride) {
      return absl::InvalidArgumentError(
          absl::StrCat("metadata.cache_seqlens[", i, "] = ", metadata.cache_seqlens[i], " needs ",
                       pages, " pages, outside [0, max_pages_per_request = ", stride, "]"));
    }
  }
  json run_object;
  if (!run.empty()) {
    run_object = json::parse(run.begin(), run.end(), /*cb=*/nullptr, /*allow_exceptions=*/false);
    if (!run_object.is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat("run = ", Brief(json(std::string(run))), " is not a JSON object"));
    }
  }

  // The text of one batch can run to hundreds of MiB (token_slots): pass it
  // on in pieces.
  std::string text;
  auto flush_if_full = [&] {
    if (text.size() >= kTextSinkChunkBytes) {
      sink(text);
      text.clear();
    }
  };
  auto int_array = [&](const char* key, const std::vector<int32_t>& values, int64_t count) {
    absl::StrAppend(&text, "\"", key, "\":[");
    for (int64_t i = 0; i < count; ++i) {
      absl::StrAppend(&text, i ? "," : "", values[i]);
      flush_if_full();
    }
    text += "],";
  };
  // int64: the metadata is the caller's; a difference of int32s may not fit.
  int64_t max_q = 0, max_k = 0;
  for (int64_t i = 0; i < live; ++i) {
    max_q = std::max(max_q, int64_t{metadata.cu_seqlens_q[i + 1]} - metadata.cu_seqlens_q[i]);
    max_k = std::max<int64_t>(max_k, metadata.cache_seqlens[i]);
  }
  // Keys in sorted order, as nlohmann::json (a std::map) prints them.
  text = "{";
  int_array("cache_seqlens", metadata.cache_seqlens, live);
  // cu_seqlens_k is not part of the plan (nothing reads it); printed as the
  // prefix sums of cache_seqlens for engines that pass it to varlen kernels.
  text += "\"cu_seqlens_k\":[0";
  int64_t cu_k = 0;
  for (int64_t i = 0; i < live; ++i) {
    cu_k += metadata.cache_seqlens[i];
    absl::StrAppend(&text, ",", cu_k);
  }
  text += "],";
  int_array("cu_seqlens_q", metadata.cu_seqlens_q, live + 1);
  absl::StrAppend(&text, "\"max_seq_len_k\":", max_k, ",\"max_seq_len_q\":", max_q,
                  ",\"mode\":", json(std::string(ForwardModeName(batch.mode))).dump(),
                  ",\"page_size\":", page_size, ",\"page_table\":[");
  for (int64_t i = 0; i < live; ++i) {
    absl::StrAppend(&text, i ? ",[" : "[");
    const int32_t* row = metadata.page_table.data() + i * stride;
    const int64_t pages = (int64_t{metadata.cache_seqlens[i]} + page_size - 1) / page_size;
    for (int64_t j = 0; j < pages; ++j) {
      absl::StrAppend(&text, j ? "," : "", row[j]);
      flush_if_full();
    }
    text += "]";
  }
  text += "],";
  if (!run.empty()) absl::StrAppend(&text, "\"run\":", run_object.dump(), ",");
  text += "\"token_slots\":[";
  const absl::Span<const int32_t> table = pool.req_to_token();
  for (int64_t i = 0; i < live; ++i) {
    text += i ? ",[" : "[";
    // Slots the pool has written for this row (none for a row it does not
    // know); the rest print as -1, as Slot() would refuse them.
    const int32_t row = batch.requests[i].row;
    const absl::StatusOr<int32_t> length = pool.Length(row);
    const absl::StatusOr<int32_t> draft = pool.DraftLength(row);
    const int64_t written = length.ok() && draft.ok() ? int64_t{*length} + *draft : 0;
    const int64_t base = int64_t{row} * pool.row_width();
    for (int64_t t = 0; t < metadata.cache_seqlens[i]; ++t) {
      absl::StrAppend(&text, t ? "," : "", t < written ? table[base + t] : -1);
      flush_if_full();
    }
    text += "]";
  }
  text += "]";
  if (validated.has_tree()) {
    // The tree each request attends through (spec_decode/draft_tree.h) and
    // the keys each of its query rows sees: the committed keys and the draft
    // keys its mask holds (its ancestors and itself).
    const int64_t draft_keys = validated.tree_draft_keys();
    const std::vector<int32_t> parents = validated.tree_parents();
    const std::vector<uint64_t>& masks = validated.tree_masks();
    absl::StrAppend(&text, ",\"tree\":{\"draft_keys\":", draft_keys, ",\"parents\":[");
    for (int64_t i = 0; i < live; ++i) {
      text += i ? ",[" : "[";
      for (int64_t k = 0; k < draft_keys; ++k) {
        absl::StrAppend(&text, k ? "," : "", parents[i * draft_keys + k]);
      }
      text += "]";
      flush_if_full();
    }
    text += "],\"query_keys\":[";
    int64_t token = 0;
    for (int64_t i = 0; i < live; ++i) {
      const RequestEntry& r = batch.requests[i];
      const int64_t committed = int64_t{r.kv_len()} - draft_keys;
      text += i ? ",[" : "[";
      for (int32_t j = 0; j < r.new_tokens; ++j, ++token) {
        absl::StrAppend(&text, j ? "," : "",
                        committed + static_cast<int64_t>(std::bitset<64>(masks[token]).count()));
      }
      text += "]";
      flush_if_full();
    }
    absl::StrAppend(&text, "],\"topk\":", batch.spec.topk, "}");
  }
  // The work partition (attention/planner/work_plan.h): each segment as
  // [worker, request, kv_head, unit_tile, key_begin, key_end, partial] in
  // worker order, each merge task as [request, kv_head, unit_tile,
  // first_partial, num_partials].
  absl::StrAppend(&text, ",\"work_plan\":{\"active_workers\":", partition.num_active_workers,
                  ",\"merge_tasks\":[");
  for (int64_t m = 0; m < partition.num_merge_tasks; ++m) {
    const MergeTask& task = metadata.merge_tasks[m];
    absl::StrAppend(&text, m ? ",[" : "[", task.request, ",", task.kv_head, ",", task.unit_tile,
                    ",", task.first_partial, ",", task.num_partials, "]");
    flush_if_full();
  }
  text += "],\"segments\":[";
  int64_t worker = 0;
  for (int64_t s = 0; s < partition.num_segments; ++s) {
    while (worker < workers && metadata.worker_begin[worker + 1] <= s) ++worker;
    const WorkSegment& segment = metadata.segments[s];
    absl::StrAppend(&text, s ? ",[" : "[", worker, ",", segment.request, ",", segment.kv_head, ",",
                    segment.unit_tile, ",", segment.key_begin, ",", segment.key_end, ",",
                    segment.partial, "]");
    flush_if_full();
  }
  absl::StrAppend(&text, "],\"workers\":", workers, "}}");
  sink(text);
  return absl::OkStatus();
}

absl::StatusOr<std::string> MetadataJson(const HostMetadata& metadata, const ValidatedBatch& batch,
                                         const KvPagePool& pool, absl::string_view run) {
  std::string out;
  RETURN_IF_ERROR(WriteMetadataJson(metadata, batch, pool, run, [&out](absl::string_view piece) {
    out.append(piece.data(), piece.size());
  }));
  return out;
}

}  // namespace paged_attention
