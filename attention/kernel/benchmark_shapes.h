// The shapes paged_attention_benchmark times, in one list for the benchmark
// (which builds each case's pool, plan and graph from its shape) and for
// tools/partition_diff.sh's `bench` mode (which plans every shape with two
// revisions of the work partition: a partition change's reach on the
// benchmark, read before a GPU run). Header-only and free of Abseil and CUDA:
// partition_diff builds with g++ alone.
#ifndef ATTENTION_KERNEL_BENCHMARK_SHAPES_H_
#define ATTENTION_KERNEL_BENCHMARK_SHAPES_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace paged_attention {

// A tree case's draft tree (spec_decode/draft_tree.h's TreeShape, by name so
// that this header needs nothing beyond the standard library).
enum class BenchmarkTree { kNone, kBalanced, kRandom, kDraftDecode };

struct AttentionBenchmarkShape {
  std::string family;  // the case is BM_PagedAttention<family>/...
  int32_t num_q_heads = 32, num_kv_heads = 8, head_dim = 128, page_size = 16;
  bool fp16 = false;  // Q, K, V and O in fp16 (bf16 otherwise); named /dtype:fp16
  int32_t batch = 1, q_len = 1;
  int32_t kv_len = 0;        // every request's keys...
  int32_t first_kv_len = 0;  // ...but request 0's when > 0 (Skewed)
  // Tree cases verify a tree of q_len nodes with tree_topk children per node
  // (kBalanced, kRandom), or run draft decode step draft_step of tree_topk
  // branches (kDraftDecode, q_len = tree_topk).
  BenchmarkTree tree = BenchmarkTree::kNone;
  int32_t tree_topk = 0;
  int32_t draft_step = -1;
  bool warm_l2 = false;  // no L2 flush between replays
  // > 1: the graph holds this many calls one after the other, and the time is
  // a replay's over calls_per_graph (OneTileInGraph): a call's latency inside
  // a captured decode step, without the ~2.8 us a one-node graph's launch
  // costs each replay.
  int32_t calls_per_graph = 1;
  // > 0: the merge launch sized for this many merge tasks, as in a CUDA graph
  // captured for a larger batch and replayed with this one (LargeGraph).
  int32_t merge_task_capacity = 0;
  // A CTA for every worker of the GPU, idle ones too, as in a CUDA graph
  // captured with DeviceMetadata's capacity view (OneTileFullGrid; named
  // /grid:all). Otherwise the launch covers the plan's worker span, as an
  // eager launch does (8 CTAs for a one-tile call).
  bool every_worker = false;
  // The call's options beyond the causal mask (Window, Softcap): a sliding
  // window of window_left keys before the diagonal (-1: none), named
  // /window:W, and logits capped at softcap * tanh(s / softcap) (0: none),
  // named /softcap:S.
  int32_t window_left = -1;
  int32_t softcap = 0;

  // Keys of a request of q_len query tokens and kv_len keys that the call
  // must read: the window of its last q_len tokens, or every key.
  int64_t KeysRead(int32_t q_len, int32_t kv_len) const {
    if (window_left < 0) return kv_len;
    return std::min<int64_t>(kv_len, int64_t{window_left} + q_len);
  }

  // The keys as the case's name writes them: "4096", or "131072+63x1024"
  // when request 0 differs.
  std::string KvLabel() const {
    if (first_kv_len <= 0) return std::to_string(kv_len);
    return std::to_string(first_kv_len) + "+" + std::to_string(batch - 1) + "x" +
           std::to_string(kv_len);
  }

  // Every request's keys, request 0 first.
  std::vector<int32_t> KvLens() const {
    std::vector<int32_t> lens(batch, kv_len);
    if (first_kv_len > 0 && batch > 0) lens[0] = first_kv_len;
    return lens;
  }
};

