#!/usr/bin/python3
"""Benchmark dashboard: Google Benchmark JSON runs -> one self-contained HTML page.

    python3 tools/dashboard.py --out DIR FILE.json [FILE.json ...]

writes DIR/index.html (charts embedded as base64 PNG, no network, no CDN) and one
PNG per chart in DIR. The inputs are Google Benchmark JSON files
(`{"context": {...}, "benchmarks": [...]}`): our kernel and planner benchmarks
and the peer script's output (PyTorch peers beside ours), several runs over time.

What the page shows, top to bottom:
  - regressions since the last run, found by Google Benchmark's own compare.py
    (Debian's libbenchmark-tools): its U test where the runs have repetitions,
    else its plain time ratio (the page says which);
  - the bars of issues 10 and 13 (tools/issue_bars.py) with how many shapes meet
    each, and each issue's totals;
  - the owner's open questions on issue 10's bars (NOTES.md, "What limits it
    now") read from the latest results, as the peer script prints them;
  - each run's context (GPU, CUDA, git revision, date, copy rate);
  - charts: KV bandwidth vs KV length per query count, E per case, ours vs
    each PyTorch peer per shape, prefill TFLOP/s, planner host cost vs batch,
    change since the last run, time over runs;
  - a table per case family with E / peer ratios / latency coloured against the
    bars, the peer table, planner, copy rate, every unrecognised benchmark (a
    generic table, never dropped) and skipped benchmarks (error_occurred).

Runs are ordered by context `date`, ties by command-line order; for each
benchmark the tables show the latest run that has it. A malformed or unknown
input file: exit 1 with one line on stderr naming the file and the problem.

Needs Debian's python3-matplotlib (and python3-scipy for compare.py's U test);
run with /usr/bin/python3 (the script re-executes itself there when the
`python3` it was started with lacks matplotlib).
"""

import argparse
import base64
import collections
import dataclasses
import datetime
import html
import importlib.util
import io
import json
import lzma
import math
import os
import statistics
import subprocess
import sys
import tempfile

import issue_bars  # beside this script: the bars, shared with tools/peer_benchmark.py

SYSTEM_PYTHON = "/usr/bin/python3"

METRIC_LABELS = {"E": "E", "vs_best_peer": "vs best peer", "time_us": "time (us)",
                 "skew_ratio": "skewed / uniform time", "page1_vs_64": "page 1 / page 64 speed",
                 "tree_vs_chain": "tree / chain time"}

# Benchmark families the page knows.
ATTENTION_PREFIX = "BM_PagedAttention"
ATTENTION_CASES = ("Decode", "DraftExtend", "Verify", "Skewed", "Uniform", "OneTile",
                   "OneTileInGraph", "OneTileFullGrid",
                   "PageSweep", "Prefill", "TreeVerify", "TreeDraftDecode",
                   "Gqa", "Window", "Softcap")
PEER_PREFIX = "Peer_"
PLANNER_FAMILIES = ("BM_PlanEager", "BM_PlanReplay", "BM_PlanReplayHostGather")
PLANNER_POSITIONAL = ("batch", "context", "page")  # BM_PlanEager/64/4096/16 (older runs)
COPY_FAMILY = "BM_DeviceCopy"

# Argument names across benchmark versions -> one name.
ARG_ALIASES = {"kv_len": "kv", "page_size": "page", "head_dim": "hd"}
# Defaults of the attention benchmarks when a run does not name the arg.
ATTENTION_DEFAULTS = issue_bars.ATTENTION_DEFAULTS
ARG_ORDER = ("heads", "hd", "batch", "q", "kv", "context", "page", "l2")
# Name components Google Benchmark adds for run options, not shape.
RUN_OPTION_KEYS = {"min_time", "min_warmup_time", "repeats", "iterations", "threads"}
RUN_OPTION_FLAGS = {"manual_time", "real_time", "process_time"}
AGGREGATE_SUFFIXES = ("mean", "median", "stddev", "cv")

TIME_UNIT_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
STANDARD_KEYS = {"name", "run_name", "run_type", "repetitions", "repetition_index", "threads",
                 "iterations", "real_time", "cpu_time", "time_unit", "family_index",
                 "per_family_instance_index", "aggregate_name", "aggregate_unit", "label",
                 "error_occurred", "error_message", "skipped", "skip_message"}

# compare.py: where Debian's libbenchmark-tools puts it; its default alpha;
# and the thresholds its own output colours a time change by (red above +5%,
# cyan below -7%), used when its U test cannot run.
COMPARE_PY_CANDIDATES = ("/usr/share/benchmark/compare.py",
                         "/usr/share/benchmark/tools/compare.py")
COMPARE_ALPHA = 0.05
COMPARE_RED_ABOVE = 0.05
COMPARE_CYAN_BELOW = -0.07


class InputError(Exception):
    """A malformed or unknown input file: reported as one line naming it."""

    def __init__(self, path, message):
        super().__init__(f"{path}: {message}")


@dataclasses.dataclass
class Result:
    """One benchmark of one run: the representative entry (median aggregate,
    else mean, else the median repetition)."""
    name: str          # canonical: family/key:value/... (aliases and defaults applied)
    raw_name: str
    family: str
    kind: str          # attention, peer, planner, copy, generic
    case: str          # attention case or peer name ("" otherwise)
    args: dict
    time_us: float
    counters: dict
    label: str
    source: str        # "median of 9", "mean", "iteration"
    run: "Run" = None


@dataclasses.dataclass
class Run:
    index: int         # 1-based, in date order
    path: str
    context: dict
    date: datetime.datetime
    order: int         # command-line position
    results: dict = dataclasses.field(default_factory=dict)    # canonical name -> Result
    skipped: list = dataclasses.field(default_factory=list)    # (raw name, message)
    compare_entries: list = dataclasses.field(default_factory=list)  # our entries, renamed
    copy_tbps: float = None
    copy_source: str = ""

    @property
    def label(self):
        return f"#{self.index} {os.path.basename(self.path)}"

    @property
    def series(self):
        """The runs compared with each other for regressions: one binary on one
        GPU (an H100 run after H200 runs would otherwise read as a regression
        of every case)."""
        executable = self.context.get("executable")
        if isinstance(executable, str) and executable:
            name = os.path.basename(executable)
        else:
            name = "families: " + ",".join(sorted({r.family for r in self.results.values()}))
        gpu = self.context.get("gpu")
        return f"{name} on {gpu}" if isinstance(gpu, str) and gpu not in ("", "none") else name


# ---------------------------------------------------------------------------
# Reading and validating input.
# ---------------------------------------------------------------------------
def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def parse_date(path, value):
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(path, f"context.date is not a string: {value!r}")
    text = value.strip()
    parsed = None
    try:
        parsed = datetime.datetime.fromisoformat(text)
    except ValueError:
        for fmt in ("%Y/%m/%d-%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S%z"):
            try:
                parsed = datetime.datetime.strptime(text, fmt)
                break
            except ValueError:
                pass
    if parsed is None:
        raise InputError(path, f"context.date {value!r} is not a date")
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.timezone.utc)
    return parsed


