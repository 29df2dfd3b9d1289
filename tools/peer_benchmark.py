#!/usr/bin/env python3
"""Our paged attention kernel beside PyTorch's, on the same shapes, in one run.

Runs on the GPU machine with its python3 and PyTorch:

    python3 tools/peer_benchmark.py --ours gpu_bundle/bin/attention_kernel_paged_attention_benchmark \
        --out peers.json [--filter REGEX] [--no-flex]

1. Runs our benchmark binary (Google Benchmark JSON; each case the median of
   31 CUDA-graph replays with L2 flushed, 3 repetitions).
2. Times the same shapes with PyTorch on contiguous K/V ([B, H, L, D], bf16,
   or fp16 for our /dtype:fp16 cases, enable_gqa=True):
   scaled_dot_product_attention with the flash and the cuDNN backends, and
   compiled flex_attention with a bottom-right causal block mask. Each peer:
   the median of 31 calls, L2 flushed before each (by reading 256 MiB, as
   our benchmark does), CUDA events; the SM clock and
   board power sampled until each call ends (NVML), as ours are, go into its
   entry as sm_MHz and power_W. SDPA gets the bottom-right causal mask (causal_lower_right) where
   the backend takes it, else runs unmasked (an upper bound on its speed; the
   entry's label says so). A skewed batch is timed as two calls (the long
   request, then the short ones) since the peers need equal lengths.
   Window cases (/window:W): flex masks the window in its block mask over
   the whole K/V; SDPA reads K/V of only the keys the window holds (the
   last W + q: an upper bound, as rows past the first see up to q - 1 keys
   more). Softcap cases (/softcap:S): flex caps in a score_mod; SDPA has no
   softcap and runs without it (an upper bound; its label says so).
3. Writes one Google-Benchmark-style JSON: our entries (median aggregates)
   with counters vs_best_peer (our speed over the best peer's, > 1 = faster)
   and label naming that peer, one Peer_<name>/<same args> entry per peer
   and shape, and the context of our run plus the peers' (torch version).
   Its git_revision is the bundle's REVISION (tools/gpu_bundle.sh: the
   commit, +uncommitted for a dirty tree) unless --context names one.
4. Prints a table per case with the issue's bars (tools/issue_bars.py, the
   dashboard's too; L2-cold cases and the one-tile call): met or not; the
   count of issue 10's bars and of issue 13's tree bars; then the other
   readings of the bars that wait on the owner (NOTES.md, "What limits it
   now"): the decode bars an allowance for the shuffled pool would meet, and
   the one-tile bar per call in a captured graph.
   `--readings PEERS_JSON` prints the counts and those readings of a
   committed run.

--dry-run replaces PyTorch by made-up timings (for testing this script on a
machine without a GPU).
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

import issue_bars  # beside this script: the bars, shared with tools/dashboard.py

REPLAYS = 31
FLUSH_BYTES = 256 << 20


def parse_args(name):
    """BM_PagedAttentionVerify/heads:32_8/hd:128/batch:16/q:8/kv:8192/page:16 -> (case, args)."""
    parts = name.split("/")
    case = parts[0][len("BM_PagedAttention"):]
    args = {}
    for part in parts[1:]:
        if ":" in part:
            key, value = part.split(":", 1)
            args[key] = value
    return case, args


def shape_of(case, args):
    """Request lengths [(q, kv)] and heads of one of our cases."""
    hq, hkv = (int(x) for x in args["heads"].split("_"))
    batch, q, hd = int(args["batch"]), int(args["q"]), int(args.get("hd", 128))
    kv = args["kv"]
    if "+" in kv:  # "131072+63x1024"
        long_kv, rest = kv.split("+")
        count, short_kv = rest.split("x")
        requests = [(q, int(long_kv))] + [(q, int(short_kv))] * int(count)
    else:
        requests = [(q, int(kv))] * batch
    return hq, hkv, hd, requests


def options_of(args):
    """(window_left or -1, softcap or 0) of one of our cases."""
    return int(args.get("window", -1)), float(args.get("softcap", 0))


def keys_read(requests, window_left):
    """[(q, keys the call must read)]: with a window, those of its last q
    tokens (benchmark_shapes.h, KeysRead)."""
    if window_left < 0:
        return list(requests)
    return [(q, min(k, window_left + q)) for q, k in requests]


def peer_args_name(args):
    return "/".join(f"{k}:{v}" for k, v in args.items() if k != "page")


def kv_and_total_bytes(hq, hkv, hd, requests):
    kv = sum(2.0 * k * hkv * hd * 2 for _, k in requests)
    q_tokens = sum(q for q, _ in requests)
    return kv, kv + q_tokens * hq * (2.0 * hd * 2 + 4)


def flops_of(hq, hd, requests):
    return sum(4.0 * q * hq * k * hd for q, k in requests)


class GpuClock:
    """The SM clock (MHz) and board power (W) of the GPU that PyTorch uses, read
    through NVML (the driver's libnvidia-ml, by ctypes): sampled while each
    peer's calls run, as our benchmark samples its replays (sm_MHz, power_W),
    so a comparison shows whether both sides ran at the same clock."""

    def __init__(self, torch):
        import ctypes
        self.ctypes = ctypes
        self.device = None
        try:
            self.nvml = ctypes.CDLL("libnvidia-ml.so.1")
            if self.nvml.nvmlInit_v2() != 0:
                return
            props = torch.cuda.get_device_properties(torch.cuda.current_device())
            bus_id = f"{getattr(props, 'pci_domain_id', 0):08x}:{getattr(props, 'pci_bus_id', 0):02x}:" \
                     f"{getattr(props, 'pci_device_id', 0):02x}.0"
            device = ctypes.c_void_p()
            if (self.nvml.nvmlDeviceGetHandleByPciBusId_v2(bus_id.encode(), ctypes.byref(device)) != 0
                    and self.nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(device)) != 0):
                return
            self.device = device
        except (OSError, AttributeError):
            self.device = None

    def sample(self):
        """(MHz, W), or None without NVML."""
        if self.device is None:
            return None
        mhz, milliwatts = self.ctypes.c_uint(), self.ctypes.c_uint()
        if (self.nvml.nvmlDeviceGetClockInfo(self.device, 1, self.ctypes.byref(mhz)) != 0 or
                self.nvml.nvmlDeviceGetPowerUsage(self.device, self.ctypes.byref(milliwatts)) != 0):
            return None
        return mhz.value, milliwatts.value * 1e-3


class TorchPeers:
    """Times one shape with each PyTorch peer."""

    def __init__(self, use_flex, replay_gap_us=0, flex_mode=None):
        import torch
        self.replay_gap_us = replay_gap_us
        from torch.nn.attention import SDPBackend, sdpa_kernel
        self.torch = torch
        self.SDPBackend = SDPBackend
        self.sdpa_kernel = sdpa_kernel
        self.flush = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda")
        self.clock = GpuClock(torch)
        self.use_flex = use_flex
        self.flex = None
        if use_flex:
            import torch._dynamo
            from torch.nn.attention.flex_attention import create_block_mask, flex_attention
            torch._dynamo.config.cache_size_limit = 4096
            if hasattr(torch._dynamo.config, "recompile_limit"):
                torch._dynamo.config.recompile_limit = 4096
            if hasattr(torch._dynamo.config, "accumulated_recompile_limit"):
                torch._dynamo.config.accumulated_recompile_limit = 1 << 16
            self.flex_mode = flex_mode
            self.flex = torch.compile(flex_attention, dynamic=False, mode=flex_mode)
            self.create_block_mask = create_block_mask

    def version(self):
        return self.torch.__version__

    def time_calls(self, calls):
        """(median ms of running every function in `calls` once, L2 flushed
        first; median (MHz, W) sampled while they ran, or None without NVML)."""
        torch = self.torch
        for fn in calls:
            fn()
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        times, clocks = [], []
        for _ in range(REPLAYS):
            self.flush_sum = self.flush.sum(dtype=torch.int64)  # read: no dirty lines left
            start.record()
            for fn in calls:
                fn()
            stop.record()
            clocks.append(self.clock.sample())
            while not stop.query():  # sampled until the calls end, as ours are
                clocks.append(self.clock.sample())
            stop.synchronize()
            times.append(start.elapsed_time(stop))
            if self.replay_gap_us:
                time.sleep(self.replay_gap_us * 1e-6)
        times.sort()
        clocks = [c for c in clocks if c]
        clock = (sorted(c[0] for c in clocks)[len(clocks) // 2],
                 sorted(c[1] for c in clocks)[len(clocks) // 2]) if clocks else None
        return times[len(times) // 2], clock

    def groups(self, hq, hkv, hd, requests, dtype):
        """Requests grouped by (q, kv): one dense call each."""
        torch = self.torch
        torch_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
        groups = {}
        for q, k in requests:
            groups[(q, k)] = groups.get((q, k), 0) + 1
        tensors = []
        for (q, k), batch in groups.items():
            qt = torch.randn(batch, hq, q, hd, device="cuda", dtype=torch_dtype)
            kt = torch.randn(batch, hkv, k, hd, device="cuda", dtype=torch_dtype)
            vt = torch.randn(batch, hkv, k, hd, device="cuda", dtype=torch_dtype)
            tensors.append((q, k, qt, kt, vt))
        return tensors

    def sdpa(self, backend, hq, hkv, hd, requests, dtype, window_left=-1, softcap=0.0):
        """(ms, note) or None when the backend refuses the shape. With a
        window, K/V hold only the window's keys; a softcap is left out."""
        torch = self.torch
        from torch.nn.attention.bias import causal_lower_right
        F = torch.nn.functional
        tensors = self.groups(hq, hkv, hd, keys_read(requests, window_left), dtype)
        for masked in (True, False):
            calls = []
            for q, k, qt, kt, vt in tensors:
                mask = causal_lower_right(q, k) if masked and q > 1 else None
                calls.append(lambda qt=qt, kt=kt, vt=vt, mask=mask: F.scaled_dot_product_attention(
                    qt, kt, vt, attn_mask=mask, enable_gqa=True))
            try:
                with self.sdpa_kernel(backend):
                    ms, clock = self.time_calls(calls)
                note = "bottom-right causal" if masked and any(q > 1 for q, _ in requests) else ""
                if not masked:
                    note = "unmasked (upper bound)"
                if window_left >= 0:
                    note = ", ".join(filter(None, [note, "the window's keys only (upper bound)"]))
                if softcap:
                    note = ", ".join(filter(None, [note, "no softcap (upper bound)"]))
                return ms, note, clock
            except RuntimeError:
                continue
        return None

    def flex_call(self, hq, hkv, hd, requests, dtype, window_left=-1, softcap=0.0):
        """(ms, note, clock) or None. Flex picks its decoding kernel for queries
        shorter than 128 rows; where that kernel fails to compile (q64 at GQA 4
        packs 256 rows, a window's block mask), the main flex kernel is timed
        instead (FORCE_USE_FLEX_ATTENTION), so every shape has a flex time."""
        if not self.use_flex:
            return None
        tensors = self.groups(hq, hkv, hd, requests, dtype)
        score_mod = None
        if softcap:
            def score_mod(score, b, h, q_idx, kv_idx, cap=softcap):
                return cap * self.torch.tanh(score / cap)
        masks = []
        for q, k, _, _, _ in tensors:
            offset = k - q

            def bottom_right(b, h, q_idx, kv_idx, offset=offset):
                return kv_idx <= q_idx + offset

            def windowed(b, h, q_idx, kv_idx, offset=offset, window=window_left):
                return (kv_idx <= q_idx + offset) & (kv_idx >= q_idx + offset - window)

            masks.append(self.create_block_mask(bottom_right if window_left < 0 else windowed,
                                                B=None, H=None, Q_LEN=q, KV_LEN=k, device="cuda"))
        for kernel_options in (None, {"FORCE_USE_FLEX_ATTENTION": True}):
            calls = [lambda qt=qt, kt=kt, vt=vt, mask=mask: self.flex(
                         qt, kt, vt, score_mod=score_mod, block_mask=mask, enable_gqa=True,
                         kernel_options=kernel_options)
                     for (_, _, qt, kt, vt), mask in zip(tensors, masks)]
            try:
                ms, clock = self.time_calls(calls)
            except Exception as error:  # compile failures are reported, not fatal
                first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
                print(f"flex failed{' (main kernel)' if kernel_options else ''}: "
                      f"{first_line[:300]}", file=sys.stderr)
                continue
            note = "compiled" + (f" ({self.flex_mode})" if self.flex_mode else "")
            note += ", bottom-right causal block mask"
            if window_left >= 0:
                note += f" with a window of {window_left}"
            if softcap:
                note += f", softcap {softcap:g} in score_mod"
            if kernel_options:
                note += ", main flex kernel (its decoding kernel failed to compile)"
            return ms, note, clock
        return None

    def run(self, hq, hkv, hd, requests, dtype="bf16", with_flex=True, window_left=-1,
            softcap=0.0):
        results = {}
        for name, backend in (("sdpa_flash", self.SDPBackend.FLASH_ATTENTION),
                              ("sdpa_cudnn", self.SDPBackend.CUDNN_ATTENTION)):
            timed = self.sdpa(backend, hq, hkv, hd, requests, dtype, window_left, softcap)
            if timed:
                results[name] = timed
        timed = (self.flex_call(hq, hkv, hd, requests, dtype, window_left, softcap)
                 if with_flex else None)
        if timed:
            results["flex"] = timed
        self.torch.cuda.empty_cache()
        return results


class DryPeers:
    """Made-up timings at fixed bandwidths, for testing without a GPU."""

    def version(self):
        return "dry-run"

    def run(self, hq, hkv, hd, requests, dtype="bf16", with_flex=True, window_left=-1,
            softcap=0.0):
        _, total = kv_and_total_bytes(hq, hkv, hd, keys_read(requests, window_left))
        return {"sdpa_flash": (total / 2.0e12 * 1e3 + 0.01, ""),
                "sdpa_cudnn": (total / 3.0e12 * 1e3 + 0.01, "unmasked (upper bound)"),
                **({"flex": (total / 2.5e12 * 1e3 + 0.02, "dry")} if with_flex else {})}


# The metrics of a table row that a bar of tools/issue_bars.py may judge, in
# the order the table prints them.
ROW_METRICS = ("E", "time_us", "vs_best_peer")


def bars_for(case, args):
    """[(metric, op, target)]: the bars of issue 10 that judge one of our cases
    (args as in its name), the first matching row of tools/issue_bars.py per
    metric; none for an L2-warm case but the one-tile call."""
    args = {**issue_bars.ATTENTION_DEFAULTS, **args}
    return [(bar["metric"], bar["op"], bar["target"]) for metric in ROW_METRICS
            for bar in [issue_bars.bar_for(case, args, metric)] if bar is not None]


def option_twins(table):
    """[(what, time over its twin's)] for each Window / Softcap case: the twin
    is the case of any other family with the same arguments but the option,
    reading the same keys (a window of W: kv W + 1, what its decode reads)."""
    by_args = {}
    for r in table:
        family, rest = r["name"].split("/", 1)
        by_args.setdefault(rest, r)
    twins = []
    for r in table:
        family, rest = r["name"].split("/", 1)
        parts = rest.split("/")
        option = next((p for p in parts if p.startswith(("window:", "softcap:"))), None)
        if option is None:
            continue
        twin_parts = [p for p in parts if p != option]
        if option.startswith("window:"):
            window_kv = str(int(option.split(":")[1]) + 1)
            twin_parts = [f"kv:{window_kv}" if p.startswith("kv:") else p for p in twin_parts]
        twin = by_args.get("/".join(twin_parts))
        if twin is not None and twin is not r:
            twins.append((f"{family[len('BM_PagedAttention'):]}/{rest.split('/iterations:')[0]}"
                          f" / {twin['name'].split('/')[0][len('BM_PagedAttention'):]} twin time",
                          r["us"] / twin["us"]))
    return twins


def time_us_of(entry):
    return entry["real_time"] * {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[entry["time_unit"]]


def is_case_result(entry):
    """Whether a benchmark entry is one of our cases' results: a median over
    repetitions (or a run without repetitions), not another aggregate, a single
    repetition, the copy rate or a failed case."""
    if entry.get("run_type") == "aggregate" and entry.get("aggregate_name") != "median":
        return False
    if entry.get("run_type") == "iteration" and entry.get("repetitions", 1) > 1:
        return False
    return entry["name"].startswith("BM_PagedAttention") and not entry.get("error_occurred")


def table_row(entry, time_us, best):
    """One of our cases in the table: its figures, its case and arguments
    (defaults applied, as the bars read them) and its bars, met or not."""
    run_name = entry.get("run_name", entry["name"])
    case, shape_args = parse_args(run_name)
    e = entry.get("E", 0.0)
    row = {"name": run_name, "case": case, "args": {**issue_bars.ATTENTION_DEFAULTS, **shape_args},
           "us": time_us, "E": e, "TB/s": entry.get("TB/s", 0.0),
           "kv_bytes": entry.get("kv_bytes"), "best": best, "bars": []}
    for metric, op, bound in bars_for(case, row["args"]):
        value = {"E": e, "time_us": time_us, "vs_best_peer": entry.get("vs_best_peer")}[metric]
        if value is None:
            continue
        row["bars"].append((metric, op, bound, value, issue_bars.meets(value, op, bound)))
    return row


def relations_of(table):
    """[(issue, what, value, op, bound, met)]: the bars that compare two of our
    cases. Issue 10's: a skewed batch's time over the uniform batch's of equal
    bytes, page size 1's speed over page size 64's; issue 13's: a tree step's
    time over the chain's of the same shape."""
    medians = {r["name"]: r for r in table}
    relations = []

    def judge(issue, bar, what, ratio):
        relations.append((issue, what, ratio, bar["op"], bar["target"], issue_bars.met(bar, ratio)))

    skewed_bar = issue_bars.bar_by_id("skewed")
    page_bar = issue_bars.bar_by_id("page_1_vs_64")
    for r in table:
        case, args = r["case"], r["args"]
        if issue_bars.applies(skewed_bar, case, args):
            uniform = next((u for u in table if u["case"] == "Uniform" and issue_bars.is_skew_twin(
                args, r["kv_bytes"], u["args"], u["kv_bytes"])), None)
            if uniform:
                judge(10, skewed_bar, f"skewed/uniform q={args['q']}", r["us"] / uniform["us"])
        # (run names end in Google Benchmark's "/iterations:1/repeats:3/manual_time")
        base, _, suffix = r["name"].partition("/iterations:")
        if base.endswith("/page:1") and issue_bars.applies(page_bar, case, args):
            other = base[:-len("page:1")] + "page:64" + (f"/iterations:{suffix}" if suffix else "")
            if other in medians:  # page-1 speed over page-64 speed
                judge(10, page_bar, r["name"].split("/", 1)[1] + " page1/page64 speed",
                      medians[other]["us"] / r["us"])
        twin = issue_bars.tree_chain_twin(case, args)
        if twin:
            chain = next((c for c in table if (c["case"], c["args"]) == twin), None)
            if chain:
                judge(13, issue_bars.TREE_VS_CHAIN,
                      r["name"][len("BM_PagedAttention"):] + " tree/chain time",
                      r["us"] / chain["us"])
    return relations


def print_bar_counts(table, relations):
    """The bars met and missed: issue 10's (each case's and the skewed and page
    relations), then issue 13's tree bars where the run has tree cases."""
    issue10 = [ok for r in table for *_, ok in r["bars"]]
    issue10 += [ok for issue, *_, ok in relations if issue == 10]
    print(f"bars: {sum(issue10)} met, {len(issue10) - sum(issue10)} missed (issue 10's)")
    trees = [ok for issue, *_, ok in relations if issue == 13]
    if trees:
        print(f"tree bars: {sum(trees)} met, {len(trees) - sum(trees)} missed"
              f" (issue 13's: {issue_bars.TREE_VS_CHAIN['text']}"
              f" {issue_bars.TREE_VS_CHAIN['op']} {issue_bars.TREE_VS_CHAIN['target']})")


# The owner's questions on the bars (NOTES.md, "What limits it now"), answered
# from the same run: how many decode bars against a peer on contiguous K/V an
# allowance for the shuffled pool would meet, and the one-tile bar read as a
# call inside a captured graph (OneTileInGraph) instead of a one-node graph,
# with the one-node graph's time on a capacity graph's grid (OneTileFullGrid).
def readings(table):
    lines = []
    peer_bar = issue_bars.bar_by_id("peer")  # ">= 1.0", the dashboard's question too
    decode_bars = [(value, ok) for r in table if r["case"] == "Decode"
                   for metric, _, bound, value, ok in r["bars"]
                   if metric == peer_bar["metric"] and bound == peer_bar["target"]]
    decode = [value for value, ok in decode_bars if not ok]
    if decode_bars and not decode:
        lines.append(f"decode vs_best_peer>=1.0: all {len(decode_bars)} met")
    if decode:
        met = " / ".join(str(n) for n in issue_bars.met_with_allowances(decode))
        allowances = " / ".join(f"{a:.0%}" for a in issue_bars.DECODE_ALLOWANCES)
        lines.append(f"decode vs_best_peer>=1.0: {len(decode)} missed at {min(decode):.3f}-"
                     f"{max(decode):.3f}; met with an allowance of {allowances}: {met}")
    by_name = {r["name"]: r for r in table}
    for r in table:
        if not r["name"].startswith("BM_PagedAttentionOneTile/"):
            continue
        base, _, suffix = r["name"].partition("/iterations:")
        in_graph_prefix = base.replace("OneTile/", "OneTileInGraph/", 1) + "/calls:"
        in_graph = [g for name, g in by_name.items() if name.startswith(in_graph_prefix)]
        for g in in_graph:
            calls = g["name"].split("/calls:")[1].split("/")[0]
            # Judged by the one-node call's bar (the q=1 call's), if it has one.
            judged = "".join(f" ({metric}{op}{bound} "
                             f"{'ok' if issue_bars.meets(g['us'], op, bound) else 'MISS'})"
                             for metric, op, bound, *_ in r["bars"] if metric == "time_us")
            lines.append(f"{base[len('BM_PagedAttention'):]}: {r['us']:.2f} us as a one-node graph;"
                         f" {g['us']:.2f} us per call in a graph of {calls}{judged}")
        full = by_name.get(base.replace("OneTile/", "OneTileFullGrid/", 1) + "/grid:all/iterations:"
                           + suffix)
        if full is not None:
            lines.append(f"{base[len('BM_PagedAttention'):]}: {full['us']:.2f} us as a one-node"
                         " graph with a CTA for every worker (a graph captured for any batch)")
    return lines


def print_readings(table):
    lines = readings(table)
    if lines:
        print("other readings (NOTES.md, \"What limits it now\"):")
        for line in lines:
            print("  " + line)


def readings_of_run(path):
    """The readings of a JSON this script wrote (a committed run)."""
    with open(path) as f:
        run = json.load(f)
    table = [table_row(entry, time_us_of(entry), None) for entry in run["benchmarks"]
             if is_case_result(entry)]
    print(f"{path}: GPU {run['context'].get('gpu', 'unknown')}, "
          f"revision {run['context'].get('git_revision', 'unknown')}")
    print_bar_counts(table, relations_of(table))
    print_readings(table)


def bundle_revision(binary):
    """The REVISION that tools/gpu_bundle.sh wrote beside the binary's bin/
    folder (HEAD, +uncommitted for a dirty tree), or None outside a bundle."""
    path = os.path.join(os.path.dirname(os.path.abspath(binary)), os.pardir, "REVISION")
    try:
        with open(path) as f:
            return f.read().strip() or None
    except OSError:
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ours", help="our benchmark binary, or a JSON it wrote (*.json)")
    parser.add_argument("--out", help="combined JSON to write")
    parser.add_argument("--readings", metavar="PEERS_JSON",
                        help="only print the other readings of the bars of a JSON this script"
                             " wrote (no GPU, no PyTorch)")
    parser.add_argument("--filter", default="",
                        help="regex: only these of our cases (--benchmark_filter for the binary)")
    parser.add_argument("--no-flex", action="store_true", help="skip compiled flex_attention")
    parser.add_argument("--flex-mode", default=None,
                        help="torch.compile mode for flex (e.g. max-autotune-no-cudagraphs: each"
                             " shape autotunes its block sizes, ~10-14 s of compile); default: none")
    parser.add_argument("--flex-filter", default="",
                        help="regex: time flex only for these cases (each shape compiles for"
                             " ~1-2 s); the SDPA peers run for every case")
    parser.add_argument("--replay-gap-us", type=int, default=0,
                        help="idle this long after each timed call, ours (--replay_gap_us) and"
                             " the peers' alike (testing/benchmark_main.h says when to)")
    parser.add_argument("--dry-run", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--context", action="append", default=[],
                        help="KEY=VALUE added to the JSON context (e.g. git_revision=abc)")
    args = parser.parse_args()
    if args.readings:
        readings_of_run(args.readings)
        return 0
    if not (args.ours and args.out):
        parser.error("--ours and --out are required (or --readings)")
    if not args.ours.endswith(".json") and not any(
            c.startswith("git_revision=") for c in args.context):
        revision = bundle_revision(args.ours)
        if revision:
            args.context.append(f"git_revision={revision}")

    if args.ours.endswith(".json"):
        with open(args.ours) as f:
            ours = json.load(f)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "ours.json")
            command = [args.ours, f"--benchmark_out={path}", "--benchmark_out_format=json"]
            if args.filter:
                command.append(f"--benchmark_filter={args.filter}")
            if args.replay_gap_us:
                command.append(f"--replay_gap_us={args.replay_gap_us}")
            command += [f"--benchmark_context={c}" for c in args.context]
            subprocess.run(command, check=True)
            with open(path) as f:
                ours = json.load(f)

    peers = DryPeers() if args.dry_run else TorchPeers(use_flex=not args.no_flex,
                                                       flex_mode=args.flex_mode,
                                                       replay_gap_us=args.replay_gap_us)
    copy_tbps = float(ours.get("context", {}).get("copy_tbps", 0) or 0)
    context = dict(ours.get("context", {}))
    context["executable"] = "peer_benchmark.py"
    context["peers"] = "torch " + peers.version()
    for item in args.context:
        key, _, value = item.partition("=")
        context[key] = value

    out = []
    table = []
    peer_cache = {}
    started = time.time()
    for entry in ours["benchmarks"]:
        name = entry["name"]
        if not is_case_result(entry):
            out.append(entry)  # as it is (repetitions stay for compare.py's U test)
            continue
        if args.filter and not re.search(args.filter, name):
            continue
        run_name = entry.get("run_name", name)
        case, shape_args = parse_args(run_name)
        hq, hkv, hd, requests = shape_of(case, shape_args)
        time_us = time_us_of(entry)
        window_left, softcap = options_of(shape_args)
        read = keys_read(requests, window_left)
        kv_bytes, total_bytes = kv_and_total_bytes(hq, hkv, hd, read)
        # Our binary counts its bytes itself (benchmark_shapes.h, KeysRead) and
        # the peers' rates use this count: the twins must agree.
        ours_bytes = entry.get("bytes")
        if ours_bytes is not None and abs(ours_bytes - total_bytes) > 1e-9 * total_bytes:
            sys.exit(f"peer_benchmark: {run_name}: the binary counts {ours_bytes:.0f} bytes,"
                     f" this script {total_bytes:.0f} (keys_read and kv_and_total_bytes here"
                     " against KeysRead in attention/kernel/benchmark_shapes.h)")
        flops = flops_of(hq, hd, read)
        best = None
        # Trees have no peer here (PyTorch's SDPA has no tree mask): they are
        # compared with our chain of the same shape below.
        if (case not in ("PageSweep", "TreeVerify", "TreeDraftDecode")
                and shape_args.get("l2") != "warm"):
            dtype = shape_args.get("dtype", "bf16")
            key = (hq, hkv, hd, tuple(requests), dtype, window_left, softcap)
            if key not in peer_cache:
                with_flex = not args.flex_filter or re.search(args.flex_filter, name) is not None
                peer_cache[key] = peers.run(hq, hkv, hd, requests, dtype, with_flex, window_left,
                                            softcap)
                timed = ", ".join(f"{peer} {ms * 1e3:.1f} us"
                                  for peer, (ms, *_) in peer_cache[key].items())
                print(f"[{time.time() - started:6.1f} s] {run_name[17:89]}: {timed}",
                      file=sys.stderr)  # progress: where a run cut short by a timeout got
            for peer, (ms, note, *clock) in peer_cache[key].items():
                us = ms * 1e3
                tbps = total_bytes / (us * 1e-6) * 1e-12
                clock = clock[0] if clock and clock[0] else None
                out.append({
                    **({"sm_MHz": clock[0], "power_W": clock[1]} if clock else {}),
                    "name": f"Peer_{peer}/{peer_args_name(shape_args)}",
                    "run_name": f"Peer_{peer}/{peer_args_name(shape_args)}",
                    "run_type": "iteration", "iterations": REPLAYS,
                    "real_time": us, "cpu_time": us, "time_unit": "us",
                    "kv_bytes": kv_bytes, "bytes": total_bytes, "TB/s": tbps,
                    "E": tbps / copy_tbps if copy_tbps else 0.0,
                    "TFLOP/s": flops / (us * 1e-6) * 1e-12, "label": note,
                })
                if best is None or us < best[1]:
                    best = (peer, us)
        entry = dict(entry)
        if best:
            entry["vs_best_peer"] = best[1] / time_us
            entry["label"] = f"best peer: {best[0]}"
        out.append(entry)
        table.append(table_row(entry, time_us, best))

    relations = relations_of(table)

    context["peer_seconds"] = f"{time.time() - started:.0f}"
    with open(args.out, "w") as f:
        json.dump({"context": context, "benchmarks": out}, f, indent=1)

    gpu = context.get("gpu", "unknown")
    print(f"copy rate {copy_tbps:.3f} TB/s; GPU: {gpu}; peers: {context['peers']}")
    if "H200" not in gpu:  # the device tool can answer an H200 request with an H100
        print(f"note: issue 10's bars are set on an H200; this run is on {gpu} "
              "(E is against its own copy rate, ratios against peers on the same card)")
    print(f"{'case':72s} {'us':>9s} {'TB/s':>6s} {'E':>5s} {'best peer':>22s} {'ratio':>6s}  bars")
    for r in table:
        best = f"{r['best'][0]} {r['best'][1]:.1f}" if r["best"] else "-"
        ratio = f"{r['best'][1] / r['us']:.2f}" if r["best"] else "-"
        marks = [f"{metric}{op}{bound} {'ok' if ok else 'MISS'}"
                 for metric, op, bound, value, ok in r["bars"]]
        print(f"{r['name'][17:89]:72s} {r['us']:9.1f} {r['TB/s']:6.2f} {r['E']:5.2f} {best:>22s} "
              f"{ratio:>6s}  {'; '.join(marks)}")
    for _, what, value, op, bound, ok in relations:
        print(f"{what}: {value:.3f} ({op} {bound}: {'ok' if ok else 'MISS'})")
    for what, value in option_twins(table):
        print(f"{what}: {value:.3f} (no bar)")
    print_bar_counts(table, relations)
    print_readings(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
