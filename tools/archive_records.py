#!/usr/bin/env python3
"""Archives the record folders of GPU runs that no dashboard page reads.

    python3 tools/archive_records.py tools/benchmarks/FOLDER...          # rewrites them
    python3 tools/archive_records.py --check tools/benchmarks/FOLDER...  # exit 1 if not archived

Why: the whole tracked tree travels to the GPU machine under the device tool's
64 MiB limit, together with the bundle (~6 MB), and every session adds its
records (~1-5 MB). What an archived folder keeps:

- every JSON file as FILE.json.xz; a Google Benchmark document is first
  compacted (compact_benchmark_json.py: the context, median and stddev
  aggregates, the rows without aggregates); tools/ab_table.py and
  tools/dashboard.py read .json.xz as they are;
- every log, and every other text file over 32 KB, as FILE.xz (`xzcat FILE.xz`);
- each peer run's table (peers_table*.txt) in plain text, cut to its bars
  table: the console output above it is the benchmark binary's rendering of
  the run's JSON, whose medians and stddevs the JSON keeps;
- READMEs, predictions, scripts, patches and images as they are, with one
  line added to README.md saying what was archived, so a name the README or
  attention/kernel/NOTES.md gives as FILE is FILE.xz there.

A dashboard/ folder inside a record folder (a page and its images) is left alone.
"""
import argparse
import json
import lzma
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compact_benchmark_json  # noqa: E402

LARGE_TEXT_BYTES = 32 * 1024
TABLE_HEADER = "case "  # the bars table's header line: "case   us   TB/s   E ..."
CUT_NOTE = ("# Archived: the console output above this table was cut "
            "(tools/archive_records.py); the run's medians and stddevs are in its JSON.\n")
README_NOTE = ("Archived by `tools/archive_records.py`: this folder's JSON files, logs and "
               "text files over 32 KB are stored as NAME.xz where this README or "
               "`attention/kernel/NOTES.md` says NAME (`xzcat NAME.xz`; `tools/ab_table.py` "
               "and `tools/dashboard.py` read `.json.xz` as it is), and each "
               "`peers_table*.txt` keeps only its bars table.\n")
KEPT_AS_THEY_ARE = (".md", ".sh", ".patch", ".png", ".gz", ".xz", ".cu", ".py", ".html", ".csv")


class ArchiveError(Exception):
    pass


def xz_bytes(data):
    return lzma.compress(data, preset=9 | lzma.PRESET_EXTREME)


def archived_json(path, raw):
    """The .json.xz bytes of a JSON file: compacted first if it is benchmark JSON."""
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ArchiveError(f"{path}: not JSON: {error}")
    if compact_benchmark_json.is_benchmark_document(data):
        raw = compact_benchmark_json.dumps(compact_benchmark_json.compact(data)).encode()
    return xz_bytes(raw)


def cut_peers_table(path, text):
    """A peer run's table without the console output above its bars table."""
    if text.startswith(CUT_NOTE):
        return text
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith(TABLE_HEADER) and "bars" in line:
            return CUT_NOTE + "".join(lines[i:])
    raise ArchiveError(f"{path}: no bars table (a line starting {TABLE_HEADER!r} naming bars)")


def plan_folder(folder):
    """(path, new bytes or None to delete) for every change archiving makes."""
    changes = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "dashboard")
        for name in sorted(files):
            path = os.path.join(root, name)
            if name.endswith(KEPT_AS_THEY_ARE) or name == "predictions.txt":
                continue
            with open(path, "rb") as f:
                raw = f.read()
            if name.endswith(".json"):
                changes += [(path + ".xz", archived_json(path, raw)), (path, None)]
            elif name.startswith("peers_table") and name.endswith(".txt"):
                text = raw.decode("utf-8")
                cut = cut_peers_table(path, text)
                if cut != text:
                    changes.append((path, cut.encode()))
            elif name.endswith(".log") or len(raw) > LARGE_TEXT_BYTES:
                changes += [(path + ".xz", xz_bytes(raw)), (path, None)]
    readme = os.path.join(folder, "README.md")
    if os.path.exists(readme):
        with open(readme, encoding="utf-8") as f:
            text = f.read()
    else:  # the folders of the first runs have none: their records are described there
        text = (f"# {os.path.basename(os.path.normpath(folder))}\n\nWhat these records are: "
                "`attention/kernel/NOTES_history.md`, \"Where each run's records were written "
                "down\".\n")
    if README_NOTE not in text:
        changes.append((readme, (text.rstrip("\n") + "\n\n" + README_NOTE).encode()))
    return changes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--check", action="store_true",
                        help="report folders that archiving would change; change nothing")
    args = parser.parse_args()
    not_archived = 0
    for folder in args.folders:
        if not os.path.isdir(folder):
            print(f"{folder}: not a folder", file=sys.stderr)
            return 2
        try:
            changes = plan_folder(folder)
        except ArchiveError as error:
            print(error, file=sys.stderr)
            return 2
        before = sum(os.path.getsize(p) for p, _ in changes if os.path.exists(p))
        after = sum(len(data) for _, data in changes if data is not None)
        if changes:
            print(f"{folder}: {len(changes)} changes, {before} -> {after} bytes")
        if args.check:
            not_archived += bool(changes)
            continue
        for path, data in changes:
            if data is None:
                os.remove(path)
            else:
                with open(path, "wb") as f:
                    f.write(data)
    return 1 if not_archived else 0


if __name__ == "__main__":
    sys.exit(main())