def parse_name(name):
    """'BM_PagedAttentionVerify/heads:32_8/kv_len:4096/manual_time' ->
    (family, kind, case, args in canonical order, canonical name)."""
    parts = name.split("/")
    family = parts[0]
    args, positional, kept = {}, [], [family]
    for part in parts[1:]:
        if ":" in part:
            key, value = part.split(":", 1)
            if key in RUN_OPTION_KEYS:
                continue
            key = ARG_ALIASES.get(key, key)
            args[key] = value
            kept.append(f"{key}:{value}")
        elif part in RUN_OPTION_FLAGS:
            continue
        else:
            positional.append(part)
            kept.append(part)
    kind, case = "generic", ""
    if family.startswith(ATTENTION_PREFIX) and family[len(ATTENTION_PREFIX):] in ATTENTION_CASES:
        kind, case = "attention", family[len(ATTENTION_PREFIX):]
    elif family.startswith(PEER_PREFIX) and len(family) > len(PEER_PREFIX):
        kind, case = "peer", family[len(PEER_PREFIX):]
    elif family in PLANNER_FAMILIES:
        kind = "planner"
    elif family == COPY_FAMILY:
        kind = "copy"
    if kind == "generic":
        return family, kind, case, dict(args, **{f"arg{i}": v for i, v in enumerate(positional)}), \
            "/".join(kept)
    names = PLANNER_POSITIONAL if kind == "planner" else ()
    for i, value in enumerate(positional):
        args.setdefault(names[i] if i < len(names) else f"arg{i}", value)
    if kind in ("attention", "peer"):
        for key, value in ATTENTION_DEFAULTS.items():
            args.setdefault(key, value)
    ordered = {k: args[k] for k in ARG_ORDER if k in args}
    ordered.update((k, v) for k, v in args.items() if k not in ordered)
    return family, kind, case, ordered, canonical_name(family, ordered)


def canonical_name(family, args):
    return "/".join([family] + [f"{k}:{v}" for k, v in args.items()])


def entry_run_name(entry):
    """The benchmark's name without an aggregate suffix, and the aggregate (or "")."""
    name = entry["name"]
    aggregate = entry.get("aggregate_name", "")
    is_aggregate = entry.get("run_type") == "aggregate" or bool(aggregate)
    if "run_type" not in entry and not aggregate:  # very old JSON: suffix only
        for suffix in AGGREGATE_SUFFIXES:
            if name.endswith("_" + suffix):
                is_aggregate, aggregate = True, suffix
                break
    run_name = entry.get("run_name")
    if not isinstance(run_name, str) or not run_name:
        run_name = name
        if is_aggregate and aggregate and name.endswith("_" + aggregate):
            run_name = name[: -len(aggregate) - 1]
    return run_name, (aggregate or "aggregate") if is_aggregate else ""


