# Sourced by the call scripts: `sanitize TOOL LIMIT_S BINARY FILTER TAG` runs
# compute-sanitizer over one test binary's filtered cases into
# $OUT/<tool>_<tag>.txt and prints its summary lines (rc 124: cut at LIMIT_S,
# the summary then covers the cases it reached).
sanitize() {
  timeout "$2" compute-sanitizer --tool "$1" --error-exitcode 3 "$3" --gtest_filter="$4" \
    > "$OUT/$1_$5.txt" 2>&1
  echo "$1 $5 $4 rc=$?"
  grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED) |^\[ RUN " "$OUT/$1_$5.txt" |
    sed 's/^\[ RUN .*/(cases started)/' | sort | uniq -c
}
