#!/usr/bin/env bash
# Installs what is missing, configures and builds gpulab into build/ (or $GPULAB_BUILD_DIR).
#   CUDAARCHS=90 scripts/build.sh      # one architecture, for quick builds and CI
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GPULAB_BUILD_DIR:-$root/build}

nvcc=$(command -v nvcc || true)
for candidate in "${CUDA_PATH:-}" "${CUDA_HOME:-}" /usr/local/cuda; do
  [ -z "$nvcc" ] && [ -n "$candidate" ] && [ -x "$candidate/bin/nvcc" ] && nvcc=$candidate/bin/nvcc
done
if [ -z "$nvcc" ]; then
  echo "gpulab: the CUDA toolkit is missing: install CUDA 12 or 13 from NVIDIA (https://developer.nvidia.com/cuda-downloads) so that /usr/local/cuda/bin/nvcc exists." >&2
  exit 1
fi

"$root/scripts/install-deps.sh"

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$nvcc" "$@" >/dev/null
cmake --build "$build" --parallel "$(nproc)"
