#!/usr/bin/python3
"""Writes the small Google Benchmark JSON files //tools/dashboard:dashboard_test
reads (deterministic; rerun after changing it: /usr/bin/python3 make_testdata.py).

  kernel_run1.json   attention benchmarks, 2026-11-28, older names (kv_len:, no hd:,
                     no E counter: the dashboard derives E from context copy_tbps)
  kernel_run2.json   the same shapes, 2026-11-30, current names (kv:, hd:, E), plus
                     more cases (those as aggregates only); 9 repetitions each in both
                     runs. PLANTED: Verify 64/8 batch 16 q 8 KV 8k is 40% slower; every
                     other shape only has its repetitions reshuffled with 0.2% jitter.
                     The one-tile call inside a graph of 16 calls (per call), and as a
                     one-node graph on a capacity graph's grid (grid:all).
                     Tree steps beside their chains: PLANTED TreeDraftDecode b32 q4 KV 4k
                     at 1.25x its chain's time (issue 13's bar: <= 1.15x).
  peers.json         the peer script's output, 2026-11-30 11:00: our decode/verify
                     shapes (most with vs_best_peer + label, two without) and
                     Peer_sdpa_flash / Peer_sdpa_cudnn / Peer_flex on the same shapes.
  planner_old.json   planner, 2026-11-28, positional args (BM_PlanEager/64/4096/16).
  planner.json       planner, 2026-11-30, named args; BM_PlanReplay skipped (no GPU);
                     one unrecognised benchmark (BM_PageTableGather). No repetitions, so
                     compare.py has no U test here: PLANTED BM_PlanEager batch 256 +12%
                     (beyond its +5% red), every other planner case 3% faster.
The numbers are made up (shaped like the H200 table in ENVIRONMENT.md).
"""

import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
COPY_TBPS = 4.17
REPS = 9
PLANTED = ("Verify", 64, 8, 16, 8, 8192)
PLANTED_PLANNER = ("BM_PlanEager", 256)


def context(date, executable, revision):
    return {"date": date, "host_name": "h200-node", "executable": executable,
            "num_cpus": 16, "mhz_per_cpu": 2000, "cpu_scaling_enabled": False,
            "library_build_type": "release", "gpu": "NVIDIA H200", "gpu_sms": "132",
            "cuda_runtime": "13.0", "cuda_driver": "13.0", "git_revision": revision}


# (case, q_heads, kv_heads, batch, q, kv, page, E of the kernel, l2)
SHAPES = [
    ("Decode", 32, 8, 1, 1, 32768, 16, 0.78, "cold"),
    ("Decode", 32, 8, 16, 1, 32768, 16, 0.93, "cold"),
    ("Decode", 32, 8, 32, 1, 4096, 16, 0.91, "cold"),
    ("Decode", 32, 8, 64, 1, 4096, 16, 0.94, "cold"),
    ("Decode", 32, 8, 1, 1, 131072, 16, 0.80, "cold"),      # misses its 0.85 bar
    ("Decode", 32, 8, 32, 1, 4096, 16, 1.35, "warm"),       # L2 warm: no bar
    ("Decode", 64, 8, 64, 1, 4096, 16, 0.92, "cold"),
    ("DraftExtend", 32, 8, 32, 4, 4096, 16, 0.88, "cold"),
    ("DraftExtend", 32, 8, 8, 2, 32768, 16, 0.90, "cold"),
    ("Verify", 32, 8, 1, 8, 32768, 16, 0.86, "cold"),
    ("Verify", 32, 8, 64, 8, 4096, 16, 0.87, "cold"),
    ("Verify", 32, 8, 16, 8, 8192, 16, 0.86, "cold"),
    ("Verify", 32, 8, 1, 8, 131072, 16, 0.89, "cold"),
    ("Verify", 64, 8, 16, 8, 8192, 16, 0.84, "cold"),       # PLANTED regression in run 2
    ("Verify", 64, 8, 64, 8, 4096, 16, 0.78, "cold"),       # misses its 0.80 bar
    ("Verify", 64, 8, 8, 4, 32768, 16, 0.83, "cold"),
]
# Only in run 2 (new cases).
NEW_SHAPES = [
    ("PageSweep", 32, 8, 16, 4, 8192, 1, 0.74, "cold"),
    ("PageSweep", 32, 8, 16, 4, 8192, 16, 0.85, "cold"),
    ("PageSweep", 32, 8, 16, 4, 8192, 64, 0.86, "cold"),
]


def kv_bytes(q_heads, kv_heads, batch, kv, hd=128):
    return 2.0 * batch * kv * kv_heads * hd * 2