def load_run(path, order):
    try:
        # Archived runs are .json.xz (tools/archive_records.py).
        with (lzma.open if path.endswith(".xz") else open)(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise InputError(path, f"cannot read: {e.strerror or e}")
    except lzma.LZMAError as e:
        raise InputError(path, f"not an xz file: {e}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(path, "not UTF-8 text (expected Google Benchmark JSON)")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(path, f"malformed JSON: {e.msg} at line {e.lineno} column {e.colno}")
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        raise InputError(path, 'not a Google Benchmark JSON file: no top-level "benchmarks" list')
    context = data.get("context", {})
    if not isinstance(context, dict):
        raise InputError(path, '"context" is not an object')
    run = Run(index=0, path=path, context=context, date=parse_date(path, context.get("date")),
              order=order)

    groups = collections.OrderedDict()  # canonical -> list of (aggregate, entry)
    parsed_names = {}
    for i, entry in enumerate(data["benchmarks"]):
        if not isinstance(entry, dict):
            raise InputError(path, f"benchmarks[{i}] is not an object")
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise InputError(path, f'benchmarks[{i}] has no "name" string')
        if entry.get("error_occurred") or entry.get("skipped") is True:
            message = entry.get("error_message") or entry.get("skip_message") or "skipped"
            run.skipped.append((name, str(message)))
            continue
        if not is_number(entry.get("real_time")):
            raise InputError(path, f"benchmarks[{i}] ({name}): real_time is not a number")
        if entry.get("time_unit", "ns") not in TIME_UNIT_US:
            raise InputError(path, f"benchmarks[{i}] ({name}): unknown time_unit "
                                   f"{entry.get('time_unit')!r}")
        run_name, aggregate = entry_run_name(entry)
        if run_name not in parsed_names:
            parsed_names[run_name] = parse_name(run_name)
        family, kind, case, args, canonical = parsed_names[run_name]
        groups.setdefault(canonical, []).append((aggregate, entry))
        # compare.py gets our entries under canonical names, so that runs of
        # renamed args (kv_len -> kv) or other repetition counts still pair up.
        if kind != "peer" and aggregate in ("", "mean", "median") and is_number(
                entry.get("cpu_time")):
            renamed = dict(entry, name=canonical + (f"_{aggregate}" if aggregate else ""),
                           run_name=canonical)
            run.compare_entries.append(renamed)

    for canonical, entries in groups.items():
        by_aggregate = {agg: e for agg, e in reversed(entries) if agg}
        iterations = [e for agg, e in entries if not agg]
        if "median" in by_aggregate:
            entry, source = by_aggregate["median"], "median"
        elif "mean" in by_aggregate:
            entry, source = by_aggregate["mean"], "mean"
        elif iterations:
            iterations.sort(key=lambda e: e["real_time"] * TIME_UNIT_US[e.get("time_unit", "ns")])
            entry = iterations[(len(iterations) - 1) // 2]
            source = f"median of {len(iterations)}" if len(iterations) > 1 else "iteration"
        elif set(by_aggregate) - {"stddev", "cv"}:  # a custom statistic: better than nothing
            source = sorted(set(by_aggregate) - {"stddev", "cv"})[0]
            entry = by_aggregate[source]
        else:
            continue  # only stddev / cv: no time to show
        reps = entry.get("repetitions")
        if source in ("median", "mean") and is_number(reps) and reps > 1:
            source += f" of {int(reps)}"
        run_name, _ = entry_run_name(entry)
        family, kind, case, args, _ = parsed_names[run_name]
        counters = {k: float(v) for k, v in entry.items()
                    if k not in STANDARD_KEYS and is_number(v)}
        label = entry.get("label") if isinstance(entry.get("label"), str) else ""
        run.results[canonical] = Result(
            name=canonical, raw_name=run_name, family=family, kind=kind, case=case, args=args,
            time_us=entry["real_time"] * TIME_UNIT_US[entry.get("time_unit", "ns")],
            counters=counters, label=label, source=source, run=run)
    # A benchmark skipped in one entry but measured in another is not skipped.
    measured = {r.raw_name for r in run.results.values()}
    run.skipped = [(n, m) for n, m in run.skipped if n not in measured]
    return run


def order_runs(runs):
    epoch = datetime.datetime.min.replace(tzinfo=datetime.timezone.utc)
    runs.sort(key=lambda r: (r.date or epoch, r.order))
    for i, run in enumerate(runs, 1):
        run.index = i


def context_float(run, key):
    value = run.context.get(key)
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) and value > 0 else None


def assign_copy_rates(runs):
    """The copy rate E is measured against: the run's context copy_tbps, else
    its BM_DeviceCopy, else that of a run on the same host and GPU the same day."""
    own = {}
    for run in runs:
        rate = context_float(run, "copy_tbps")
        if rate:
            own[run.index] = (rate, "context copy_tbps")
            continue
        copies = [r.counters["TB/s"] for r in run.results.values()
                  if r.kind == "copy" and r.counters.get("TB/s", 0) > 0]
        if copies:
            own[run.index] = (statistics.median(copies), "BM_DeviceCopy")
    for run in runs:
        if run.index in own:
            run.copy_tbps, run.copy_source = own[run.index]
            continue
        if not run.date:
            continue
        same_day = [o for o in runs if o.index in own and o.date
                    and o.date.date() == run.date.date()
                    and o.context.get("host_name") == run.context.get("host_name")
                    and o.context.get("gpu") == run.context.get("gpu")]
        if same_day:
            other = min(same_day, key=lambda o: abs((o.date - run.date).total_seconds()))
            run.copy_tbps = own[other.index][0]
            run.copy_source = f"run #{other.index} (same host, GPU and day)"


# ---------------------------------------------------------------------------
# Derived metrics and bars.
# ---------------------------------------------------------------------------
def shape_key(result):
    """Args a peer shares with our result (peers have no pages)."""
    return tuple(sorted((k, v) for k, v in result.args.items() if k != "page"))


class Analysis:
    """Latest results per benchmark, peers matched to ours, bars applied."""

    def __init__(self, runs):
        self.runs = runs
        self.latest = {}
        for run in runs:  # date order: later runs overwrite
            self.latest.update(run.results)
        self.history = collections.defaultdict(list)  # canonical -> [Result], date order
        for run in runs:
            for name, result in run.results.items():
                self.history[name].append(result)
        self.peers_by_shape = collections.defaultdict(list)  # shape -> [peer Result], date order
        for run in runs:
            for result in run.results.values():
                if result.kind == "peer":
                    self.peers_by_shape[shape_key(result)].append(result)
        self.metrics = {}   # canonical -> {metric: (value, note)}
        self.status = {}    # canonical -> {metric: (bar, met)}
        for result in self.ours("attention"):
            self.metrics[result.name] = self._metrics(result)
            self.status[result.name] = {
                metric: (bar, issue_bars.met(bar, value))
                for metric, (value, _) in self.metrics[result.name].items()
                for bar in [self.bar_for(result, metric)] if bar is not None}

    def ours(self, kind):
        return [r for r in self.latest.values() if r.kind == kind]

    def peers_for(self, result):
        """{peer name: peer Result} of the same shape: from the same run when
        it has any, else the latest run on the same GPU."""
        candidates = self.peers_by_shape.get(shape_key(result), [])
        same_run = [p for p in candidates if p.run is result.run]
        if not same_run:
            gpu = result.run.context.get("gpu")
            same_run = [p for p in candidates if p.run.context.get("gpu") == gpu]
        chosen = {}
        for peer in same_run:  # date order: the latest wins
            chosen[peer.case] = peer
        return chosen

    def _metrics(self, result):
        metrics = {"time_us": (result.time_us, "")}
        counters = result.counters
        if "E" in counters:
            metrics["E"] = (counters["E"], "counter E")
        elif "TB/s" in counters and result.run.copy_tbps:
            metrics["E"] = (counters["TB/s"] / result.run.copy_tbps,
                            f"TB/s / {result.run.copy_tbps:.3g} ({result.run.copy_source})")
        if "vs_best_peer" in counters:
            metrics["vs_best_peer"] = (counters["vs_best_peer"], result.label or "counter")
        else:
            peers = self.peers_for(result)
            if peers:
                best = min(peers.values(), key=lambda p: p.time_us)
                metrics["vs_best_peer"] = (best.time_us / result.time_us,
                                           f"{best.case} (computed)")
        if result.case == "Skewed":
            uniform = self._uniform_twin(result)
            if uniform:
                metrics["skew_ratio"] = (result.time_us / uniform.time_us, uniform.name)
        if result.args.get("page") == "1":
            twin = result.run.results.get(canonical_name(result.family,
                                                         dict(result.args, page="64")))
            if twin and result.time_us > 0:
                metrics["page1_vs_64"] = (twin.time_us / result.time_us, twin.name)
        chain_twin = issue_bars.tree_chain_twin(result.case, result.args)
        if chain_twin:
            chain = result.run.results.get(canonical_name(ATTENTION_PREFIX + chain_twin[0],
                                                          chain_twin[1]))
            if chain and chain.time_us > 0:
                metrics["tree_vs_chain"] = (result.time_us / chain.time_us, chain.name)
        return metrics

    @staticmethod
    def _uniform_twin(result):
        for other in result.run.results.values():
            if other.case == "Uniform" and other.kind == "attention" and issue_bars.is_skew_twin(
                    result.args, result.counters.get("kv_bytes"), other.args,
                    other.counters.get("kv_bytes")):
                return other
        return None

    @staticmethod
    def bar_for(result, metric):
        if result.kind != "attention":
            return None
        return issue_bars.bar_for(result.case, result.args, metric)


# ---------------------------------------------------------------------------
# Regression view: Google Benchmark's compare.py on the latest two runs.
# ---------------------------------------------------------------------------
def find_compare_py():
    env = os.environ.get("DASHBOARD_COMPARE_PY")
    if env:
        return env if os.path.isfile(env) else None
    for candidate in COMPARE_PY_CANDIDATES:
        if os.path.isfile(candidate):
            return candidate
    try:
        listing = subprocess.run(["dpkg", "-L", "libbenchmark-tools"], capture_output=True,
                                 text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in listing.splitlines():
        if line.endswith("/compare.py") and os.path.isfile(line):
            return line
    return None


@dataclasses.dataclass
class Comparison:
    series: str
    base: Run
    new: Run
    rows: list = dataclasses.field(default_factory=list)  # dicts, see compare_runs
    text: str = ""
    error: str = ""
    no_utest: int = 0


def compare_runs(series, base, new, compare_py, workdir):
    comparison = Comparison(series=series, base=base, new=new)
    if not compare_py:
        comparison.error = ("compare.py not found (install Debian's libbenchmark-tools, or set "
                            "DASHBOARD_COMPARE_PY)")
        return comparison
    files = []
    for run in (base, new):
        path = os.path.join(workdir, f"run{run.index}.json")
        with open(path, "w") as f:
            json.dump({"context": run.context, "benchmarks": run.compare_entries}, f)
        files.append(path)
    dump = os.path.join(workdir, f"diff{base.index}_{new.index}.json")
    command = [sys.executable, compare_py, "--no-color", "--alpha", str(COMPARE_ALPHA),
               "-d", dump, "benchmarks", files[0], files[1]]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as e:
        comparison.error = f"compare.py did not run: {e}"
        return comparison
    comparison.text = proc.stdout
    if proc.returncode != 0 or not os.path.isfile(dump):
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        comparison.error = f"compare.py failed (exit {proc.returncode}): {last}"
        return comparison
    with open(dump) as f:
        report = json.load(f)
    by_name = {entry["name"]: entry for entry in report}
    # One row per benchmark: the change of its median (else mean, else its
    # single measurement), the U test's p-value on its repetitions if it ran.
    names = [e["name"] for e in report if e.get("run_type") != "aggregate"]
    names += [e["name"][: -len("_" + e["aggregate_name"])] for e in report
              if e.get("run_type") == "aggregate" and e.get("aggregate_name") in ("mean", "median")
              and e["name"].endswith("_" + e["aggregate_name"])]
    for name in dict.fromkeys(names):
        iteration = by_name.get(name)
        summary = by_name.get(name + "_median") or by_name.get(name + "_mean")
        if summary:
            m = summary["measurements"][0]
            old, new_, change, unit = m["real_time"], m["real_time_other"], m["time"], \
                summary["time_unit"]
        elif iteration and len(iteration["measurements"]) == 1:
            m = iteration["measurements"][0]
            old, new_, change, unit = m["real_time"], m["real_time_other"], m["time"], \
                iteration["time_unit"]
        elif iteration:
            old = statistics.median(m["real_time"] for m in iteration["measurements"])
            new_ = statistics.median(m["real_time_other"] for m in iteration["measurements"])
            change, unit = (new_ - old) / old if old else 0.0, iteration["time_unit"]
        else:
            continue
        utest = (iteration or {}).get("utest") or {}
        pvalue = utest.get("time_pvalue")
        if pvalue is not None:
            significant = pvalue < COMPARE_ALPHA
            verdict = ("regression" if change > 0 else "improvement") if significant else "same"
            method = (f"U test p={pvalue:.2g}, {utest.get('nr_of_repetitions')} vs "
                      f"{utest.get('nr_of_repetitions_other')} repetitions")
            if not utest.get("have_optimal_repetitions"):
                method += " (unreliable: 9+ recommended)"
        else:
            comparison.no_utest += 1
            verdict = ("regression" if change > COMPARE_RED_ABOVE else
                       "improvement" if change < COMPARE_CYAN_BELOW else "same")
            method = "time ratio only (no U test)"
        result = new.results.get(name) or base.results.get(name)
        comparison.rows.append(dict(
            name=name, display=display_name(result) if result else name,
            old_us=old * TIME_UNIT_US.get(unit, 1.0), new_us=new_ * TIME_UNIT_US.get(unit, 1.0),
            change=change, pvalue=pvalue, verdict=verdict, method=method))
    return comparison


def compare_series(runs, workdir):
    series = collections.OrderedDict()
    for run in runs:
        if run.compare_entries:
            series.setdefault(run.series, []).append(run)
    compare_py = find_compare_py() if any(len(r) >= 2 for r in series.values()) else None
    comparisons = []
    for name, members in series.items():
        if len(members) >= 2:
            comparisons.append(compare_runs(name, members[-2], members[-1], compare_py, workdir))
    return comparisons, series


# ---------------------------------------------------------------------------
# Formatting helpers.
# ---------------------------------------------------------------------------
def kfmt(value):
    n = issue_bars.as_int(value)
    if n is None:
        return str(value)
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024}k"
    return str(n)


def num(value, digits=3):
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    decimals = max(0, digits - 1 - magnitude)
    return f"{value:,.{decimals}f}"


def display_name(result):
    if result is None:
        return ""
    a = result.args
    if result.kind in ("attention", "peer"):
        parts = [result.case if result.kind == "attention" else f"{result.case}"]
        if "heads" in a:
            parts.append(a["heads"].replace("_", "/"))
        if a.get("hd", "128") != "128":
            parts.append(f"hd{a['hd']}")
        for key, short in (("batch", "b"), ("q", "q"), ("kv", "kv"), ("page", "p")):
            if key in a:
                parts.append(f"{short}{kfmt(a[key])}")
        if a.get("l2", "cold") != "cold":
            parts.append(f"L2 {a['l2']}")
        known = {"heads", "hd", "batch", "q", "kv", "page", "l2"}
        parts += [f"{k}:{v}" for k, v in a.items() if k not in known]
        return " ".join(parts)
    if result.kind == "planner":
        parts = [result.family[3:]]
        for key, short in (("batch", "b"), ("context", "ctx"), ("page", "p")):
            if key in a:
                parts.append(f"{short}{kfmt(a[key])}")
        parts += [f"{k}:{v}" for k, v in a.items() if k not in ("batch", "context", "page")]
        return " ".join(parts)
    return result.name


def esc(value):
    return html.escape(str(value), quote=True)


def run_ref(run):
    return f'<a href="#run-{run.index}">#{run.index}</a>'


def sort_key(result):
    def key_of(k):
        v = result.args.get(k)
        n = issue_bars.as_int(v)
        return (0, n, "") if n is not None else (1, 0, str(v or ""))
    return (result.family, [key_of(k) for k in ("heads", "hd", "q", "batch", "kv", "context",
                                                   "page", "l2")], result.name)


# ---------------------------------------------------------------------------
# Charts (matplotlib, Agg): each returns a Figure or None when there is no data.
# ---------------------------------------------------------------------------
STATUS_COLOURS = {True: "#2e7d32", False: "#c62828", None: "#78909c"}


def chart_bandwidth(plt, analysis):
    # bf16 only: the fp16 twins (dtype:fp16) would draw over their points.
    results = [r for r in analysis.ours("attention") if r.case in issue_bars.DECODE_VERIFY
               and r.args.get("l2") == "cold" and "TB/s" in r.counters
               and issue_bars.as_int(r.args.get("kv")) is not None and "dtype" not in r.args]
    if not results:
        return None
    groups = collections.OrderedDict()
    for r in sorted(results, key=sort_key):
        groups.setdefault((r.args.get("heads", "?"), r.args.get("hd", "?")), []).append(r)
    n = len(groups)
    cols = min(n, 2)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(7.2 * cols, 4.6 * rows), squeeze=False)
    for ax, ((heads, hd), group) in zip(axes.flat, groups.items()):
        page = collections.Counter(r.args.get("page") for r in group).most_common(1)[0][0]
        group = [r for r in group if r.args.get("page") == page]
        qs = sorted({issue_bars.as_int(r.args.get("q")) or 0 for r in group})
        colours = plt.get_cmap("tab10")
        for i, q in enumerate(qs):
            colour = colours(i % 10)
            points = [r for r in group if (issue_bars.as_int(r.args.get("q")) or 0) == q]
            ax.scatter([int(r.args["kv"]) for r in points], [r.counters["TB/s"] for r in points],
                       color=colour, label=f"q={q}", zorder=3)
            by_batch = collections.defaultdict(list)
            for r in points:
                by_batch[r.args.get("batch")].append(r)
                ax.annotate(f"b{r.args.get('batch', '?')}", (int(r.args["kv"]), r.counters["TB/s"]),
                            textcoords="offset points", xytext=(4, 3), fontsize=7, color=colour)
            for line in by_batch.values():
                if len(line) > 1:
                    line.sort(key=lambda r: int(r.args["kv"]))
                    ax.plot([int(r.args["kv"]) for r in line], [r.counters["TB/s"] for r in line],
                            color=colour, linewidth=1.2)
        rates = [r.run.copy_tbps for r in group if r.run.copy_tbps]
        top = max(r.counters["TB/s"] for r in group)
        if rates:
            rate = statistics.median(rates)
            top = max(top, rate)
            ax.axhline(rate, color="black", linestyle="--", linewidth=1)
            ax.annotate(f"copy rate {rate:.2f} TB/s", (0.01, rate), xycoords=("axes fraction",
                        "data"), xytext=(0, 3), textcoords="offset points", fontsize=8)
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda x, _: kfmt(int(round(x)))))
        ax.set_ylim(0, top * 1.12)
        ax.set_xlabel("KV tokens per request")
        ax.set_ylabel("K+V bandwidth (TB/s)")
        ax.set_title(f"heads {heads.replace('_', '/')}, head dim {hd}, page {page}, L2 cold")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, title="query tokens", title_fontsize=8, loc="lower right")
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    fig.suptitle("Bandwidth vs KV length per query count (bN: batch)")
    return fig


