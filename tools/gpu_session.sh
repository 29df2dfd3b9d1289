#!/usr/bin/env bash
# The steps of a device-tool call on the GPU machine, so a session's call is
# one line instead of a script of its own. Run from the repository root with
# the bundle (tools/gpu_bundle.sh) unpacked in gpu_bundle/ and, for `ab`,
# benchmark builds in ab/bench_<name> (git-ignored). To carry both in one
# archive under the device tool's size limit:
#   tar -cf - gpu_bundle ab | xz -9 -T2 > carry.tar.xz    # here
#   tar -xJf carry.tar.xz && bash tools/gpu_session.sh $OUT tests peers   # there
#
#   bash tools/gpu_session.sh OUT STEP...
# Files in OUT older than one call (11 minutes: another call's) are removed first.
# Steps (in the order given; results under OUT, a summary on stdout):
#   tests                      every GPU test (run_tests.sh): OUT/gpu_tests.log
#   ab ROUNDS FILTER NAME...   A/B of ab/bench_NAME, one process each per round,
#                              order rotated: OUT/ab_NAME_ROUND.json, OUT/ab_table.txt;
#                              AB_REPLAY_GAP_US=N idles N us after each replay
#                              (compute-bound cases: testing/benchmark_main.h);
#                              each process is cut at AB_BENCH_LIMIT_S (300) seconds,
#                              so a variant that hangs costs one limit, not the call
#   peers                      tools/peer_benchmark.py, flex on every case: OUT/peers.json,
#                              OUT/peers_table.txt, OUT/peers_log.txt (progress, flex failures)
#   peers_autotuned FILTER     the same with flex compiled by max-autotune, on our cases that
#                              FILTER matches (~40-50 fit one call): OUT/peers_autotuned.json,
#                              OUT/peers_autotuned_table.txt, OUT/peers_autotuned_log.txt
#   checks                     memcheck of the kernel test, racecheck in eight parts of
#                              120-240 s (the kernel test's first targeted cases, the fp16
#                              sweep at pages 1/16/256, the bf16 sweep at page 16, the
#                              modes test's tree cases, the KV head pairs test, the GQA
#                              ratios test, the member pairs test, the kernel test's
#                              later targeted cases; a part cut at its limit says so
#                              and at which case), graph-replay memcheck and the
#                              plan_batch dumps through check_dump.py:
#                              OUT/gpu_checks.txt, OUT/racecheck_all.log
#   dumps                      only the graph-replay memcheck and the dumps of `checks`
#                              (trees included; ~10 s): OUT/gpu_dumps.txt
#   racecheck                  only the racecheck parts of `checks`: OUT/racecheck.txt,
#                              OUT/racecheck_all.log; RACECHECK_PARTS="1 2 5" runs only
#                              those parts (1-based, run_racecheck's order)
#   ncu NAME FILTER...         Nsight Compute of the attention and merge kernels of each
#                              case FILTER matches, run by ab/bench_NAME (NAME bundle:
#                              the bundle's benchmark): one pass of duration, DRAM bytes
#                              read, L2 hit rate and instructions, at free clocks with
#                              L2 flushed before each launch, three timed replays each
#                              (a multi-pass ncu run without cache control lets a pass
#                              see the L2 of the pass before): OUT/ncu_NAME.txt. The
#                              three launches count over the whole process: give each
#                              case a FILTER of its own (one matching two cases profiles
#                              only the first). NCU_METRICS=a,b,... replaces the metrics
#   sass NAME [REGEX]          cuobjdump -sass of the kernels whose names match REGEX
#                              (default: every attention and merge kernel) in ab/bench_NAME
#                              (NAME bundle: the bundle's benchmark): OUT/sass_NAME.txt.xz,
#                              and per kernel its instruction count, local-memory loads
#                              and stores (spills), barriers and global loads on stdout,
#                              so a change's code shape is read before its A/B
# `ab`, `ncu` and `sass` take their arguments up to the next step name. With GPU_SESSION_PACK set
# to a path, OUT is packed there (tar.xz) after each step: the device tool
# brings back only a few files per call, and a call cut short by its time
# limit still returns the steps that finished:
#   GPU_SESSION_PACK=$OUT/call.tar.xz bash tools/gpu_session.sh $OUT/r tests peers checks
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "$1"); shift
mkdir -p "$out"
# A device machine once came with an earlier call's files in OUT, and the pack
# carried them back as this call's. A call runs at most 10 minutes, so a file
# older than 11 is another call's; files of this call's earlier invocations
# (call scripts run several into one OUT) stay.
stale=$(find "$out" -type f -mmin +11 -print -delete | wc -l)
((stale == 0)) || echo "removing $stale files of an earlier call from $out"
export LD_LIBRARY_PATH="$PWD/gpu_bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bin=gpu_bundle/bin
cat gpu_bundle/REVISION
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

