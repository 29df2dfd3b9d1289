#!/usr/bin/env python3
"""Shrinks Google Benchmark JSON records that no dashboard page reads in full.

    python3 tools/compact_benchmark_json.py FILE.json...      # rewrites in place
    python3 tools/compact_benchmark_json.py --check FILE.json # exit 1 if not compact

The tree travels to the GPU machine under a 64 MiB limit together with the
bundle, and a peer run's JSON is ~0.66 MB, most of it repetitions and mean/cv
aggregates that nothing reads once a run has left the dashboard's window. What
stays is what tools/dashboard.py and tools/ab_table.py take from a run: the
context, the median and stddev aggregates, and every entry of a benchmark that
has no aggregates (BM_DeviceCopy, the PyTorch peers' rows). Entries are written
one per line, so a compacted file still diffs by benchmark.
"""
import argparse
import json
import sys

KEPT_AGGREGATES = ("median", "stddev")


def is_benchmark_document(data):
    """Whether parsed JSON is a Google Benchmark document: a top-level "benchmarks" list."""
    return isinstance(data, dict) and isinstance(data.get("benchmarks"), list)


def is_aggregate(entry):
    return entry.get("run_type") == "aggregate" or bool(entry.get("aggregate_name"))


def compact(data):
    """The entries worth keeping of a Google Benchmark JSON document."""
    benchmarks = data.get("benchmarks", [])
    with_aggregates = {e.get("run_name") for e in benchmarks if is_aggregate(e)}
    kept = []
    for entry in benchmarks:
        if is_aggregate(entry):
            if entry.get("aggregate_name") in KEPT_AGGREGATES:
                kept.append(entry)
        elif entry.get("run_name") not in with_aggregates:
            kept.append(entry)
    return dict(data, benchmarks=kept)


def dumps(data):
    lines = ['{"context": ' + json.dumps(data.get("context", {}), sort_keys=True) + ",",
             ' "benchmarks": [']
    entries = [json.dumps(e) for e in data.get("benchmarks", [])]
    lines += ["  " + e + ("," if i + 1 < len(entries) else "") for i, e in enumerate(entries)]
    lines.append(" ]")
    rest = {k: v for k, v in data.items() if k not in ("context", "benchmarks")}
    for key, value in rest.items():
        lines[-1] += ","
        lines.append(f" {json.dumps(key)}: {json.dumps(value)}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--check", action="store_true",
                        help="report files that would shrink; change nothing")
    args = parser.parse_args()
    not_compact = 0
    for path in args.files:
        with open(path) as f:
            text = f.read()
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            print(f"{path}: not JSON: {error}", file=sys.stderr)
            return 2
        if not is_benchmark_document(data):
            print(f"{path}: not a Google Benchmark JSON document", file=sys.stderr)
            return 2
        new_text = dumps(compact(data))
        if new_text == text:
            continue
        if args.check:
            print(f"{path}: {len(text)} -> {len(new_text)} bytes")
            not_compact += 1
            continue
        with open(path, "w") as f:
            f.write(new_text)
        print(f"{path}: {len(text)} -> {len(new_text)} bytes")
    return 1 if not_compact else 0


if __name__ == "__main__":
    sys.exit(main())