def chart_efficiency(plt, analysis):
    rows = []
    for case in ATTENTION_CASES:
        for r in sorted((r for r in analysis.ours("attention") if r.case == case), key=sort_key):
            if "E" in analysis.metrics.get(r.name, {}):
                rows.append(r)
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(9, 1.2 + 0.24 * len(rows)))
    ys = range(len(rows))[::-1]
    for y, r in zip(ys, rows):
        value = analysis.metrics[r.name]["E"][0]
        bar, met = analysis.status[r.name].get("E", (None, None))
        ax.barh(y, value, color=STATUS_COLOURS[met if bar else None], height=0.7)
        if bar:
            ax.plot([bar["target"]] * 2, [y - 0.42, y + 0.42], color="black", linewidth=1.5)
        ax.annotate(f"{value:.2f}", (value, y), xytext=(3, -3), textcoords="offset points",
                    fontsize=7)
    ax.set_yticks(list(ys))
    ax.set_yticklabels([display_name(r) for r in rows], fontsize=7)
    ax.axvline(1.0, color="grey", linestyle=":", linewidth=1)
    ax.set_xlabel("E = K+V TB/s / copy rate of the same run   (black tick: bar)")
    ax.set_title("E per case (green: bar met, red: not met, grey: no bar)")
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def chart_peers(plt, analysis):
    rows = []
    for r in sorted((r for r in analysis.ours("attention") if r.case in issue_bars.DECODE_VERIFY),
                    key=lambda r: (issue_bars.DECODE_VERIFY.index(r.case), sort_key(r))):
        peers = analysis.peers_for(r)
        if peers:
            rows.append((r, peers))
    if not rows:
        return None
    names = sorted({p for _, peers in rows for p in peers})
    fig, ax = plt.subplots(figsize=(9, 1.4 + 0.22 * len(rows) * max(1, len(names)) ** 0.6))
    height = 0.8 / len(names)
    colours = plt.get_cmap("tab10")
    ys = list(range(len(rows)))[::-1]
    lowest = 1.0
    for j, peer in enumerate(names):
        xs, ypos = [], []
        for y, (r, peers) in zip(ys, rows):
            if peer in peers:
                xs.append(peers[peer].time_us / r.time_us)
                ypos.append(y + 0.4 - height * (j + 0.5))
        # Bars grow from 1.0: right = we are faster, left = slower.
        ax.barh(ypos, [x - 1 for x in xs], left=1, height=height, color=colours(j % 10),
                label=peer)
        lowest = min([lowest] + xs)
    ax.axvline(1.0, color="black", linewidth=1.2)
    ax.axvline(1.3, color="black", linestyle="--", linewidth=1)
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(plt.FixedLocator([0.25, 0.5, 0.75, 1, 1.3, 2, 3, 5, 10, 20]))
    ax.xaxis.set_minor_locator(plt.NullLocator())
    ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda x, _: f"{x:g}"))
    ax.set_xlim(left=min(0.7, lowest * 0.85))
    ax.set_yticks(ys)
    ax.set_yticklabels([display_name(r) for r, _ in rows], fontsize=7)
    ax.set_xlabel("our speed / peer speed (>1: we are faster; bars at 1.0 and 1.3)")
    ax.set_title("Ours vs each PyTorch peer per shape")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def chart_prefill(plt, analysis):
    rows = sorted((r for r in analysis.ours("attention")
                   if r.case == "Prefill" and "TFLOP/s" in r.counters), key=sort_key)
    if not rows:
        return None
    series = collections.OrderedDict([("ours", [r.counters["TFLOP/s"] for r in rows])])
    for i, r in enumerate(rows):
        for peer, p in analysis.peers_for(r).items():
            value = p.counters.get("TFLOP/s", r.counters["TFLOP/s"] * r.time_us / p.time_us)
            series.setdefault(peer, [0.0] * len(rows))[i] = value
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(rows) + 3), 4.2))
    width = 0.8 / len(series)
    colours = plt.get_cmap("tab10")
    for j, (name, values) in enumerate(series.items()):
        xs = [i - 0.4 + width * (j + 0.5) for i in range(len(rows))]
        ax.bar(xs, values, width=width, label=name, color=colours(j % 10))
        for x, v in zip(xs, values):
            if v:
                ax.annotate(f"{v:.0f}", (x, v), ha="center", xytext=(0, 2),
                            textcoords="offset points", fontsize=7)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([display_name(r).replace("Prefill ", "") for r in rows], fontsize=8)
    ax.set_ylabel("TFLOP/s")
    ax.set_title("Prefill TFLOP/s")
    # Room above the tallest bar for a one-row legend, so it hides no value.
    ax.set_ylim(0, 1.22 * max(max(values) for values in series.values()))
    ax.legend(fontsize=8, loc="upper center", ncol=len(series))
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def chart_planner(plt, analysis):
    results = [r for r in analysis.ours("planner")
               if issue_bars.as_int(r.args.get("batch")) is not None]
    if not results:
        return None
    lines = collections.OrderedDict()
    for r in sorted(results, key=sort_key):
        key = (r.family, r.args.get("context", "?"), r.args.get("page", "?"))
        lines.setdefault(key, []).append(r)
    fig, ax = plt.subplots(figsize=(8, 4.6))
    for (family, context, page), line in lines.items():
        line.sort(key=lambda r: int(r.args["batch"]))
        ax.plot([int(r.args["batch"]) for r in line], [r.time_us for r in line], marker="o",
                label=f"{family[3:]} context {kfmt(context)} page {page}")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda x, _: f"{x:g}"))
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda y, _: f"{y:g}"))
    ax.set_xlabel("batch size (requests)")
    ax.set_ylabel("host time per call (us)")
    ax.set_title("Planner host cost vs batch size")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