is_step() {
  [[ $1 == tests || $1 == ab || $1 == peers || $1 == peers_autotuned || $1 == checks ||
     $1 == dumps || $1 == racecheck || $1 == ncu || $1 == sass ]]
}

run_tests() {
  timeout 280 bash gpu_bundle/run_tests.sh > "$out/gpu_tests.log" 2>&1
  echo "tests rc=$?"
  grep -hE "^\[  (PASSED|FAILED) |replays matched|Failure|SEED|passed, " "$out/gpu_tests.log" |
    sort | uniq -c | head -20
  grep -hE "ERRSTAT" "$out/gpu_tests.log" | awk '{print $NF}' | sort -n | tail -1 |
    sed 's/^/worst error ratio /'
  grep -hE "BOUNDSTAT" "$out/gpu_tests.log" | awk '{print $NF}' | sort -n | tail -1 |
    sed 's/^/modes test: most of its bound a check used /'
}

run_ab() {  # rounds filter names...
  local rounds=$1 filter=$2; shift 2
  local names=("$@") order=("$@") hung=" " rc
  # Rounds an earlier `ab` of this call left in OUT would join this one's
  # table: each variant starts from none.
  for name in "${names[@]}"; do rm -f "$out/ab_${name}_"*.json "$out/ab_${name}_"*.err; done
  for ((r = 1; r <= rounds; ++r)); do
    for name in "${order[@]}"; do
      [[ $hung == *" $name "* ]] && continue  # it hung once: not again
      timeout "${AB_BENCH_LIMIT_S:-300}" ab/bench_$name --benchmark_filter="$filter" \
        --benchmark_out="$out/ab_${name}_$r.json" --benchmark_out_format=json \
        ${AB_REPLAY_GAP_US:+--replay_gap_us=$AB_REPLAY_GAP_US} \
        > /dev/null 2> "$out/ab_${name}_$r.err" && continue
      rc=$?
      echo "bench $name failed (round $r, rc $rc)"
      if ((rc == 124)); then
        echo "bench $name cut at ${AB_BENCH_LIMIT_S:-300} s: left out of the later rounds"
        hung+="$name "
      fi
    done
    order=("${order[@]:1}" "${order[0]}")  # rotate
  done
  python3 tools/ab_table.py "$out" "${names[@]}" > "$out/ab_table.txt"
  cut -c1-150 "$out/ab_table.txt"
}

# tools/peer_benchmark.py over our benchmark binary: OUT/NAME.json, the bars
# table in OUT/NAME_table.txt, and in OUT/NAME_log.txt each case's peer times
# as it goes (what a run cut at its limit reached) and flex's compile failures.
run_peer_script() {  # name limit_s [peer_benchmark.py args...]
  local name=$1 limit_s=$2; shift 2
  PYTHONUNBUFFERED=1 timeout "$limit_s" python3 tools/peer_benchmark.py \
    --ours $bin/attention_kernel_paged_attention_benchmark --out "$out/$name.json" "$@" \
    > "$out/${name}_table.txt" 2> "$out/${name}_log.txt"
  echo "$name rc=$? (124: cut at its limit)"
  grep -E '^flex failed' "$out/${name}_log.txt" | sort | uniq -c | cut -c1-170
  tail -1 "$out/${name}_log.txt" | cut -c1-170
  sed '/^other readings/,$d' "$out/${name}_table.txt" | grep -E 'MISS|bars:|skewed' | cut -c1-170
  sed -n '/^other readings/,$p' "$out/${name}_table.txt" | cut -c1-170
}

# Flex on every case: ~1-2 s of compile per shape.
run_peers() { run_peer_script peers 450; }

# Flex compiled with max-autotune (~10-14 s of compile per shape, so one call
# holds ~40-50 cases: give each call a FILTER of our cases) beside ours, which
# is re-run on the same cases. Autotuned flex streams memory-bound verify and
# draft extend at the roofline, as ours does (NOTES.md, `FLEXAT`).
run_peers_autotuned() {  # filter
  run_peer_script peers_autotuned 540 --filter "$1" --flex-mode max-autotune-no-cudagraphs
}

run_ncu() {  # name filters...
  local name=$1 bench=ab/bench_$1; shift
  [[ $name == bundle ]] && bench=$bin/attention_kernel_paged_attention_benchmark
  local filter
  for filter in "$@"; do
    echo "== $filter"
    timeout 120 ncu --clock-control none --cache-control all \
      -k regex:'PagedAttentionKernel|MergeKernel' --launch-skip 6 --launch-count 3 \
      --metrics "${NCU_METRICS:-gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,smsp__inst_executed.sum}" \
      "$bench" --benchmark_filter="$filter" 2>&1 |
      grep -E '^  [a-zA-Z_].*\(|gpu__|dram__|lts__|smsp__' | cut -c1-150
  done > "$out/ncu_$name.txt"
  cat "$out/ncu_$name.txt"
}

