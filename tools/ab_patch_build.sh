#!/usr/bin/env bash
# Builds one A/B variant of the kernel from patches, for a device-tool
# carry, without a commit per variant (tools/ab_carry.sh builds commits in
# worktrees). Run from the repository root:
#
#   bash tools/ab_patch_build.sh NAME [--base REV] [--patch FILE]...
#        [--define FILE:MACRO=VALUE]... TARGET...
#
#   --base REV      build the kernel's sources as at REV (default HEAD), e.g.
#                   main's kernels before a change the checkout has
#   --patch FILE    git apply FILE on top (in order)
#   --define F:M=V  set `#define M ...` in F (a patch's macro) to V
#   TARGET          //attention/kernel targets: paged_attention_benchmark ->
#                   ab/bench_NAME, paged_attention_test -> ab/test_NAME,
#                   paged_attention_modes_test -> ab/modes_test_NAME (stripped)
#
# Only attention/kernel's source files are patched, in the working tree (the
# build reuses the checkout's Bazel cache), and they are put back at HEAD
# afterwards (also on failure): commit edits to them first. The index is not
# touched, and while they are patched git is told to skip them
# (--skip-worktree): a `git commit -a` run meanwhile once committed a
# variant's patch; now it commits none of it. NOTES.md beside them is never
# touched (a whole-directory checkout once wiped a session's uncommitted
# notes). Then pack the carry:
#   tar -cf - gpu_bundle ab | xz -9 -T2 > carry.tar.xz
set -euo pipefail
cd "$(dirname "$0")/.."
(($# >= 2)) || { sed -n 2,25p "$0"; exit 2; }
name=$1; shift
base=HEAD
patches=() defines=() targets=()
while (($#)); do
  case "$1" in
    --base) base=$2; shift 2 ;;
    --patch) patches+=("$2"); shift 2 ;;
    --define) defines+=("$2"); shift 2 ;;
    --*) echo "ab_patch_build.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
((${#targets[@]})) || { echo "ab_patch_build.sh: no TARGET" >&2; exit 2; }
mapfile -t sources < <(git ls-files 'attention/kernel/*.cu' 'attention/kernel/*.cuh' \
  'attention/kernel/*.cc' 'attention/kernel/*.h')
# A run killed before its restore leaves patched sources that git skips:
# make them visible again, so that the check below refuses them.
if git ls-files -v -- "${sources[@]}" | grep -q '^S'; then
  echo "ab_patch_build.sh: a cut-off run left kernel sources marked skip-worktree; unmarked" >&2
  git update-index --no-skip-worktree -- "${sources[@]}"
fi
if ! git diff --quiet HEAD -- "${sources[@]}"; then
  echo "ab_patch_build.sh: uncommitted edits to the kernel's sources; commit them first" >&2
  exit 1
fi
restore() {
  git update-index --no-skip-worktree -- "${sources[@]}"
  git restore --source=HEAD --worktree -- "${sources[@]}"
}
trap restore EXIT
git restore --source="$base" --worktree -- "${sources[@]}"
((${#patches[@]} == 0)) || git apply "${patches[@]}"
# (after the restore: git restore passes over skip-worktree paths)
git update-index --skip-worktree -- "${sources[@]}"
for define in ${defines[@]+"${defines[@]}"}; do
  file=${define%%:*} macro=${define#*:}
  grep -q "^#define ${macro%%=*} " "$file" ||
    { echo "ab_patch_build.sh: no '#define ${macro%%=*}' in $file" >&2; exit 1; }
  sed -i "s/^#define ${macro%%=*} .*/#define ${macro%%=*} ${macro#*=}/" "$file"
done
bazel build --config=bundle "${targets[@]/#/\/\/attention\/kernel:}"
mkdir -p ab
for target in "${targets[@]}"; do
  out=ab/${target/paged_attention_benchmark/bench}
  out=${out/paged_attention_test/test}; out=${out/paged_attention_modes_test/modes_test}_$name
  cp -f "bazel-bin/attention/kernel/$target" "$out" && chmod u+w "$out" && strip "$out"
done
echo "ab/*_$name built"