VERDICT_COLOURS = {"regression": "#c62828", "improvement": "#2e7d32", "same": "#90a4ae"}


def chart_changes(plt, comparisons):
    rows = [row for c in comparisons for row in c.rows]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(9, 1.4 + 0.22 * len(rows)))
    ys = list(range(len(rows)))[::-1]
    ax.barh(ys, [100 * row["change"] for row in rows],
            color=[VERDICT_COLOURS[row["verdict"]] for row in rows])
    ax.set_yticks(ys)
    ax.set_yticklabels([row["display"] for row in rows], fontsize=7)
    ax.axvline(0, color="black", linewidth=1)
    ax.set_xlabel("time change, latest vs previous run (%)   (compare.py)")
    ax.set_title("Change since the last run (red: regression, green: improvement)")
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def chart_history(plt, analysis):
    lines = {name: results for name, results in analysis.history.items()
             if len(results) >= 2 and results[0].kind in ("attention", "planner")
             and all(r.run.date for r in results) and results[0].time_us > 0}
    if not lines:
        return None
    fig, ax = plt.subplots(figsize=(9, 4.6))
    labelled = 0
    for name, results in sorted(lines.items()):
        relative = [r.time_us / results[0].time_us for r in results]
        dates = [r.run.date for r in results]
        if abs(relative[-1] - 1) > 0.10:
            ax.plot(dates, relative, marker="o", linewidth=2, zorder=3,
                    label=display_name(results[-1]) if labelled < 8 else None)
            labelled += 1
        else:
            ax.plot(dates, relative, color="#b0bec5", linewidth=0.8, marker=".")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_ylabel("time / time in its first run")
    ax.set_title(f"Time over runs ({len(lines)} benchmarks; coloured: changed by more than 10%)")
    ax.grid(True, alpha=0.3)
    if labelled:
        ax.legend(fontsize=7)
    fig.autofmt_xdate()
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------
# HTML.
# ---------------------------------------------------------------------------
CSS = """
body { font-family: 'DejaVu Sans', Arial, sans-serif; margin: 18px 28px; color: #212121;
       max-width: 1500px; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 18px; margin-top: 28px;
     border-bottom: 1px solid #ccc; } h3 { font-size: 15px; margin-bottom: 4px; }
table { border-collapse: collapse; font-size: 12px; margin: 6px 0 14px; }
th, td { border: 1px solid #c9c9c9; padding: 2px 6px; text-align: right; white-space: nowrap; }
th { background: #eceff1; } td.l, th.l { text-align: left; }
td.met { background: #c8efcf; } td.miss { background: #f6c3c3; font-weight: bold; }
.banner { padding: 8px 14px; margin: 10px 0; border-radius: 4px; }
.banner.bad { background: #fde2e1; border: 2px solid #c62828; }
.banner.good { background: #e3f6e5; border: 2px solid #2e7d32; }
.banner.info { background: #fff8e1; border: 2px solid #f9a825; }
.note { color: #555; font-size: 12px; } figure { margin: 8px 0 18px; }
img.chart { max-width: 100%; border: 1px solid #ddd; } pre { font-size: 11px; overflow-x: auto; }
tr.regression td { background: #fde2e1; } tr.improvement td { background: #e3f6e5; }
"""

SCRIPT = """
window.addEventListener('load', function () {
  var decoded = 0;
  document.querySelectorAll('img.chart').forEach(function (img) {
    img.dataset.naturalWidth = img.naturalWidth;
    img.dataset.naturalHeight = img.naturalHeight;
    if (img.naturalWidth > 0) decoded++;
  });
  document.body.dataset.chartsDecoded = decoded;
  document.body.dataset.pageHeight = document.documentElement.scrollHeight;
});
"""


def table(headers, rows, cls=""):
    """headers: [(text, left-aligned?)]; rows: [(tr attrs, [(cell html, td class, title)])]."""
    out = [f'<table class="{esc(cls)}"><thead><tr>']
    out += [f'<th class="{"l" if left else ""}">{esc(h)}</th>' for h, left in headers]
    out.append("</tr></thead><tbody>")
    for attrs, cells in rows:
        out.append(f"<tr{attrs}>")
        for cell, td_class, title in cells:
            title_attr = f' title="{esc(title)}"' if title else ""
            out.append(f'<td class="{td_class}"{title_attr}>{cell}</td>')
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def cell(text, cls="", title=""):
    return (text, cls, title)