run_sass() {  # name [regex]
  local name=$1 regex=${2:-PagedAttentionKernel|MergeKernel} bench=ab/bench_$1
  [[ $name == bundle ]] && bench=$bin/attention_kernel_paged_attention_benchmark
  if ! command -v cuobjdump > /dev/null; then echo "no cuobjdump on this machine"; return; fi
  cuobjdump -sass "$bench" | awk -v re="$regex" '/Function : / {keep = ($0 ~ re)} keep' \
    > "$out/sass_$name.txt"
  # One line per kernel: the template arguments of its mangled name, then counts.
  awk '/Function : / {
         if (name != "") print name, n, ldl, stl, bar, ldg
         name = $3; sub(/.*(PagedAttentionKernel|MergeKernel)I/, "", name); sub(/EEEvN.*/, "", name)
         n = ldl = stl = bar = ldg = 0
       }
       /\/\*[0-9a-f]+\*\// {n++}  # an address: 4 hex digits, 5 past 64 KB of code
       / LDL/ {ldl++} / STL/ {stl++} / BAR/ {bar++} / LDG/ {ldg++}
       END {if (name != "") print name, n, ldl, stl, bar, ldg}' "$out/sass_$name.txt" |
    (echo "kernel instructions LDL STL BAR LDG"; cat) | { column -t 2> /dev/null || cat; }
  xz -f "$out/sass_$name.txt"
}

# racecheck of the kernel tests, every hazard printed (the default stops at
# 100, which hid most of the sweep's reports).
run_racecheck() {
  # racecheck runs ~50x slower than the tests, so it takes its cases in
  # parts of their own, each under its own limit (one filter over the
  # whole sweep ended inside its bfloat16 half and never reached a float16
  # case), in this order: the kernel test's first targeted cases (skewed
  # batch, few workers with many segments, the decode and paired kernels
  # against the general one: 117 s on an H100, a part of 180 s), the
  # float16 sweep at three page sizes, the bfloat16 sweep at page 16, the
  # modes test's tree cases, the KV head pairs kernel's test, the GQA ratios
  # test (177 s on the H200: a part of 240 s, the third word), the member
  # pairs' test (two consumer warpgroups, their turns) and the kernel test's
  # later targeted cases (merges, empty rows and batches, repeated runs,
  # graph replay), which the first part's old 120 s limit never reached. A
  # part cut at its limit says so, and names the last case it reached.
  local late_cases="*FusedMerge*:*MergeKernel*:*RowsWithoutVisibleKeys*:*EmptyBatch*:*RepeatedRuns*:*GraphReplay*"
  local part binary filter part_limit_s limit_s racecheck_rc passed found
  local hazards=0 cut=0 unclean=0 parts=0 index=0
  for part in \
    "paged_attention_test PagedAttentionGpuTest.*-*VerifyOver128kKeys:*UnevenGqa*:*MemberPairs*:*KvHeadPairs*:$late_cases 180" \
    "paged_attention_test *Sweep*/float16_*_page1:*Sweep*/float16_*_page16:*Sweep*/float16_*_page256" \
    "paged_attention_test *Sweep*/bfloat16_*_page16" \
    "paged_attention_modes_test *TreeGpuTest.*:*TreeVerifyGpuTest.*" \
    "paged_attention_test PagedAttentionGpuTest.KvHeadPairs*" \
    "paged_attention_test PagedAttentionGpuTest.UnevenGqa* 240" \
    "paged_attention_test PagedAttentionGpuTest.MemberPairs* 240" \
    "paged_attention_test $late_cases 240"; do
    read -r binary filter part_limit_s <<< "$part"
    limit_s=${part_limit_s:-120}
    index=$((index + 1))
    # RACECHECK_PARTS="1 4 5" runs only those parts (1-based, in the order
    # above), so a call short of device time can split them over two calls.
    if [[ -n ${RACECHECK_PARTS:-} && " $RACECHECK_PARTS " != *" $index "* ]]; then continue; fi
    parts=$((parts + 1))
    echo "== racecheck $binary $filter"
    timeout $limit_s compute-sanitizer --tool racecheck --print-limit 100000 \
      $bin/attention_kernel_$binary --gtest_filter="$filter" > "$out/racecheck.log" 2>&1
    racecheck_rc=$?
    cat "$out/racecheck.log" >> "$out/racecheck_all.log"
    grep -E 'PASSED|FAILED|RACECHECK SUMMARY' "$out/racecheck.log"
    passed=$(grep -oE '^\[  PASSED  \] [0-9]+' "$out/racecheck.log" | grep -oE '[0-9]+$')
    if ((racecheck_rc == 124)); then
      cut=$((cut + 1))
      echo "racecheck cut at its $limit_s s limit; last case reached:" \
        "$(grep -E '^\[ RUN' "$out/racecheck.log" | tail -1 | cut -c14-)"
    elif ((racecheck_rc != 0 || ${passed:-0} == 0)); then
      # A filter that matches no case passes with 0 hazards, and so would a
      # binary that failed to start: neither may count as clean.
      unclean=$((unclean + 1))
      echo "racecheck part unclean: exit status $racecheck_rc, ${passed:-0} cases passed"
      tail -n 5 "$out/racecheck.log"
    fi
    found=$(grep -oE 'RACECHECK SUMMARY: [0-9]+ hazard' "$out/racecheck.log" | grep -oE '[0-9]+')
    hazards=$((hazards + ${found:-0}))
    # Each report: its first access's site, then the sites it races with
    # (a template function's site starts with its return type, "void").
    grep -oE '(Race reported between|and) [A-Za-z]+ access at (void )?[^ (<]+' "$out/racecheck.log" |
      sed 's/^Race reported between/race:/; s/^and/  with/' | sort | uniq -c
  done
  rm -f "$out/racecheck.log"
  # The gate: every consumer lane releases its own reads (WarpArrive), so the
  # kernels report no hazard; any is a finding (NOTES.md, Racecheck).
  echo "racecheck total: $hazards hazards, $cut of $parts parts cut at the limit," \
    "$unclean unclean (a failed case, no case run, or no start)"
}

