#!/usr/bin/env bash
# tools/ab_patch_build.sh in a scratch repository with a fake `bazel` that
# records what the build would see: the kernel sources as at --base with the
# patch and the define applied, invisible to git meanwhile (status, diff and
# `commit -a` see nothing to commit); afterwards the sources are HEAD's again
# and no longer skipped, also when the build fails; uncommitted edits are
# refused, and the leftovers of a run killed mid-build are unmarked and refused.
set -euo pipefail
script=$PWD/tools/ab_patch_build.sh
dir=$(mktemp -d "${TEST_TMPDIR:-/tmp}/ab_patch_build.XXXXXX")
export HOME=$dir GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t \
  GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
repo=$dir/repo
mkdir -p "$repo/tools" "$repo/attention/kernel" "$dir/bin"
cp "$script" "$repo/tools/"
cd "$repo"
git init -q .
printf '#define PA_PROBE 0\nint base_version = 1;\n' > attention/kernel/kernel.cuh
echo "notes" > attention/kernel/NOTES.md
git add -A && git commit -qm base
base=$(git rev-parse HEAD)
sed -i 's/base_version = 1/base_version = 2/' attention/kernel/kernel.cuh
git commit -qam head
cat > "$dir/probe.patch" <<'PATCH'
--- a/attention/kernel/kernel.cuh
+++ b/attention/kernel/kernel.cuh
@@ -2 +2,2 @@
 int base_version = 1;
+int patched = 1;
PATCH

# The fake build: what the sources and git look like while it runs.
cat > "$dir/bin/bazel" <<'FAKE'
#!/bin/sh
{
  echo "== build $*"
  cat attention/kernel/kernel.cuh
  echo "status: $(git status --porcelain | tr '\n' ' ')"
  git commit -qam "during the build" 2>&1 | sed 's/^/commit: /'
} >> "$FAKE_LOG"
[ "${FAKE_FAIL:-0}" = 1 ] && exit 1
mkdir -p bazel-bin/attention/kernel
cp /bin/true bazel-bin/attention/kernel/paged_attention_benchmark
FAKE
chmod +x "$dir/bin/bazel"
export PATH=$dir/bin:$PATH FAKE_LOG=$dir/build.log
fail() { echo "FAIL: $*"; cat "$FAKE_LOG" 2>/dev/null; exit 1; }
head_is_clean() {  # the checkout is HEAD's, nothing skipped, nothing committed meanwhile
  git diff --quiet HEAD || fail "sources not put back: $(git diff HEAD)"
  ! git ls-files -v | grep -q '^S' || fail "sources left skip-worktree"
  [[ $(git log --format=%s -1) == head ]] || fail "a commit during the build: $(git log --oneline -1)"
}

bash tools/ab_patch_build.sh P --base "$base" --patch "$dir/probe.patch" \
  --define attention/kernel/kernel.cuh:PA_PROBE=3 paged_attention_benchmark > "$dir/out" 2>&1 ||
  fail "the build failed: $(cat "$dir/out")"
grep -qx 'int base_version = 1;' "$FAKE_LOG" || fail "built without --base's sources"
grep -qx 'int patched = 1;' "$FAKE_LOG" || fail "built without the patch"
grep -qx '#define PA_PROBE 3' "$FAKE_LOG" || fail "built without the define"
grep -qx 'status: ' "$FAKE_LOG" || fail "git saw the patched sources during the build"
grep -q 'commit: .*nothing to commit' "$FAKE_LOG" || fail "commit -a during the build found something"
[[ -x ab/bench_P ]] || fail "ab/bench_P not written"
head_is_clean

: > "$FAKE_LOG"
if FAKE_FAIL=1 bash tools/ab_patch_build.sh F --base "$base" --patch "$dir/probe.patch" \
  paged_attention_benchmark > "$dir/out" 2>&1; then fail "a failed build exited 0"; fi
grep -qx 'int patched = 1;' "$FAKE_LOG" || fail "the failing build did not see the patch"
head_is_clean

echo "edit" >> attention/kernel/kernel.cuh
if bash tools/ab_patch_build.sh E paged_attention_benchmark 2> "$dir/err"; then
  fail "an uncommitted edit was built over"
fi
grep -q "commit them first" "$dir/err" || fail "no reason given: $(cat "$dir/err")"
git checkout -q -- attention/kernel/kernel.cuh

# A run killed mid-build: patched sources marked skip-worktree.
git update-index --skip-worktree -- attention/kernel/kernel.cuh
echo "int patched = 1;" >> attention/kernel/kernel.cuh
if bash tools/ab_patch_build.sh K paged_attention_benchmark 2> "$dir/err"; then
  fail "a cut-off run's patched sources were built over"
fi
grep -q "cut-off run" "$dir/err" || fail "the leftovers not named: $(cat "$dir/err")"
! git ls-files -v | grep -q '^S' || fail "leftovers still skip-worktree"
git diff --quiet HEAD && fail "the leftover patch is still invisible to git"
echo PASS
