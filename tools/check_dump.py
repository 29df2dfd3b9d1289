#!/usr/bin/env python3
"""Checks a plan_batch --dump_dir folder with numpy alone: recomputes paged
attention in float64 from q, k_cache, v_cache and the metadata, and compares it
with the dumped out and lse.

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
    worst_out = worst_lse = 0.0
    for i in range(meta["live_requests"]):
        q_begin, q_len, k_len = cu_q[i], cu_q[i + 1] - cu_q[i], cache_seqlens[i]
        tokens = np.arange(k_len)
        pages = page_table[i][tokens // page_size]
        keys = k_cache[pages, tokens % page_size]    # [k_len, hkv, d]
        values = v_cache[pages, tokens % page_size]
        for j in range(q_len):
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
    ok = worst_out <= args.tolerance and worst_lse <= args.tolerance
    print(f"{args.dir}: {meta['mode']} {meta['backend']} max abs error out {worst_out:.3e}, "
          f"lse {worst_lse:.3e}: {'OK' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