// Every shape, in the benchmark's order.
inline std::vector<AttentionBenchmarkShape> AttentionBenchmarkShapes() {
  std::vector<AttentionBenchmarkShape> shapes;
  auto uniform = [](const char* family, int32_t hq, int32_t hkv, int32_t batch, int32_t q,
                    int32_t kv, int32_t page = 16, int32_t head_dim = 128) {
    AttentionBenchmarkShape s;
    s.family = family;
    s.num_q_heads = hq;
    s.num_kv_heads = hkv;
    s.head_dim = head_dim;
    s.page_size = page;
    s.batch = batch;
    s.q_len = q;
    s.kv_len = kv;
    return s;
  };
  auto add = [&shapes](AttentionBenchmarkShape s) { shapes.push_back(std::move(s)); };
  auto tree = [&](int32_t batch, int32_t q, int32_t kv, BenchmarkTree kind, int32_t topk,
                  int32_t draft_step = -1) {
    AttentionBenchmarkShape s =
        uniform(kind == BenchmarkTree::kDraftDecode ? "TreeDraftDecode" : "TreeVerify", 32, 8,
                batch, q, kv);
    s.tree = kind;
    s.tree_topk = topk;
    s.draft_step = draft_step;
    return s;
  };
  auto warm = [](AttentionBenchmarkShape s) {
    s.warm_l2 = true;
    return s;
  };
  // Decode q = 1.
  for (auto [hq, hkv] : {std::pair{32, 8}, std::pair{64, 8}, std::pair{32, 32}}) {
    for (auto [batch, kv] : {std::pair{1, 32768}, std::pair{1, 131072}, std::pair{8, 16384},
                             std::pair{16, 32768}, std::pair{32, 4096}, std::pair{32, 16384},
                             std::pair{64, 4096}, std::pair{128, 1024}, std::pair{128, 4096}}) {
      if (hq == 32 && hkv == 32 && kv * batch > (1 << 21)) continue;  // 32 KV heads: 4x the bytes
      add(uniform("Decode", hq, hkv, batch, 1, kv));
    }
  }
  // Draft extend q = 2..4 and verify q = 8.
  for (auto [hq, hkv] : {std::pair{32, 8}, std::pair{64, 8}}) {
    for (int32_t q : {2, 4}) {
      for (auto [batch, kv] :
           {std::pair{1, 131072}, std::pair{8, 32768}, std::pair{16, 16384}, std::pair{32, 4096}}) {
        add(uniform("DraftExtend", hq, hkv, batch, q, kv));
      }
    }
    add(uniform("DraftExtend", hq, hkv, 8, 3, 32768));
    for (auto [batch, kv] : {std::pair{1, 32768}, std::pair{1, 131072}, std::pair{16, 8192},
                             std::pair{16, 32768}, std::pair{64, 4096}}) {
      add(uniform("Verify", hq, hkv, batch, 8, kv));
    }
  }
  add(uniform("Verify", 32, 32, 16, 8, 8192));
  // Skewed (1 x 128k + 63 x 1k) beside the uniform batch of the same bytes.
  for (int32_t q : {1, 4}) {
    AttentionBenchmarkShape skewed = uniform("Skewed", 32, 8, 64, q, 1024);
    skewed.first_kv_len = 131072;
    add(skewed);
    add(uniform("Uniform", 32, 8, 64, q, (131072 + 63 * 1024) / 64));
  }
  // Tree verify beside the chain verify of the same q = nd (bar: <= 1.15x the
  // chain's time), and tree draft decode steps beside chain draft extends of
  // q = topk.
  for (auto [batch, kv] : {std::pair{1, 32768}, std::pair{16, 8192}, std::pair{64, 4096}}) {
    for (int32_t nd : {8, 16, 64}) {
      if (nd != 8) add(uniform("Verify", 32, 8, batch, nd, kv));  // q 8 is above
      add(tree(batch, nd, kv, BenchmarkTree::kBalanced, 4));
      add(tree(batch, nd, kv, BenchmarkTree::kRandom, 8));
    }
    add(tree(batch, 4, kv, BenchmarkTree::kDraftDecode, 4, /*draft_step=*/3));
    add(uniform("DraftExtend", 32, 8, batch, 4, kv));
  }
  // Page size 1 / 16 / 64 on the same shapes.
  for (int32_t page : {1, 64}) {
    add(uniform("PageSweep", 32, 8, 32, 1, 16384, page));
    add(uniform("PageSweep", 32, 8, 16, 8, 8192, page));
  }
  add(uniform("PageSweep", 32, 8, 32, 1, 16384, 16));
  add(uniform("PageSweep", 32, 8, 16, 8, 8192, 16));
  // Head dims 64 and 256 (b128 4k: many short requests, several units per
  // worker).
  for (int32_t head_dim : {64, 256}) {
    add(uniform("Decode", 32, 8, 32, 1, 16384, 16, head_dim));
    add(uniform("Verify", 32, 8, 16, 8, 8192, 16, head_dim));
    add(uniform("Decode", 32, 8, 1, 1, 131072, 16, head_dim));
    add(uniform("Decode", 32, 8, 128, 1, 4096, 16, head_dim));
  }
  // Head_dim 256 draft extend q4 (16-row units: the general kernel, beside
  // the decode kernel's units of at most 8 rows).
  add(uniform("DraftExtend", 32, 8, 16, 4, 8192, 16, 256));
  // Head_dim 256 tree verify beside the chain verify of the same q above (the
  // tree kernel at head_dim 256, NOTES.md `RS`).
  AttentionBenchmarkShape tree256 = tree(16, 8, 8192, BenchmarkTree::kBalanced, 4);
  tree256.head_dim = 256;
  add(tree256);
  // Head_dim 64 units of 16 rows of two KV heads (work_plan.h, CanPairKvHeads):
  // 64/8 decode (GPT-OSS's heads) and 32/8 draft extend q = 2.
  for (auto [batch, kv] : {std::pair{32, 16384}, std::pair{1, 131072}, std::pair{128, 4096}}) {
    add(uniform("Decode", 64, 8, batch, 1, kv, 16, 64));
  }
  add(uniform("DraftExtend", 32, 8, 32, 2, 4096, 16, 64));
  add(uniform("DraftExtend", 32, 8, 1, 2, 131072, 16, 64));
  // One-tile calls (latency) and a few warm-L2 references.
  add(warm(uniform("OneTile", 32, 8, 1, 1, 64)));
  add(warm(uniform("OneTile", 32, 8, 1, 8, 64)));
  add(warm(uniform("Decode", 32, 8, 1, 1, 4096)));
  add(warm(uniform("Decode", 32, 8, 64, 1, 4096)));
  // The one-tile calls on the grid of a graph captured for any batch: every
  // worker's CTA, where OneTile launches the 8 its plan uses.
  for (int32_t q : {1, 8}) {
    AttentionBenchmarkShape full = warm(uniform("OneTileFullGrid", 32, 8, 1, q, 64));
    full.every_worker = true;
    add(full);
  }
  // The one-tile calls as 16 calls in one graph, per call: what a call adds
  // to a captured decode step (OneTile pays a one-node graph's launch too).
  for (int32_t q : {1, 8}) {
    AttentionBenchmarkShape chain = warm(uniform("OneTileInGraph", 32, 8, 1, q, 64));
    chain.calls_per_graph = 16;
    add(chain);
  }
  // One-request verify replayed in a graph captured for b16 verify q8 8k (128
  // merge tasks): the merge kernel's two-row instantiation and b16's grid on a
  // one-request plan, beside the Verify case of the same shape (NOTES.md `MPI`).
  for (auto [hq, q] : {std::pair{32, 8}, std::pair{32, 16}, std::pair{64, 8}}) {
    AttentionBenchmarkShape large = uniform("LargeGraph", hq, 8, 1, q, 32768);
    large.merge_task_capacity = 128;
    add(large);
  }
  // Prefill-like (compute-bound) for the dashboard's TFLOP/s view.
  add(uniform("Prefill", 32, 8, 4, 512, 4096));
  add(uniform("Prefill", 32, 8, 1, 2048, 16384));
  // fp16 twins of bf16 cases above (the kernels are instantiated per dtype;
  // the peers run in fp16 too): decode at every head_dim, draft extend,
  // memory- and compute-bound verify.
  auto fp16 = [](AttentionBenchmarkShape s) {
    s.fp16 = true;
    return s;
  };
  for (auto [batch, kv] : {std::pair{1, 131072}, std::pair{32, 16384}, std::pair{128, 4096}}) {
    add(fp16(uniform("Decode", 32, 8, batch, 1, kv)));
  }
  add(fp16(uniform("Decode", 32, 8, 32, 1, 16384, 16, 64)));
  add(fp16(uniform("Decode", 32, 8, 32, 1, 16384, 16, 256)));
  add(fp16(uniform("DraftExtend", 32, 8, 16, 4, 16384)));
  add(fp16(uniform("Verify", 32, 8, 16, 8, 8192)));
  add(fp16(uniform("Verify", 32, 8, 16, 8, 8192, 16, 64)));
  add(fp16(uniform("Verify", 32, 8, 16, 64, 8192)));
  // GQA ratios that are not powers of two, as models ship them (Llama 3.2 3B:
  // 24 / 8 = 3, Qwen2.5 32B: 40 / 8 = 5, Qwen2.5 7B: 28 / 4 = 7): units of 3-7
  // rows per query token that end inside a 16-row block. Decode and verify
  // q = 8; no bars of the (its shapes are 32/8, 64/8 and 32/32), the
  // peers beside them.
  for (auto [hq, hkv] : {std::pair{24, 8}, std::pair{40, 8}, std::pair{28, 4}}) {
    add(uniform("Gqa", hq, hkv, 32, 1, 16384));
    add(uniform("Gqa", hq, hkv, 16, 8, 8192));
  }
  // A sliding window of 4096 keys (Mistral's, Gemma 2's local layers) over
  // 32k-key requests: the call must read only the window, so each case has a
  // twin above that reads the same keys without one (Decode b32 4k, Verify
  // b64 q8 4k; tools/peer_benchmark.py prints window / twin).
  auto windowed = [](AttentionBenchmarkShape s) {
    s.window_left = 4095;
    return s;
  };
  add(windowed(uniform("Window", 32, 8, 32, 1, 32768)));
  add(windowed(uniform("Window", 32, 8, 64, 8, 32768)));
  // Logit softcapping at 50 (Gemma 2), beside the twin without it above:
  // memory-bound decode and verify, verify at head_dim 256 (Gemma 2's), and
  // the compute-bound verify q64 and prefill, where a tanh per logit shows.
  auto capped = [](AttentionBenchmarkShape s) {
    s.softcap = 50;
    return s;
  };
  add(capped(uniform("Softcap", 32, 8, 32, 1, 16384)));
  add(capped(uniform("Softcap", 32, 8, 16, 8, 8192)));
  add(capped(uniform("Softcap", 32, 8, 16, 8, 8192, 16, 256)));
  add(capped(uniform("Softcap", 32, 8, 16, 64, 8192)));
  add(capped(uniform("Softcap", 32, 8, 4, 512, 4096)));
  return shapes;
}

}  // namespace paged_attention

#endif  // ATTENTION_KERNEL_BENCHMARK_SHAPES_H_
