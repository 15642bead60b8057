#!/usr/bin/env bash
# Packs a build for a GPU machine that has the CUDA toolkit and driver but none of gpulab's other
# dependencies: the executables (keeping their build/ paths, which the tests name) and the shared
# libraries they need (../shared/gpu-box/bundle.sh) into .box/. On the GPU machine, from the repo root:
#   scripts/gpu-check.sh          # unpacks .box, runs every test, compute-sanitizer and the benchmarks
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GPULAB_BUILD_DIR:-$root/build}
bundle=${GPULAB_BUNDLE_SH:-$root/../shared/gpu-box/bundle.sh}
mkdir -p "$root/.box"
mapfile -t exes < <(cd "$root" && find build -maxdepth 3 -type f -perm -u+x \( -path 'build/tests/test_*' -o -name gpulab-cli -o -name gpulab \) | sort)
[ ${#exes[@]} -gt 0 ] || { echo "gpu-box: nothing built in $build" >&2; exit 1; }
(cd "$root" && "$bundle" .box/libs.tar.xz "${exes[@]}")
# Every executable embeds the same engine, kernels and CUDA runtime: a dictionary larger than the
# whole tar lets xz store them once (228 MB of binaries -> about 10 MB, within what a run carries).
(cd "$root" && tar cf - "${exes[@]}" | xz -T1 --lzma2=preset=6,dict=384MiB > .box/bins.tar.xz)
du -ch "$root"/.box/*.tar.xz | tail -1
