"""Table of an A/B call (tools/gpu_session.sh ab): per case, the least of the
rounds' medians of the first variant (us) and each other variant's over it,
then the widest spread of any variant's rounds (its slowest round over its
fastest): a ratio is only as good as that spread. A case whose rounds spread
more than 3% is marked `noisy`: read its rounds before its ratio (a variant
that was lucky once wins a least-of-rounds comparison; verify q64 b64 4k once
read 0.936 from rounds of 695, 781 and 796 us against 743-755). Where the
runs carry the benchmark's sm_MHz counter, a last column gives the range of
the SM clock over every variant's rounds, and a case whose clock moved more
than 2% is marked `clock`: compute-bound cases slow down at the board's power
cap, so rerun them with AB_REPLAY_GAP_US=2000 (testing/benchmark_main.h).

  python3 tools/ab_table.py DIR base NAME...   # reads DIR/ab_<name>_<round>.json
  python3 tools/ab_table.py --prefix call3_ DIR base NAME...
                                              # reads DIR/call3_ab_<name>_<round>.json

Committed records keep each round's JSON xz-compressed (ab_<name>_<round>.json.xz,
a tenth of the size, so the tree still travels to the GPU machine beside the
bundle); those are read as they are. A folder of several calls names each
call's rounds with its prefix (callN_ab_...): --prefix tables one call.
"""
import collections
import glob
import json
import lzma
import re
import sys


def main(out, names, prefix=""):
    times = collections.defaultdict(lambda: collections.defaultdict(list))
    clocks = collections.defaultdict(list)  # sm_MHz of every round of every variant
    unit_us = {"ns": 1e-3, "us": 1.0, "ms": 1e3}
    for name in names:
        stem = f"{out}/{prefix}ab_{name}_"
        paths = glob.glob(f"{stem}*.json") + glob.glob(f"{stem}*.json.xz")
        for path in paths:
            try:
                with (lzma.open if path.endswith(".xz") else open)(path, "rt") as f:
                    benchmarks = json.load(f)["benchmarks"]
            except (ValueError, KeyError, EOFError, lzma.LZMAError) as error:
                # A run cut at its time limit (gpu_session.sh) leaves its JSON
                # unfinished: the table goes on with the rounds that ended.
                print(f"ab_table.py: skipping {path}: {error}", file=sys.stderr)
                continue
            for b in benchmarks:
                # Repeated cases count by their median, single runs as they are.
                if b.get("aggregate_name") == "median" or (
                        "repeats" not in b["name"] and b.get("run_type") == "iteration"):
                    key = re.sub(r"^BM_PagedAttention|/iterations:1.*$", "", b["run_name"])
                    times[key][name].append(b["real_time"] * unit_us[b["time_unit"]])
                    if b.get("sm_MHz"):
                        clocks[key].append(b["sm_MHz"])
    print(f"# min of rounds' medians (us) of {names[0]}, each variant's time over it")
    print(f"{'case':80s} {names[0]:>9s} " + " ".join(f"{n:>9s}" for n in names[1:]) +
          "    spread" + ("        MHz" if clocks else ""))
    for key in sorted(times):
        t = times[key]
        if names[0] not in t:
            continue
        base = min(t[names[0]])
        ratios = " ".join(f"{min(t[n]) / base:9.3f}" if n in t else "      n/a" for n in names[1:])
        spread = max(max(v) / min(v) for v in t.values())
        line = f"{key:80s} {base:9.1f} {ratios} {spread:9.3f}" + (" noisy" if spread > 1.03 else "      ")
        if clocks.get(key):
            low, high = min(clocks[key]), max(clocks[key])
            line += f" {low:4.0f}-{high:4.0f}" + (" clock" if high > 1.02 * low else "")
        print(line)


if __name__ == "__main__":
    args = sys.argv[1:]
    prefix = ""
    if args[:1] == ["--prefix"] and len(args) >= 2:
        prefix, args = args[1], args[2:]
    if len(args) < 2:
        sys.exit(__doc__)
    main(args[0], args[1:], prefix)