# memcheck of the graph-replay stress test and the plan_batch dumps (eager,
# graph-replayed and tree batches) through check_dump.py
# (tools/check_dumps.sh): the part of `checks` that takes seconds (9 s on an
# H100), for a call without room for racecheck.
run_replay_and_dumps() {
  echo "== memcheck graph_replay_stress_test"
  STRESS_ITERATIONS=200 timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 \
    $bin/attention_kernel_graph_replay_stress_test --gtest_brief=1 2>&1 | tail -4
  echo "== check_dumps"
  bash tools/check_dumps.sh "$bin" "$(mktemp -d)"
}

run_checks() {
  {
    echo "== memcheck paged_attention_test"
    timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 \
      $bin/attention_kernel_paged_attention_test --gtest_brief=1 2>&1 | tail -3
    run_racecheck
    run_replay_and_dumps
  } > "$out/gpu_checks.txt" 2>&1
  cat "$out/gpu_checks.txt"
}

while (($#)); do
  step=$1; shift
  start=$SECONDS
  echo "=== $step"
  case $step in
    tests) run_tests ;;
    peers) run_peers ;;
    peers_autotuned)
      if ! (($#)) || is_step "$1"; then echo "peers_autotuned needs FILTER" >&2; exit 2; fi
      run_peers_autotuned "$1"; shift
      ;;
    checks) run_checks ;;
    dumps)
      run_replay_and_dumps > "$out/gpu_dumps.txt" 2>&1
      cat "$out/gpu_dumps.txt"
      ;;
    racecheck)
      run_racecheck > "$out/racecheck.txt" 2>&1
      cat "$out/racecheck.txt"
      ;;
    ab)
      args=()
      while (($#)) && ! is_step "$1"; do args+=("$1"); shift; done
      if ((${#args[@]} < 3)); then echo "ab needs ROUNDS FILTER NAME..." >&2; exit 2; fi
      run_ab "${args[@]}"
      ;;
    ncu)
      args=()
      while (($#)) && ! is_step "$1"; do args+=("$1"); shift; done
      if ((${#args[@]} < 2)); then echo "ncu needs NAME FILTER..." >&2; exit 2; fi
      run_ncu "${args[@]}"
      ;;
    sass)
      args=()
      while (($#)) && ! is_step "$1"; do args+=("$1"); shift; done
      if ((${#args[@]} < 1 || ${#args[@]} > 2)); then echo "sass needs NAME [REGEX]" >&2; exit 2; fi
      run_sass "${args[@]}"
      ;;
    *) echo "unknown step: $step (tests, ab, peers, peers_autotuned, checks, dumps, racecheck, ncu, sass)" >&2
       exit 2 ;;
  esac
  echo "=== $step: $((SECONDS - start)) s"
  if [[ -n ${GPU_SESSION_PACK:-} ]]; then
    tar -cJf "$GPU_SESSION_PACK" -C "$(dirname "$out")" "$(basename "$out")"
  fi
done
