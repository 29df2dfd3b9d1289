#!/usr/bin/env bash
# Builds what a device-tool call of A/B timings needs and packs it as the
# call's carry: the GPU bundle of one revision (tools/gpu_bundle.sh) and the
# benchmark binary (optionally the kernel test too) of each variant, each
# built at its own revision in a git worktree, so the checkout here is never
# switched (commits only: uncommitted changes are not built). Run from the
# repository root:
#
#   bash tools/ab_carry.sh [--bundle REV] [--prune] NAME=REV[+test]... [NAME=bundle]
#
#   --bundle REV   the revision of gpu_bundle/ (default HEAD); its tests run
#                  with gpu_session.sh's `tests` step
#   --prune        afterwards, remove the worktrees of every other revision
#                  with their Bazel output bases (~0.2-0.5 GB each); alone
#                  (`bash tools/ab_carry.sh --prune`), remove every worktree
#                  and build nothing
#   NAME=REV       ab/bench_NAME: the benchmark built at REV
#   NAME=REV+test  also ab/test_NAME: the kernel test built at REV
#   NAME=bundle    ab/bench_NAME runs the bundle's own benchmark
#
# Then carry.tar.xz (gpu_bundle/ and ab/, git-ignored) is ready for
#   run(carry=["carry.tar.xz"]): tar -xJf carry.tar.xz && bash tools/gpu_session.sh $OUT/r ab 5 FILTER NAME...
# Worktrees go under $AB_WORKTREES (default /tmp/ab_worktrees), one per
# revision, kept between runs: each has its own Bazel output base, so its
# first build compiles everything (~5 min on 2 cores) and later ones are
# incremental. Binaries of one name are replaced, others in ab/ are kept.
set -euo pipefail
cd "$(dirname "$0")/.."

bundle_rev=HEAD
prune=0
variants=()
while (($#)); do
  case "$1" in
    --bundle) bundle_rev=$2; shift 2 ;;
    --prune) prune=1; shift ;;
    *=*) variants+=("$1"); shift ;;
    *) echo "ab_carry.sh: unknown argument $1 (want NAME=REV[+test] or --bundle REV)" >&2; exit 2 ;;
  esac
done
((${#variants[@]} > 0 || prune)) ||
  { echo "ab_carry.sh: no NAME=REV given (or --prune alone)" >&2; exit 2; }

root=$PWD
trees=${AB_WORKTREES:-/tmp/ab_worktrees}
mkdir -p "$trees" ab
git worktree prune  # forget worktrees whose folders are gone (a fresh /tmp)

used_trees=()
# Removes every worktree under $trees but those in used_trees, with its Bazel
# output base (removing the folder alone would leave that behind).
prune_trees() {
  local old
  for old in "$trees"/*/; do
    old=${old%/}
    [[ -d $old && " ${used_trees[*]} " != *" $old "* ]] || continue
    (cd "$old" && bazel clean --expunge > /dev/null 2>&1) || true
    git worktree remove --force "$old"
    echo "pruned $(basename "$old")"
  done
}
if ((${#variants[@]} == 0)); then
  prune_trees
  exit 0
fi

# Sets `tree` to a worktree checked out at REV (detached), made if missing,
# and notes it in used_trees.
worktree_at() {
  local commit
  commit=$(git rev-parse --verify "$1^{commit}")
  tree="$trees/${commit:0:12}"
  used_trees+=("$tree")
  if [[ ! -d $tree ]]; then
    git worktree add --detach -q "$tree" "$commit" >&2
  fi
}

worktree_at "$bundle_rev"
echo "bundle at $(git -C "$tree" rev-parse --short HEAD)"
(cd "$tree" && bash tools/gpu_bundle.sh > "$tree/gpu_bundle.log" 2>&1) ||
  { tail -20 "$tree/gpu_bundle.log"; exit 1; }
(cd "$tree" && bazel shutdown)
rm -rf gpu_bundle
cp -a "$tree/gpu_bundle" gpu_bundle

for variant in "${variants[@]}"; do
  name=${variant%%=*} rev=${variant#*=} with_test=0
  if [[ $rev == *+test ]]; then rev=${rev%+test}; with_test=1; fi
  if [[ $rev == bundle ]]; then
    bash tools/ab_wrapper.sh "$name" bundle
    echo "$name: the bundle's benchmark"
    continue
  fi
  worktree_at "$rev"
  targets=(//attention/kernel:paged_attention_benchmark)
  ((with_test)) && targets+=(//attention/kernel:paged_attention_test)
  (cd "$tree" && bazel build --config=bundle "${targets[@]}" > "$tree/ab_build.log" 2>&1) ||
    { tail -20 "$tree/ab_build.log"; exit 1; }
  (cd "$tree" && bazel shutdown)  # one Bazel server per worktree would stay up, ~1 GB each
  rm -f "ab/bench_$name" "ab/test_$name"
  cp "$tree/bazel-bin/attention/kernel/paged_attention_benchmark" "ab/bench_$name"
  ((with_test)) && cp "$tree/bazel-bin/attention/kernel/paged_attention_test" "ab/test_$name"
  echo "$name: $(git -C "$tree" rev-parse --short HEAD)$( ((with_test)) && echo ' (+ kernel test)')"
done

if ((prune)); then prune_trees; fi

tar -cf - gpu_bundle ab | xz -9 -T2 > carry.tar.xz
echo "carry.tar.xz: $(du -h carry.tar.xz | cut -f1) (ab/: $(ls ab | tr '\n' ' '))"
