"""Table of an A/B call (tools/gpu_session.sh ab): per case, the least of the
rounds' medians of the first variant (us) and each other variant's over it,
then the widest spread of any variant's rounds (its slowest round over its
fastest): a ratio is only as good as that spread. A case whose rounds spread
more than 3% is marked `noisy`: read its rounds before its ratio (a variant
that was lucky once wins a least-of-rounds comparison; verify q64 b64 4k once
read 0.936 from rounds of 695, 781 and 796 us against 743-755).

  python3 tools/ab_table.py DIR base NAME...   # reads DIR/ab_<name>_<round>.json

Committed records keep each round's JSON xz-compressed (ab_<name>_<round>.json.xz,
a tenth of the size, so the tree still travels to the GPU machine beside the
bundle); those are read as they are.
"""
import collections
import glob
import json
import lzma
import re
import sys


def main(out, names):
    times = collections.defaultdict(lambda: collections.defaultdict(list))
    unit_us = {"ns": 1e-3, "us": 1.0, "ms": 1e3}
    for name in names:
        paths = glob.glob(f"{out}/ab_{name}_*.json") + glob.glob(f"{out}/ab_{name}_*.json.xz")
        for path in paths:
            with (lzma.open if path.endswith(".xz") else open)(path, "rt") as f:
                benchmarks = json.load(f)["benchmarks"]
            for b in benchmarks:
                # Repeated cases count by their median, single runs as they are.
                if b.get("aggregate_name") == "median" or (
                        "repeats" not in b["name"] and b.get("run_type") == "iteration"):
                    key = re.sub(r"^BM_PagedAttention|/iterations:1.*$", "", b["run_name"])
                    times[key][name].append(b["real_time"] * unit_us[b["time_unit"]])
    print(f"# min of rounds' medians (us) of {names[0]}, each variant's time over it")
    print(f"{'case':80s} {names[0]:>9s} " + " ".join(f"{n:>9s}" for n in names[1:]) +
          "    spread")
    for key in sorted(times):
        t = times[key]
        if names[0] not in t:
            continue
        base = min(t[names[0]])
        ratios = " ".join(f"{min(t[n]) / base:9.3f}" if n in t else "      n/a" for n in names[1:])
        spread = max(max(v) / min(v) for v in t.values())
        print(f"{key:80s} {base:9.1f} {ratios} {spread:9.3f}" + (" noisy" if spread > 1.03 else ""))


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