def bar_text(bar):
    return f"{METRIC_LABELS[bar['metric']]} {bar['op']} {bar['target']:g}"


def metric_cell(analysis, result, metric, fmt):
    value, note = analysis.metrics.get(result.name, {}).get(metric, (None, ""))
    if value is None:
        return cell("—")
    bar, met = analysis.status.get(result.name, {}).get(metric, (None, None))
    cls = "" if bar is None else ("met" if met else "miss")
    title = note + (f"; bar: {bar_text(bar)} ({bar['text']})" if bar else "")
    return cell(fmt(value), cls, title)


SHAPE_COLUMNS = (("heads", "heads"), ("hd", "head dim"), ("batch", "batch"), ("q", "q"),
                 ("kv", "KV"), ("page", "page"), ("l2", "L2"))


def attention_table(analysis, results):
    extra_args = [k for k in dict.fromkeys(k for r in results for k in r.args)
                  if k not in dict(SHAPE_COLUMNS)]
    shape_cols = [(k, h) for k, h in SHAPE_COLUMNS if any(k in r.args for r in results)]
    shape_cols += [(k, k) for k in extra_args]
    metrics = {m for r in results for m in analysis.metrics.get(r.name, {})}
    counters = {c for r in results for c in r.counters}
    headers = [(h, False) for _, h in shape_cols] + [("time (us)", False)]
    cols = []
    # sm_MHz: the clock the GPU held while the case ran (power cap under
    # compute-bound load); a time that moved with it is the board, not the code.
    for counter, header in (("TB/s", "TB/s"), ("TFLOP/s", "TFLOP/s"), ("sm_MHz", "SM MHz"),
                            ("splits", "splits")):
        if counter in counters:
            cols.append(("counter", counter, header))
    for metric, header, fmt in (("E", "E", lambda v: f"{v:.2f}"),
                                ("vs_best_peer", "vs best peer", lambda v: f"{v:.2f}x"),
                                ("skew_ratio", "skewed / uniform time", lambda v: f"{v:.2f}x"),
                                ("page1_vs_64", "page 1 / page 64 speed", lambda v: f"{v:.2f}x"),
                                ("tree_vs_chain", "tree / chain time", lambda v: f"{v:.2f}x")):
        if metric in metrics:
            cols.append(("metric", metric, header, fmt))
    headers += [(c[2], False) for c in cols] + [("bars", True), ("run", False)]
    rows = []
    for r in sorted(results, key=sort_key):
        cells = [cell(esc(kfmt(r.args[k]) if k == "kv" else r.args.get(k, ""))) for k, _ in
                 shape_cols]
        cells.append(metric_cell(analysis, r, "time_us", num))
        for col in cols:
            if col[0] == "counter":
                value = r.counters.get(col[1])
                cells.append(cell(num(value) if col[1] != "splits" or value is None
                                  else f"{value:g}"))
            else:
                text = metric_cell(analysis, r, col[1], col[3])
                if col[1] == "vs_best_peer" and text[0] != "—":
                    note = analysis.metrics[r.name]["vs_best_peer"][1]
                    text = (f"{text[0]} <span class=note>{esc(note)}</span>", text[1], text[2])
                cells.append(text)
        bars = analysis.status.get(r.name, {})
        bar_list = "; ".join(f"{'met' if met else 'NOT met'}: {bar_text(bar)}"
                             for bar, met in bars.values())
        cells.append(cell(esc(bar_list), "l"))
        cells.append(cell(run_ref(r.run), "", r.source))
        rows.append((f' data-benchmark="{esc(r.name)}"', cells))
    return table(headers, rows, "results")


def figure(charts, key, caption):
    if key not in charts:
        return '<p class="note">No data for this chart in the given runs.</p>'
    data = base64.b64encode(charts[key]).decode("ascii")
    return (f'<figure><img class="chart" data-chart="{key}" alt="{esc(caption)}" '
            f'src="data:image/png;base64,{data}"><figcaption class="note">{esc(caption)} '
            f'(<a href="{key}.png">{key}.png</a>)</figcaption></figure>')


def regressions_section(comparisons, series):
    out = ['<section id="regressions"><h2>Regressions since the last run</h2>']
    if not comparisons:
        out.append('<div class="banner info">Only one run per benchmark binary was given: '
                   'nothing to compare. Give two or more runs (JSON files) of the same binary.'
                   '</div></section>')
        return "".join(out)
    regressions = [(c, row) for c in comparisons for row in c.rows if row["verdict"] ==
                   "regression"]
    errors = [c for c in comparisons if c.error]
    if regressions:
        out.append(f'<div class="banner bad"><b>{len(regressions)} regression'
                   f'{"s" if len(regressions) != 1 else ""}</b> reported by Google Benchmark\'s '
                   'compare.py between the latest two runs:')
        regressions.sort(key=lambda cr: -cr[1]["change"])
        rows = []
        for c, row in regressions:
            rows.append((f' class="regression" data-benchmark="{esc(row["name"])}"', [
                cell(esc(row["display"]), "l", row["name"]),
                cell(f'{100 * row["change"]:+.1f}%'),
                cell(f'{num(row["old_us"])} &rarr; {num(row["new_us"])}'),
                cell(esc(row["method"]), "l"),
                cell(f"{run_ref(c.base)} &rarr; {run_ref(c.new)}")]))
        out.append(table([("benchmark", True), ("time change", False), ("time (us)", False),
                          ("compare.py", True), ("runs", False)], rows, "regressions"))
        out.append("</div>")
    elif not errors or len(errors) < len(comparisons):
        out.append('<div class="banner good">No regressions reported by compare.py between the '
                   'latest two runs.</div>')
    for c in errors:
        out.append(f'<div class="banner info">{esc(c.series)}: {esc(c.error)}</div>')
    for c in comparisons:
        if c.no_utest and not c.error:
            out.append(
                f'<p class="note fallback">{esc(c.series)} ({run_ref(c.base)} &rarr; '
                f'{run_ref(c.new)}): compare.py could not run its U test for {c.no_utest} '
                f'benchmark{"s" if c.no_utest != 1 else ""}: it needs every repetition in both '
                f'runs\' JSON (2+, 9+ recommended; ReportAggregatesOnly keeps only the '
                f'aggregates). For those its plain time ratio is used: slower by more than '
                f'{100 * COMPARE_RED_ABOVE:.0f}% counts as a regression.</p>')
    singles = [name for name, members in series.items() if len(members) < 2]
    if singles:
        out.append(f'<p class="note">One run only, not compared: {esc(", ".join(singles))}.</p>')
    out.append("</section>")
    return "".join(out)


def bars_section(analysis):
    """Each issue's bars (tools/issue_bars.py) with the shapes that meet and miss
    each, and per issue the totals the peer script prints for the same run."""
    rows, totals = [], []
    for issue, bars in issue_bars.BARS_BY_ISSUE.items():
        issue_met = issue_missed = 0
        for bar in bars:
            judged = [(analysis.latest[name], analysis.metrics[name][bar["metric"]][0], met)
                      for name, statuses in analysis.status.items()
                      for b, met in statuses.values() if b is bar]
            met = sum(1 for _, _, ok in judged if ok)
            missed = [j for j in judged if not j[2]]
            issue_met, issue_missed = issue_met + met, issue_missed + len(missed)
            worst = None
            if judged:
                pick = min if bar["op"] == ">=" else max
                worst = pick(judged, key=lambda j: j[1])
            rows.append((f' data-bar="{esc(bar["id"])}"', [
                cell(str(issue)), cell(esc(bar["text"]), "l"), cell(esc(bar_text(bar)), "l"),
                cell(str(met), "met" if judged and not missed else ""),
                cell(str(len(missed)), "miss" if missed else ""),
                cell(esc(f"{num(worst[1])} ({display_name(worst[0])})") if worst else "no shape",
                     "l")]))
        totals.append(f'<span data-issue="{issue}">issue {issue}: {issue_met} met, '
                      f'{issue_missed} missed</span>')
    return ('<section id="bars"><h2>Bars (issues 10 and 13)</h2><p class="note">Each of our '
            'latest results is judged by the first matching row per metric; issue 10\'s bars '
            'judge L2-cold runs only (but the one-tile call), issue 13\'s every tree step '
            'against the chain step of its shape in the same run.</p>'
            f'<p class="totals">{"; ".join(totals)}</p>'
            + table([("issue", False), ("case", True), ("bar", True), ("met", False),
                     ("not met", False), ("worst", True)], rows, "bars") + "</section>")


