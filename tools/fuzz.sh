#!/usr/bin/env bash
# Builds the libFuzzer targets (cc_fuzz_target, tools/fuzz.bzl) with clang,
# ASan and UBSan (--config=fuzz) and runs each one; see tools/FUZZING.md.
#
#   bash tools/fuzz.sh                    # smoke: each target 25 s (CI)
#   bash tools/fuzz.sh --time=600         # each target 10 minutes
#   bash tools/fuzz.sh --runs=1000000     # each target 1M inputs (the documented long run)
#   bash tools/fuzz.sh --runs=1000 //kv_cache:page_pool_fuzzer   # chosen targets
#
# The build uses its own Bazel output base ($FUZZ_OUTPUT_BASE, default
# ~/.cache/bazel_fuzz/<hash of this checkout>): switching CC to clang would
# otherwise throw away the default output base's C++ outputs. Each run starts
# from the checked-in seed corpus and writes new inputs and crash files to a
# scratch folder ($FUZZ_WORK_DIR, default a temporary one), never into the
# repository. Ends with one line "N passed, N failed" (one per target); exits
# non-zero on any failure (a crash, a sanitizer report, a FUZZ_CHECK, a leak, a
# timeout or running out of memory).
set -uo pipefail
cd "$(dirname "$0")/.."

limit=(-max_total_time=25)
targets=()
for arg in "$@"; do
  case "$arg" in
    --time=*) limit=("-max_total_time=${arg#--time=}") ;;
    --runs=*) limit=("-runs=${arg#--runs=}") ;;
    //*) targets+=("$arg") ;;
    *) echo "fuzz.sh: unknown argument $arg" >&2; exit 2 ;;
  esac
done

output_base="${FUZZ_OUTPUT_BASE:-$HOME/.cache/bazel_fuzz/$(pwd | md5sum | cut -c1-12)}"
bazel_fuzz=(bazel --output_base="$output_base")
if ((${#targets[@]} == 0)); then
  # Every top-level package tree but the bazel-* links: those point into the
  # default output base, whose external repositories this server cannot load.
  universe=()
  for dir in */; do
    [[ $dir == bazel-* || -z $(find "$dir" -name BUILD -print -quit) ]] || universe+=("//${dir%/}/...")
  done
  mapfile -t targets < <("${bazel_fuzz[@]}" query --noshow_progress \
    "attr(tags, 'fuzzer', kind(cc_binary, set(${universe[*]})))" 2>/dev/null)
fi
if ((${#targets[@]} == 0)); then
  echo "fuzz.sh: no fuzz targets found"; echo "0 passed, 1 failed"; exit 1
fi

# --symlink_prefix=/: leave the workspace's bazel-* links to the default output base.
# --output_filter: clang + gold print hundreds of harmless "Cannot export local
# symbol __asan_*" warnings per link; errors still show.
if ! "${bazel_fuzz[@]}" build --config=fuzz --symlink_prefix=/ --output_filter=DONT_MATCH_ANYTHING \
    "${targets[@]}"; then
  echo "fuzz.sh: build failed"; echo "0 passed, ${#targets[@]} failed"; exit 1
fi
bin=$("${bazel_fuzz[@]}" info --config=fuzz bazel-bin 2>/dev/null)

work="${FUZZ_WORK_DIR:-$(mktemp -d)}"
passed=0 failed=0
for target in "${targets[@]}"; do
  package=${target#//}; package=${package%%:*}; name=${target##*:}
  corpus_name=${name%_fuzzer}
  seeds="$package/fuzz_corpus/$corpus_name"
  scratch="$work/$name"
  mkdir -p "$scratch/corpus" "$scratch/artifacts"
  log="$scratch/fuzz.log"
  start=$SECONDS
  # -rss_limit_mb / -malloc_limit_mb: an input that makes us allocate more
  # than 2 GiB is a bug. -timeout: one input taking 10 s is a hang.
  "$bin/$package/$name" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$scratch/artifacts/" \
    "$scratch/corpus" "$seeds" >"$log" 2>&1
  status=$?
  runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  if ((status == 0)); then
    passed=$((passed + 1))
    echo "fuzz $target: PASSED, ${runs:-?} inputs in $((SECONDS - start)) s, corpus $(ls "$scratch/corpus" | wc -l) files"
  else
    failed=$((failed + 1))
    echo "fuzz $target: FAILED (exit $status) after ${runs:-?} inputs; log $log"
    grep -E 'ERROR|FUZZ_CHECK|SUMMARY|Test unit written' "$log" | head -20
  fi
done
echo "${passed} passed, ${failed} failed"
((failed == 0))
