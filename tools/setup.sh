#!/usr/bin/env bash
# Installs the Debian packages this repository builds with. A no-op when they
# are all installed already. Needs root (or sudo) only when something is missing.
# The CUDA Toolkit is not a Debian package: it must be at $CUDA_PATH
# (default /usr/local/cuda).
set -euo pipefail

PACKAGES=(
  bazel-bootstrap      # Bazel 4.2.3, WORKSPACE mode (see ../shared/ENVIRONMENT.md)
  g++
  libabsl-dev
  libgoogle-glog-dev
  libgtest-dev
  libgmock-dev
  libbenchmark-dev
  nlohmann-json3-dev   # JSON for the plan CLI
  clang-format         # tools/format.sh
  clang                # tools/fuzz.sh: libFuzzer targets (clang 14)
  libclang-rt-14-dev   # libFuzzer and the sanitizer runtimes for clang
  python3-matplotlib   # tools/dashboard.py: charts (Agg backend, PNG)
  python3-numpy        # tools/check_dump.py, run by //tools:plan_batch_test
  libbenchmark-tools   # tools/dashboard.py: Google Benchmark's compare.py for the regression view
  chromium             # //tools/dashboard:dashboard_test renders the page headless (DOM + screenshot)
  xz-utils             # tools/gpu_bundle.sh: the bundle as one .tar.xz
)

missing=()
for package in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

cuda_path="${CUDA_PATH:-/usr/local/cuda}"
if [[ ! -x "$cuda_path/bin/nvcc" ]]; then
  echo "setup: CUDA Toolkit not found: $cuda_path/bin/nvcc is missing (set CUDA_PATH)" >&2
  exit 1
fi