def questions_section(analysis):
    """The owner's open questions on issue 10's bars (attention/kernel/NOTES.md,
    "What limits it now"), read from the latest results as the peer script
    prints them under its bar count: the decode bars against a peer on
    contiguous K/V under an allowance for the shuffled page pool, and the
    one-tile bar read per call inside a captured graph (and, where the run has
    it, as a one-node graph on a capacity graph's grid)."""
    rows = []
    peer_bar = issue_bars.bar_by_id("peer")
    missed = sorted(analysis.metrics[name]["vs_best_peer"][0]
                    for name, statuses in analysis.status.items()
                    if analysis.latest[name].case == "Decode"
                    for bar, met in statuses.values() if bar is peer_bar and not met)
    if missed:
        counts = issue_bars.met_with_allowances(missed)
        rows.append((' data-question="decode_allowance"', [
            cell("decode vs best peer (contiguous K/V) " + esc(bar_text(peer_bar)), "l"),
            cell(f"{len(missed)} missed at {num(missed[0])}-{num(missed[-1])}", "l"),
            cell(esc("; ".join(f"{allowance:.0%}: {n} of {len(missed)} met"
                               for allowance, n in zip(issue_bars.DECODE_ALLOWANCES, counts))),
                 "l")]))
    for r in sorted(analysis.ours("attention"), key=sort_key):
        if r.case != "OneTileInGraph" or "calls" not in r.args:
            continue
        args = {k: v for k, v in r.args.items() if k != "calls"}
        one_node = analysis.latest.get(canonical_name(ATTENTION_PREFIX + "OneTile", args))
        bar = issue_bars.bar_for("OneTile", args, "time_us")
        if one_node is None or bar is None:
            continue
        def judged(text, time_us):
            return cell(esc(text), "met" if issue_bars.met(bar, time_us) else "miss")
        one_node_cell = judged(f"{num(one_node.time_us)} us as a one-node graph",
                               one_node.time_us)
        rows.append((f' data-question="one_tile_in_graph" data-benchmark="{esc(r.name)}"', [
            cell(esc(f"{display_name(one_node)}: {bar_text(bar)}"), "l"), one_node_cell,
            judged(f"{num(r.time_us)} us per call in a graph of {r.args['calls']}", r.time_us)]))
        # The one-node graph on the grid of a graph captured for any batch (a CTA
        # for every worker): what the one-node reading costs in an engine's graph.
        full_grid = analysis.latest.get(canonical_name(ATTENTION_PREFIX + "OneTileFullGrid",
                                                       dict(args, grid="all")))
        if full_grid is not None:
            rows.append((' data-question="one_tile_full_grid"'
                         f' data-benchmark="{esc(full_grid.name)}"',
                         [cell(esc(f"{display_name(one_node)} on a capacity graph's grid: "
                                   f"{bar_text(bar)}"), "l"), one_node_cell,
                          judged(f"{num(full_grid.time_us)} us as a one-node graph with a CTA "
                                 "for every worker", full_grid.time_us)]))
    if not rows:
        return ""
    return ('<section id="questions"><h2>Open questions on the bars</h2><p class="note">'
            'Readings of the latest results for the owner\'s questions in '
            'attention/kernel/NOTES.md ("What limits it now"), as the peer script prints them: '
            'the bars above judge by the second column\'s reading, the third is the other '
            'reading the owner may choose.</p>'
            + table([("bar", True), ("as judged", True), ("other reading", True)], rows,
                    "questions") + "</section>")


def runs_section(runs):
    rows = []
    for run in runs:
        c = run.context
        cuda = " / ".join(str(c[k]) for k in ("cuda_runtime", "cuda_driver") if c.get(k))
        rows.append((f' id="run-{run.index}"', [
            cell(f"#{run.index}"), cell(esc(os.path.basename(run.path)), "l", run.path),
            cell(esc(c.get("date", "(no date)")), "l"), cell(esc(c.get("gpu", "")), "l"),
            cell(esc(c.get("gpu_sms", ""))), cell(esc(cuda), "l"),
            cell(esc(c.get("git_revision", "")), "l"), cell(esc(c.get("host_name", "")), "l"),
            cell(esc(os.path.basename(str(c.get("executable", "")))), "l"),
            cell(num(run.copy_tbps), "", run.copy_source),
            cell(str(len(run.results))), cell(str(len(run.skipped)))]))
    return ('<section id="runs"><h2>Runs</h2>' + table(
        [("run", False), ("file", True), ("date", True), ("GPU", True), ("SMs", False),
         ("CUDA runtime / driver", True), ("git revision", True), ("host", True),
         ("executable", True), ("copy TB/s", False), ("benchmarks", False), ("skipped", False)],
        rows, "runs") + "</section>")


def peers_table(analysis):
    rows_data = []
    for r in sorted(analysis.ours("attention"), key=lambda r: (
            ATTENTION_CASES.index(r.case), sort_key(r))):
        peers = analysis.peers_for(r)
        if peers:
            rows_data.append((r, peers))
    orphan = [p for p in analysis.ours("peer")
              if not any(p in peers.values() for _, peers in rows_data)]
    if not rows_data and not orphan:
        return '<p class="note">No PyTorch peer results in the given runs.</p>'
    names = sorted({p for _, peers in rows_data for p in peers} | {p.case for p in orphan})
    headers = [("our benchmark", True), ("ours (us)", False), ("ours TB/s", False)]
    headers += [(f"{n} TB/s (ours / it)", False) for n in names]
    headers += [("vs best peer", False), ("run", False)]
    rows = []
    for r, peers in rows_data:
        cells = [cell(esc(display_name(r)), "l", r.name), cell(num(r.time_us)),
                 cell(num(r.counters.get("TB/s")))]
        for n in names:
            p = peers.get(n)
            cells.append(cell(f"{num(p.counters.get('TB/s'))} ({p.time_us / r.time_us:.2f}x)"
                              if p else "—", "", p.name if p else ""))
        value = metric_cell(analysis, r, "vs_best_peer", lambda v: f"{v:.2f}x")
        note = analysis.metrics.get(r.name, {}).get("vs_best_peer", (None, ""))[1]
        cells.append((f"{value[0]} <span class=note>{esc(note)}</span>", value[1], value[2]))
        cells.append(cell(run_ref(r.run)))
        rows.append((f' data-benchmark="{esc(r.name)}"', cells))
    out = table(headers, rows, "peers")
    if orphan:
        out += "<h3>Peer results without a matching benchmark of ours</h3>" + generic_table(
            orphan)
    return out


def simple_table(results, cls):
    counters = list(dict.fromkeys(c for r in results for c in r.counters))
    keys = list(dict.fromkeys(k for r in results for k in r.args))
    headers = [("benchmark", True)] + [(k, False) for k in keys] + [("time (us)", False)]
    headers += [(c, False) for c in counters] + [("label", True), ("run", False)]
    rows = []
    for r in sorted(results, key=sort_key):
        cells = [cell(esc(display_name(r) if r.kind != "generic" else r.family), "l", r.raw_name)]
        cells += [cell(esc(r.args.get(k, ""))) for k in keys]
        cells.append(cell(num(r.time_us)))
        cells += [cell(num(r.counters.get(c))) for c in counters]
        cells += [cell(esc(r.label), "l"), cell(run_ref(r.run), "", r.source)]
        rows.append((f' data-benchmark="{esc(r.name)}"', cells))
    return table(headers, rows, cls)