def flops(q_heads, batch, q, kv, hd=128):
    return 4.0 * batch * q * q_heads * kv * hd


def name_of(case, q_heads, kv_heads, batch, q, kv, page, l2, old):
    if old:
        return (f"BM_PagedAttention{case}/heads:{q_heads}_{kv_heads}/batch:{batch}/q:{q}/"
                f"kv_len:{kv}/page:{page}" + ("/l2:warm" if l2 == "warm" else ""))
    return (f"BM_PagedAttention{case}/heads:{q_heads}_{kv_heads}/hd:128/batch:{batch}/q:{q}/"
            f"kv:{kv}/page:{page}" + ("/l2:warm" if l2 == "warm" else ""))


def entries_with_reps(run_name, family_index, instance, times_us, counters_of,
                      aggregates_only=False):
    """Google Benchmark's layout for Repetitions(9) with UseManualTime: 9 iteration
    entries then mean / median / stddev / cv aggregates (only those with
    ReportAggregatesOnly, as the current kernel benchmark does)."""
    name = run_name + f"/repeats:{REPS}/manual_time"
    out = []
    for i, t in enumerate([] if aggregates_only else times_us):
        e = {"name": name, "family_index": family_index, "per_family_instance_index": instance,
             "run_name": name, "run_type": "iteration", "repetitions": REPS,
             "repetition_index": i, "threads": 1, "iterations": 1000,
             "real_time": round(t, 3), "cpu_time": round(t * 1.02 + 2.0, 3), "time_unit": "us"}
        e.update(counters_of(t))
        out.append(e)
    s = sorted(times_us)
    mean = sum(times_us) / len(times_us)
    median = s[len(s) // 2]
    std = (sum((t - mean) ** 2 for t in times_us) / (len(times_us) - 1)) ** 0.5
    for agg, value in (("mean", mean), ("median", median), ("stddev", std),
                       ("cv", std / mean)):
        e = {"name": f"{name}_{agg}", "family_index": family_index,
             "per_family_instance_index": instance, "run_name": name, "run_type": "aggregate",
             "repetitions": REPS, "threads": 1, "aggregate_name": agg, "iterations": REPS,
             "real_time": round(value, 3), "cpu_time": round(value * 1.02 + 2.0, 3),
             "time_unit": "us"}
        if agg == "cv":
            e["aggregate_unit"] = "percentage"
        e.update(counters_of(value) if agg in ("mean", "median") else {})
        out.append(e)
    return out


def attention_counters(q_heads, kv_heads, batch, q, kv, with_e, splits=1):
    def counters(t_us):
        tbps = kv_bytes(q_heads, kv_heads, batch, kv) / (t_us * 1e-6) * 1e-12
        c = {"kv_bytes": kv_bytes(q_heads, kv_heads, batch, kv), "TB/s": round(tbps, 4),
             "TFLOP/s": round(flops(q_heads, batch, q, kv) / (t_us * 1e-6) * 1e-12, 4),
             "splits": splits}
        if with_e:
            c["E"] = round(tbps / COPY_TBPS, 4)
        return c
    return counters


def base_time(q_heads, kv_heads, batch, kv, e):
    return kv_bytes(q_heads, kv_heads, batch, kv) / (e * COPY_TBPS * 1e12) * 1e6


def write(name, data):
    with open(os.path.join(HERE, name), "w") as f:
        f.write('{\n  "context": ' + json.dumps(data["context"]) + ',\n  "benchmarks": [\n')
        f.write(",\n".join("    " + json.dumps(e) for e in data["benchmarks"]))
        f.write("\n  ]\n}\n")


def kernel_runs():
    rng = random.Random(12)
    run1, run2 = [], []
    run2_medians = {}
    for index, (case, qh, kh, b, q, kv, page, e, l2) in enumerate(SHAPES):
        t0 = base_time(qh, kh, b, kv, e)
        reps1 = [t0 * (1 + rng.gauss(0, 0.01)) for _ in range(REPS)]
        reps2 = [t * (1 + rng.gauss(0, 0.002)) for t in rng.sample(reps1, REPS)]
        if (case, qh, kh, b, q, kv) == PLANTED:
            reps2 = [t * 1.40 for t in reps2]
        splits = 1 if b >= 16 else 8
        run1 += entries_with_reps(name_of(case, qh, kh, b, q, kv, page, l2, old=True), index, 0,
                                  reps1, attention_counters(qh, kh, b, q, kv, False, splits))
        run2 += entries_with_reps(name_of(case, qh, kh, b, q, kv, page, l2, old=False), index, 0,
                                  reps2, attention_counters(qh, kh, b, q, kv, True, splits))
        run2_medians[(case, qh, kh, b, q, kv, page, l2)] = sorted(reps2)[REPS // 2]
    family = len(SHAPES)
    extra = []
    for case, qh, kh, b, q, kv, page, e, l2 in NEW_SHAPES:
        t0 = base_time(qh, kh, b, kv, e)
        extra.append((name_of(case, qh, kh, b, q, kv, page, l2, old=False), t0,
                      attention_counters(qh, kh, b, q, kv, True)))
    # Skewed: 1 x 128k + 63 x 1k beside the uniform batch of the same KV bytes.
    skew_bytes = kv_bytes(32, 8, 1, 131072) + kv_bytes(32, 8, 63, 1024)
    uniform_kv = int(skew_bytes / kv_bytes(32, 8, 64, 1))
    for case, t0, args in (("Skewed", base_time(32, 8, 64, uniform_kv, 0.84),
                            "long:131072/short:1024/batch:64"),
                           ("Uniform", base_time(32, 8, 64, uniform_kv, 0.91),
                            f"batch:64/kv:{uniform_kv}")):
        def counters(t_us, qh=32, kh=8):
            tbps = skew_bytes / (t_us * 1e-6) * 1e-12
            return {"kv_bytes": skew_bytes, "TB/s": round(tbps, 4), "E": round(tbps / COPY_TBPS, 4),
                    "TFLOP/s": round(flops(qh, 1, 1, skew_bytes / kv_bytes(qh, kh, 1, 1)) /
                                     (t_us * 1e-6) * 1e-12, 4), "splits": 4}
        extra.append((f"BM_PagedAttention{case}/heads:32_8/hd:128/{args}/q:1/page:16", t0,
                      counters))
    # One tile: latency only.
    extra.append(("BM_PagedAttentionOneTile/heads:32_8/hd:128/batch:1/q:1/kv:64/page:16", 5.2,
                  lambda t: {"kv_bytes": kv_bytes(32, 8, 1, 64), "splits": 1}))
    # Prefill: TFLOP/s.
    for b, q in ((4, 4096), (1, 16384)):
        t0 = flops(32, b, q, q) / 2 / 610e12 * 1e6  # causal: half the FLOPs, 610 TFLOP/s
        extra.append((f"BM_PagedAttentionPrefill/heads:32_8/hd:128/batch:{b}/q:{q}/kv:{q}/page:16",
                      t0, lambda t, b=b, q=q: {"TFLOP/s": round(flops(32, b, q, q) / 2 /
                                                                (t * 1e-6) * 1e-12, 3)}))
    # A case the dashboard does not know: must land in the generic table.
    extra.append(("BM_PagedAttentionMixed/heads:32_8/hd:128/batch:8/q:3/kv:2048/page:16", 41.0,
                  lambda t: {"TB/s": 1.9}))
    # One tile at q=8: timed, but the one-tile bar is the q=1 call's.
    extra.append(("BM_PagedAttentionOneTile/heads:32_8/hd:128/batch:1/q:8/kv:64/page:16", 7.9,
                  lambda t: {"kv_bytes": kv_bytes(32, 8, 1, 64), "splits": 1}))
    # The q=1 one-tile call inside a captured graph of 16 calls: time per call.
    extra.append(("BM_PagedAttentionOneTileInGraph/heads:32_8/hd:128/batch:1/q:1/kv:64/page:16/"
                  "calls:16", 4.1, lambda t: {"kv_bytes": kv_bytes(32, 8, 1, 64), "splits": 1}))
    # The q=1 one-tile call as a one-node graph with a CTA for every worker (the grid
    # of a graph captured for any batch).
    extra.append(("BM_PagedAttentionOneTileFullGrid/heads:32_8/hd:128/batch:1/q:1/kv:64/page:16/"
                  "grid:all", 5.25, lambda t: {"kv_bytes": kv_bytes(32, 8, 1, 64), "splits": 1}))
    # Tree steps beside the chain step of their shape (issue 13's bar: time <= 1.15x
    # the chain's). PLANTED: the tree draft decode takes 1.25x its chain's.
    for case, chain_key, tree, factor in (
            ("TreeVerify", ("Verify", 32, 8, 1, 8, 32768, 16, "cold"), "balanced_topk4", 1.05),
            ("TreeDraftDecode", ("DraftExtend", 32, 8, 32, 4, 4096, 16, "cold"), "step3_topk4",
             1.25)):
        _, qh, kh, b, q, kv, page, l2 = chain_key
        extra.append((name_of(case, qh, kh, b, q, kv, page, l2, old=False) + f"/tree:{tree}",
                      run2_medians[chain_key] * factor,
                      attention_counters(qh, kh, b, q, kv, True)))
    for i, (name, t0, counters) in enumerate(extra):
        reps = [t0 * (1 + rng.gauss(0, 0.01)) for _ in range(REPS)]
        run2 += entries_with_reps(name, family + i, 0, reps, counters, aggregates_only=True)
    # The copy rate of the run, as a benchmark too.
    run2.append({"name": "BM_DeviceCopy/bytes:1073741824/manual_time", "family_index": 99,
                 "per_family_instance_index": 0,
                 "run_name": "BM_DeviceCopy/bytes:1073741824/manual_time",
                 "run_type": "iteration", "repetitions": 1, "repetition_index": 0, "threads": 1,
                 "iterations": 200, "real_time": 515.03, "cpu_time": 517.2, "time_unit": "us",
                 "TB/s": COPY_TBPS})
    executable = "./bin/attention_kernel_paged_attention_benchmark"
    ctx1 = dict(context("2026-11-28T09:12:40+00:00", executable, "7748061"), copy_tbps="4.16")
    ctx2 = dict(context("2026-11-30T10:02:11+00:00", executable, "a1b2c3d"),
                copy_tbps=str(COPY_TBPS))
    write("kernel_run1.json", {"context": ctx1, "benchmarks": run1})
    write("kernel_run2.json", {"context": ctx2, "benchmarks": run2})
    return run2_medians


# Peer TB/s on our shapes (flash, cuDNN, flex), after ENVIRONMENT.md's table.
PEER_TBPS = {
    (32, 8, 1, 1, 32768): (1.70, 2.03, 1.60),
    (32, 8, 16, 1, 32768): (4.21, 4.32, 3.10),
    (32, 8, 32, 1, 4096): (2.45, 3.83, 2.90),
    (32, 8, 64, 1, 4096): (2.53, 4.14, 3.05),
    (32, 8, 1, 1, 131072): (1.90, 2.40, 1.70),
    (64, 8, 64, 1, 4096): (2.40, 4.00, 2.90),
    (32, 8, 32, 4, 4096): (0.68, 1.28, 2.60),
    (32, 8, 8, 2, 32768): (0.90, 1.80, 2.50),
    (32, 8, 1, 8, 32768): (0.77, 0.31, 1.40),
    (32, 8, 64, 8, 4096): (0.69, 1.32, 2.95),
    (32, 8, 16, 8, 8192): (0.67, 1.28, 1.76),
    (32, 8, 1, 8, 131072): (0.96, 0.34, 1.45),
    (64, 8, 16, 8, 8192): (0.34, 0.67, 1.13),
    (64, 8, 64, 8, 4096): (0.35, 0.65, 1.57),
    (64, 8, 8, 4, 32768): (0.35, 0.70, 2.21),
}
PEERS = ("sdpa_flash", "sdpa_cudnn", "flex")
# Our entries the peer script leaves without vs_best_peer: the dashboard computes it.
NO_RATIO = {(32, 8, 64, 8, 4096), (64, 8, 8, 4, 32768)}


def peers_file(run2_medians):
    benchmarks = []
    for (case, qh, kh, b, q, kv, page, l2), ours_us in run2_medians.items():
        if l2 != "cold":
            continue
        shape = f"heads:{qh}_{kh}/hd:128/batch:{b}/q:{q}/kv:{kv}"
        peer_us = {p: kv_bytes(qh, kh, b, kv) / (tbps * 1e12) * 1e6
                   for p, tbps in zip(PEERS, PEER_TBPS[(qh, kh, b, q, kv)])}
        best = min(peer_us, key=peer_us.get)
        tbps = kv_bytes(qh, kh, b, kv) / (ours_us * 1e-6) * 1e-12
        ours = {"name": f"BM_PagedAttention{case}/{shape}/page:{page}",
                "run_name": f"BM_PagedAttention{case}/{shape}/page:{page}",
                "run_type": "iteration", "repetitions": 1, "repetition_index": 0, "threads": 1,
                "iterations": 30, "real_time": round(ours_us, 4), "cpu_time": round(ours_us, 4),
                "time_unit": "us", "kv_bytes": kv_bytes(qh, kh, b, kv), "TB/s": round(tbps, 4),
                "E": round(tbps / COPY_TBPS, 4),
                "TFLOP/s": round(flops(qh, b, q, kv) / (ours_us * 1e-6) * 1e-12, 4)}
        if (qh, kh, b, q, kv) not in NO_RATIO:
            ours["vs_best_peer"] = round(peer_us[best] / ours_us, 4)
            ours["label"] = best
        benchmarks.append(ours)
        for p in PEERS:
            t = peer_us[p]
            benchmarks.append({
                "name": f"Peer_{p}/{shape}", "run_name": f"Peer_{p}/{shape}",
                "run_type": "iteration", "repetitions": 1, "repetition_index": 0, "threads": 1,
                "iterations": 30, "real_time": round(t, 4), "cpu_time": round(t, 4),
                "time_unit": "us", "TB/s": round(kv_bytes(qh, kh, b, kv) / (t * 1e-6) * 1e-12, 4),
                "E": round(kv_bytes(qh, kh, b, kv) / (t * 1e-6) * 1e-12 / COPY_TBPS, 4),
                "TFLOP/s": round(flops(qh, b, q, kv) / (t * 1e-6) * 1e-12, 4)})
    # Prefill peers (no ours in this file: matched to kernel_run2's Prefill).
    for b, q, flash, cudnn in ((4, 4096, 339.0, 679.0), (1, 16384, 344.0, 599.0)):
        shape = f"heads:32_8/hd:128/batch:{b}/q:{q}/kv:{q}"
        for p, tflops in (("sdpa_flash", flash), ("sdpa_cudnn", cudnn)):
            t = flops(32, b, q, q) / 2 / (tflops * 1e12) * 1e6
            benchmarks.append({"name": f"Peer_{p}/{shape}", "run_name": f"Peer_{p}/{shape}",
                               "run_type": "iteration", "repetitions": 1, "threads": 1,
                               "iterations": 30, "real_time": round(t, 3),
                               "cpu_time": round(t, 3), "time_unit": "us", "TFLOP/s": tflops})
    ctx = dict(context("2026-11-30T11:00:05+00:00", "tools/peer_benchmark.py", "a1b2c3d"),
               copy_tbps=str(COPY_TBPS), torch="2.11.0")
    write("peers.json", {"context": ctx, "benchmarks": benchmarks})


def planner_files():
    executable = "./bin/attention_planner_planner_benchmark"
    old, new = [], []
    family_index = 0
    for family, per_request_us in (("BM_PlanEager", 0.055), ("BM_PlanReplayHostGather", 0.021)):
        for instance, (batch, context_len, page) in enumerate(
                (b, 4096, 16) for b in (1, 8, 64, 256)):
            t = 0.6 + per_request_us * batch * (context_len / page) / 64
            planted = (family, batch) == PLANTED_PLANNER
            for runs, name, scale in ((old, f"{family}/{batch}/{context_len}/{page}", 1.0),
                                      (new, f"{family}/batch:{batch}/context:{context_len}/"
                                            f"page_size:{page}", 1.12 if planted else 0.97)):
                runs.append({"name": name, "family_index": family_index,
                             "per_family_instance_index": instance, "run_name": name,
                             "run_type": "iteration", "repetitions": 1, "repetition_index": 0,
                             "threads": 1, "iterations": 100000, "real_time": round(t * scale, 4),
                             "cpu_time": round(t * scale, 4), "time_unit": "us",
                             "page_table_entries": batch * context_len // page})
        family_index += 1
    for runs, name in ((old, "BM_PlanReplay/64/4096/16"),
                       (new, "BM_PlanReplay/batch:64/context:4096/page_size:16/manual_time")):
        runs.append({"name": name, "family_index": family_index, "per_family_instance_index": 0,
                     "run_name": name, "run_type": "iteration", "repetitions": 1,
                     "repetition_index": 0, "threads": 1, "iterations": 0, "real_time": 0,
                     "cpu_time": 0, "time_unit": "us", "error_occurred": True,
                     "error_message": "BM_PlanReplay needs a GPU (device page-table gather)"})
    new.append({"name": "BM_PageTableGather/batch:64/context:4096", "family_index": 9,
                "per_family_instance_index": 0, "run_name": "BM_PageTableGather/batch:64/"
                "context:4096", "run_type": "iteration", "repetitions": 1, "repetition_index": 0,
                "threads": 1, "iterations": 50000, "real_time": 3.1, "cpu_time": 3.1,
                "time_unit": "us", "items_per_second": 5.3e9})
    write("planner_old.json", {"context": dict(context("2026-11-28T09:20:00+00:00", executable,
                                                       "7748061"), gpu="none"),
                               "benchmarks": old})
    write("planner.json", {"context": dict(context("2026-11-30T10:05:00+00:00", executable,
                                                   "a1b2c3d"), gpu="none"), "benchmarks": new})


if __name__ == "__main__":
    medians = kernel_runs()
    peers_file(medians)
    planner_files()
