#!/usr/bin/env python3
"""Checks a plan_batch --dump_dir folder with numpy alone: recomputes paged
attention in float64 from q, k_cache, v_cache and the metadata, and compares it
with the dumped out and lse.

The keys each query row attends to are tree_mask.npy's row when the dump has
one (after checking it: within the causal mask and the window, and, for a tree
batch, exactly the committed keys plus the row's ancestors-or-self recomputed
here from tree_parents.npy); otherwise the bottom-right causal mask and the
window. A mask that fails its check is reported (on stderr) and fails the run.

    python3 tools/check_dump.py DIR [--tolerance 0.03]
"""
import argparse
import json
import os
import sys

import numpy as np


def decode(bits, dtype):
    if dtype == "bfloat16":
        return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return bits.view(np.float16).astype(np.float64)


def ancestors_or_self(parents):
    """[D, D] bool: row k marks node k and every node on its path to the root
    (-1). ValueError unless every parent is -1 or an earlier node."""
    d = len(parents)
    seen = np.zeros((d, d), dtype=bool)
    for k in range(d):
        if not -1 <= parents[k] < k:
            raise ValueError(f"node {k} has parent {parents[k]}, not -1 or an earlier node")
        node = k
        while node >= 0:
            seen[k, node] = True
            node = parents[node]
    return seen


def expected_mask(meta, load, cu_q, cache_seqlens, width):
    """The visibility mask plan_batch should have dumped, recomputed from the
    batch's shape (and tree_parents.npy for a tree): [q tokens, width] bool."""
    window, draft_keys = meta["window_left"], meta.get("tree_draft_keys", 0)
    parents = load("tree_parents") if draft_keys > 0 else None
    q_lens = cu_q[1:] - cu_q[:-1]
    if parents is not None and (parents.shape != (meta["live_requests"], draft_keys)
                                or (q_lens > draft_keys).any()):
        raise ValueError(f"shape {parents.shape} for {meta['live_requests']} requests of "
                         f"{draft_keys} draft keys and at most that many query tokens")
    want = np.zeros((cu_q[-1], width), dtype=bool)
    for i in range(meta["live_requests"]):
        q_len, k_len = cu_q[i + 1] - cu_q[i], cache_seqlens[i]
        tokens = np.arange(k_len)
        try:
            tree = ancestors_or_self(parents[i]) if parents is not None else None
        except ValueError as error:
            raise ValueError(f"request {i}: {error}")
        for j in range(q_len):
            diagonal = j + k_len - q_len
            visible = tokens <= diagonal
            if tree is not None:
                # Query j is node D - q_len + j; draft key k is key k_len - D + k.
                visible[k_len - draft_keys:] = tree[draft_keys - q_len + j]
            if window >= 0:
                visible &= tokens >= diagonal - window
            want[cu_q[i] + j, :k_len] = visible
    return want


def check_mask(directory, meta, load, cu_q, cache_seqlens):
    """tree_mask.npy checked against its recomputation; returns (mask or None,
    list of problems)."""
    if not os.path.exists(os.path.join(directory, "tree_mask.npy")):
        if meta.get("tree_draft_keys", 0) > 0:
            return None, ["tree batch without tree_mask.npy"]
        return None, []
    mask = load("tree_mask")
    live_k = max(cache_seqlens[: meta["live_requests"]], default=0)
    if mask.dtype != np.bool_ or mask.shape != (cu_q[-1], live_k):
        return None, [f"tree_mask.npy is {mask.dtype} {mask.shape}, expected bool "
                      f"({cu_q[-1]}, {live_k})"]
    try:
        want = expected_mask(meta, load, cu_q, cache_seqlens, mask.shape[1])
    except (ValueError, IndexError, OSError) as error:
        return None, [f"tree_parents.npy: {error}"]
    problems = []
    for i in range(meta["live_requests"]):
        q_len, k_len = cu_q[i + 1] - cu_q[i], cache_seqlens[i]
        for j in range(q_len):
            row = cu_q[i] + j
            causal = np.arange(mask.shape[1]) <= j + k_len - q_len
            if (mask[row] & ~causal).any():
                problems.append(f"tree_mask row {row} (request {i}, query {j}) sees keys "
                                f"{np.flatnonzero(mask[row] & ~causal).tolist()} past its "
                                f"causal diagonal")
            elif (mask[row] != want[row]).any():
                problems.append(f"tree_mask row {row} (request {i}, query {j}) differs at keys "
                                f"{np.flatnonzero(mask[row] != want[row]).tolist()}")
    return mask, problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("--tolerance", type=float, default=3e-2)
    args = parser.parse_args()
    load = lambda name: np.load(os.path.join(args.dir, name + ".npy"))
    meta = json.load(open(os.path.join(args.dir, "meta.json")))
    q = decode(load("q"), meta["dtype"])
    k_cache = decode(load("k_cache"), meta["dtype"])
    v_cache = decode(load("v_cache"), meta["dtype"])
    page_table, cache_seqlens = load("page_table"), load("cache_seqlens")
    cu_q, out, lse = load("cu_seqlens_q"), load("out"), load("lse")
    hq, hkv, page_size = meta["num_q_heads"], meta["num_kv_heads"], meta["page_size"]
    scale, window, softcap = meta["scale"], meta["window_left"], meta["softcap"]
    group = hq // hkv
    mask, problems = check_mask(args.dir, meta, load, cu_q, cache_seqlens)
    for problem in problems[:10]:
        print(f"{args.dir}: {problem}", file=sys.stderr)
    if len(problems) > 10:
        print(f"{args.dir}: ... {len(problems) - 10} more tree_mask problems", file=sys.stderr)
    worst_out = worst_lse = 0.0
    for i in range(meta["live_requests"]):
        q_begin, q_len, k_len = cu_q[i], cu_q[i + 1] - cu_q[i], cache_seqlens[i]
        tokens = np.arange(k_len)
        pages = page_table[i][tokens // page_size]
        keys = k_cache[pages, tokens % page_size]    # [k_len, hkv, d]
        values = v_cache[pages, tokens % page_size]
        for j in range(q_len):
            if mask is not None:
                visible = mask[q_begin + j, :k_len]
            else:
                diagonal = j + k_len - q_len
                visible = tokens <= diagonal
                if window >= 0:
                    visible &= tokens >= diagonal - window
            for h in range(hq):
                got = out[q_begin + j, h]
                if not visible.any():
                    worst_out = max(worst_out, np.abs(got).max())
                    continue
                s = keys[visible, h // group] @ q[q_begin + j, h] * scale
                if softcap > 0:
                    s = softcap * np.tanh(s / softcap)
                m = s.max()
                p = np.exp(s - m)
                want = p @ values[visible, h // group] / p.sum()
                worst_out = max(worst_out, np.abs(got - want).max())
                worst_lse = max(worst_lse, abs(lse[h, q_begin + j] - (m + np.log(p.sum()))))
    ok = worst_out <= args.tolerance and worst_lse <= args.tolerance and not problems
    print(f"{args.dir}: {meta['mode']} {meta['backend']} max abs error out {worst_out:.3e}, "
          f"lse {worst_lse:.3e}: {'OK' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