def generic_table(results):
    return simple_table(results, "generic")


def changes_section(comparisons):
    out = []
    for c in comparisons:
        out.append(f"<h3>{esc(c.series)}: run {run_ref(c.base)} "
                   f"({esc(c.base.context.get('date', ''))}, "
                   f"{esc(c.base.context.get('git_revision', '?'))}) &rarr; run {run_ref(c.new)} "
                   f"({esc(c.new.context.get('date', ''))}, "
                   f"{esc(c.new.context.get('git_revision', '?'))})</h3>")
        if c.error:
            out.append(f'<p class="note">{esc(c.error)}</p>')
            continue
        rows = [(f' class="{row["verdict"]}" data-benchmark="{esc(row["name"])}"', [
            cell(esc(row["display"]), "l", row["name"]), cell(num(row["old_us"])),
            cell(num(row["new_us"])), cell(f'{100 * row["change"]:+.1f}%'),
            cell(esc(row["method"]), "l"), cell(row["verdict"], "l")]) for row in c.rows]
        out.append(table([("benchmark", True), ("old (us)", False), ("new (us)", False),
                          ("change", False), ("compare.py", True), ("verdict", True)], rows,
                         "changes"))
        out.append(f"<details><summary>compare.py output</summary><pre>{esc(c.text)}</pre>"
                   "</details>")
    return "".join(out)


def render_html(runs, analysis, comparisons, series, charts):
    gpus = sorted({str(r.context.get("gpu")) for r in runs
                   if r.context.get("gpu") and r.context.get("gpu") != "none"})
    out = ["<!DOCTYPE html><html><head><meta charset=\"utf-8\">",
           "<title>Paged attention benchmarks</title>", f"<style>{CSS}</style></head><body>",
           "<h1>Paged attention benchmark dashboard</h1>",
           f'<p class="note">{len(runs)} run{"s" if len(runs) != 1 else ""} '
           f'({esc(", ".join(gpus) or "no GPU named")}); latest: '
           f'{esc(runs[-1].context.get("date", "?") if runs else "?")}. Tables show, for each '
           'benchmark, the latest run that has it. Generated by tools/dashboard.py.</p>']
    out.append(regressions_section(comparisons, series))
    out.append(bars_section(analysis))
    out.append(questions_section(analysis))
    out.append(runs_section(runs))

    out.append('<section id="bandwidth"><h2>Bandwidth vs KV length</h2>')
    out.append(figure(charts, "bandwidth", "K+V TB/s of our decode / draft-extend / verify "
                      "cases, one colour per query count, labels give the batch"))
    out.append("</section>")

    out.append('<section id="efficiency"><h2>E per case</h2>')
    out.append(figure(charts, "efficiency", "E = TB/s over the copy rate of the same run, "
                      "coloured against the bars"))
    for case in ATTENTION_CASES:
        results = [r for r in analysis.ours("attention") if r.case == case]
        if results:
            out.append(f'<h3 id="case-{case}">{ATTENTION_PREFIX}{case}</h3>')
            out.append(attention_table(analysis, results))
    out.append("</section>")

    out.append('<section id="peers"><h2>Ours vs PyTorch peers</h2>')
    out.append(figure(charts, "peers", "our speed over each peer's on the same shape "
                      "(contiguous KV for the peers)"))
    out.append(peers_table(analysis))
    out.append("</section>")

    out.append('<section id="prefill"><h2>Prefill TFLOP/s</h2>')
    out.append(figure(charts, "prefill", "prefill TFLOP/s, ours and the peers on the same shape"))
    out.append("</section>")

    out.append('<section id="planner"><h2>Planner host cost</h2>')
    out.append(figure(charts, "planner", "host time of planning per call vs batch size"))
    planner = analysis.ours("planner")
    if planner:
        out.append(simple_table(planner, "planner"))
    out.append("</section>")

    out.append('<section id="changes"><h2>What changed since the last run</h2>')
    out.append(figure(charts, "changes", "time change per benchmark between the latest two runs "
                      "of each binary (Google Benchmark's compare.py)"))
    out.append(figure(charts, "history", "time of each benchmark over all runs, relative to its "
                      "first run"))
    out.append(changes_section(comparisons))
    out.append("</section>")

    copies = analysis.ours("copy")
    if copies:
        out.append('<section id="copy"><h2>Copy rate</h2>' + simple_table(copies, "copy") +
                   "</section>")
    generic = analysis.ours("generic")
    out.append('<section id="generic"><h2>Other benchmarks</h2>')
    out.append(generic_table(generic) if generic else
               '<p class="note">Every benchmark was recognised.</p>')
    out.append("</section>")
    out.append('<section id="skipped"><h2>Skipped benchmarks</h2>')
    skipped = [(run, name, message) for run in runs for name, message in run.skipped]
    if skipped:
        out.append(table([("benchmark", True), ("error", True), ("run", False)], [
            ("", [cell(esc(name), "l"), cell(esc(message), "l"), cell(run_ref(run))])
            for run, name, message in skipped], "skipped"))
    else:
        out.append('<p class="note">None.</p>')
    out.append("</section>")
    out.append(f"<script>{SCRIPT}</script></body></html>\n")
    return "".join(out)


def render_charts(analysis, comparisons):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"font.size": 9, "figure.dpi": 100})
    makers = (("bandwidth", lambda: chart_bandwidth(plt, analysis)),
              ("efficiency", lambda: chart_efficiency(plt, analysis)),
              ("peers", lambda: chart_peers(plt, analysis)),
              ("prefill", lambda: chart_prefill(plt, analysis)),
              ("planner", lambda: chart_planner(plt, analysis)),
              ("changes", lambda: chart_changes(plt, comparisons)),
              ("history", lambda: chart_history(plt, analysis)))
    charts = collections.OrderedDict()
    for key, make in makers:
        fig = make()
        if fig is None:
            continue
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=100)
        plt.close(fig)
        charts[key] = buffer.getvalue()
    return charts


def ensure_matplotlib():
    """The issue's command line says `python3`; where that interpreter lacks
    matplotlib (e.g. a pyenv one), run again under Debian's."""
    if importlib.util.find_spec("matplotlib") is not None:
        return
    if os.path.realpath(sys.executable) != os.path.realpath(SYSTEM_PYTHON) and os.access(
            SYSTEM_PYTHON, os.X_OK):
        os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, os.path.abspath(__file__)] + sys.argv[1:])
    sys.stderr.write("dashboard: matplotlib is missing: install python3-matplotlib "
                     "(bash tools/setup.sh)\n")
    sys.exit(1)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Google Benchmark JSON runs -> DIR/index.html plus one PNG per chart.")
    parser.add_argument("--out", required=True, help="output directory (created)")
    parser.add_argument("files", nargs="+", metavar="FILE.json")
    args = parser.parse_args(argv)
    ensure_matplotlib()

    runs = []
    try:
        for order, path in enumerate(args.files):
            runs.append(load_run(path, order))
    except InputError as e:
        sys.stderr.write(f"dashboard: {e}\n")
        return 1
    order_runs(runs)
    assign_copy_rates(runs)
    analysis = Analysis(runs)
    with tempfile.TemporaryDirectory(prefix="dashboard_") as workdir:
        comparisons, series = compare_series(runs, workdir)
    charts = render_charts(analysis, comparisons)
    page = render_html(runs, analysis, comparisons, series, charts)

    os.makedirs(args.out, exist_ok=True)
    for key, png in charts.items():
        with open(os.path.join(args.out, f"{key}.png"), "wb") as f:
            f.write(png)
    with open(os.path.join(args.out, "index.html"), "w", encoding="utf-8") as f:
        f.write(page)
    regressions = sum(1 for c in comparisons for row in c.rows if row["verdict"] == "regression")
    print(f"dashboard: {os.path.join(args.out, 'index.html')}: {len(runs)} runs, "
          f"{len(charts)} charts, {regressions} regressions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
