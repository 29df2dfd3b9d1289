#!/usr/bin/env bash
# Builds every `gpu`-tagged test and every `benchmark`-tagged binary (plus the
# `bundle`-tagged tools) with --config=bundle and copies them, with every
# non-system shared library they need (per ldd), into gpu_bundle/ (git-ignored):
#
#   gpu_bundle/bin/            the binaries, named after their targets (attention_kernel_foo_test)
#   gpu_bundle/lib/            the .so files they need beyond glibc/libstdc++
#   gpu_bundle/run_tests.sh    runs every test binary; exits non-zero on any failure
#   gpu_bundle/run_benchmarks.sh [OUT_DIR]   runs every benchmark, JSON into OUT_DIR
#   gpu_bundle.tar.xz          all of the above in one file (git-ignored too)
#
# Copy (or `carry`) gpu_bundle/ to a machine with an NVIDIA GPU and run
# `bash gpu_bundle/run_tests.sh` there; no Bazel needed on that machine.
# Extra arguments go to bazel build (e.g. --define=cuda_archs=sm_80).
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/setup.sh

query='attr(tags, "\bgpu\b", tests(//...)) + attr(tags, "\bbenchmark\b", //...) + attr(tags, "\bbundle\b", //...)'
mapfile -t targets < <(bazel query --noshow_progress "$query" 2>/dev/null | sort)
if ((${#targets[@]} == 0)); then
  echo "gpu_bundle: no gpu/benchmark/bundle targets found" >&2
  exit 1
fi
bazel build --config=bundle "$@" "${targets[@]}"

bundle=gpu_bundle
rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib"
# The source the binaries were built from: HEAD, +uncommitted when tracked
# files differ from it. run_benchmarks.sh and tools/peer_benchmark.py stamp it
# into their JSON as git_revision, so a run's record names what it measured.
revision=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- 2>/dev/null || revision+="+uncommitted"
echo "$revision" > "$bundle/REVISION"
tests=() benchmarks=() tools=()
for target in "${targets[@]}"; do
  package=${target#//}; package=${package%%:*}; name=${target##*:}
  flat=$(echo "${package}_${name}" | tr '/' '_')
  cp "bazel-bin/${package}/${name}" "$bundle/bin/$flat"
  chmod u+w "$bundle/bin/$flat"
  tags=$(bazel query --noshow_progress "attr(tags, \"\\bbenchmark\\b\", $target)" 2>/dev/null || true)
  kind=$(bazel query --noshow_progress "kind(test, $target)" 2>/dev/null || true)
  if [[ -n "$kind" ]]; then tests+=("$flat")
  elif [[ -n "$tags" ]]; then benchmarks+=("$flat")
  else tools+=("$flat"); fi
  # Shared libraries outside glibc and the C++ runtime travel with the bundle.
  ldd "$bundle/bin/$flat" | awk '/=> \// {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libgcc_s.so*|libstdc++.so*) ;;
      *) cp -nL "$lib" "$bundle/lib/" ;;
    esac
  done
done

cat > "$bundle/run_tests.sh" <<RUNNER
#!/usr/bin/env bash
# Runs every GPU test binary of this bundle; exits non-zero if any fails.
# Extra arguments go to each test binary (e.g. --gtest_filter=...). A binary
# still running after TEST_TIMEOUT_S seconds (default 300; the slowest takes
# ~80 s on an H200) is killed and counts as failed, so a kernel that hangs
# costs minutes, not the whole device call.
cd "\$(dirname "\$0")"
export LD_LIBRARY_PATH="\$PWD/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
passed=0 failed=0 failures=()
for test in ${tests[*]}; do
  echo "=== \$test"
  if timeout -s KILL "\${TEST_TIMEOUT_S:-300}" ./bin/\$test --gtest_color=no "\$@"; then
    passed=\$((passed + 1))
  else
    failed=\$((failed + 1)); failures+=("\$test")
  fi
done
((failed)) && echo "failed: \${failures[*]}"
echo "\$passed passed, \$failed failed"
((failed == 0))
RUNNER

cat > "$bundle/run_benchmarks.sh" <<RUNNER
#!/usr/bin/env bash
# Runs every benchmark of this bundle, writing Google Benchmark JSON per binary
# into OUT_DIR (default: ./benchmark_results). Extra arguments go to each binary.
cd "\$(dirname "\$0")"
out_dir=\$(realpath -m "\${1:-benchmark_results}"); shift || true
mkdir -p "\$out_dir"
export LD_LIBRARY_PATH="\$PWD/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
status=0
for benchmark in ${benchmarks[*]}; do
  echo "=== \$benchmark"
  ./bin/\$benchmark --benchmark_out="\$out_dir/\$benchmark.json" --benchmark_out_format=json \\
    --benchmark_context=git_revision=$revision "\$@" || status=1
done
exit \$status
RUNNER
chmod +x "$bundle"/*.sh
# The same as one xz file (also git-ignored): ~4 MB where the folder is
# ~105 MB, because every binary that links the kernels carries the same
# fatbin, which xz -9's 64 MB window finds again across files (-6's 8 MB
# window found less: 16 MB; gzip: more still). It is what fits a 64 MiB
# transfer beside the source tree (~45 MB with the committed benchmark runs).
# On the GPU machine `tar -xJf gpu_bundle.tar.xz` (or `python3 -m tarfile -e
# gpu_bundle.tar.xz`) restores gpu_bundle/.
rm -f "$bundle.tar.gz" "$bundle.tar.xz"
tar -cf - "$bundle" | xz -T0 -9 > "$bundle.tar.xz"
echo "gpu_bundle: ${#tests[@]} tests, ${#benchmarks[@]} benchmarks, ${#tools[@]} tools, $(ls "$bundle/lib" | wc -l) libraries, $(du -sh "$bundle" | cut -f1) ($bundle.tar.xz $(du -sh "$bundle.tar.xz" | cut -f1))"
