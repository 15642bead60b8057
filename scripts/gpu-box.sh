#!/usr/bin/env bash
# Packs a build for a GPU machine that has the CUDA toolkit and driver but none of gpulab's other
# dependencies: the executables (keeping their build/ paths, which the tests name) and the shared
# libraries they need (../shared/gpu-box/bundle.sh) into .box/. On the GPU machine, from the repo root:
#   scripts/gpu-check.sh          # unpacks .box, runs every test, compute-sanitizer and the benchmarks
# A whole build is more than one call carries: GPULAB_BOX_ONLY="test_a test_b gpulab-cli" packs a part
# (and only the libraries it needs). On a machine kept warm between calls the parts add up in build/:
# gpu-check.sh unpacks each newer .box over the last.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GPULAB_BUILD_DIR:-$root/build}
bundle=${GPULAB_BUNDLE_SH:-$root/../shared/gpu-box/bundle.sh}
mkdir -p "$root/.box"
mapfile -t exes < <(cd "$root" && find build -maxdepth 3 -type f -perm -u+x \( -path 'build/tests/test_*' -o -name gpulab-cli -o -name gpulab \) | sort)
[ ${#exes[@]} -gt 0 ] || { echo "gpu-box: nothing built in $build" >&2; exit 1; }
# GPULAB_BOX_ONLY="test_a gpulab-cli ...": pack only these executables (a part a call, when the whole
# build does not fit what one call carries; the libraries stay complete).
if [ -n "${GPULAB_BOX_ONLY:-}" ]; then
  mapfile -t exes < <(for e in "${exes[@]}"; do case " $GPULAB_BOX_ONLY " in *" $(basename "$e") "*) echo "$e" ;; esac; done)
  [ ${#exes[@]} -gt 0 ] || { echo "gpu-box: GPULAB_BOX_ONLY names nothing built" >&2; exit 1; }
fi
(cd "$root" && "$bundle" .box/libs.tar.xz "${exes[@]}")
# The executables go stripped of host symbols (GPULAB_BOX_STRIP=0 keeps them): a sanitizer's host
# backtrace then shows addresses, its device reports still name the kernel. Every executable embeds
# the same engine, kernels and CUDA runtime: a dictionary larger than many of them lets xz store
# those once. Measured (Nov 2026, 70 executables, 1.5 GB stripped): the 8 big filter suites 9.0 MB,
# the 45 CLI/engine suites with gpulab-cli 20.4 MB (their libraries, no Qt, 12.5 MB), the GUI suites
# with both programs and 4 filter suites 17.1 MB (all libraries 32.9 MB): more than one call
# carries (64 MiB with the tree), so pack a part a call with GPULAB_BOX_ONLY.
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
for e in "${exes[@]}"; do
  mkdir -p "$stage/$(dirname "$e")"
  if [ "${GPULAB_BOX_STRIP:-1}" = 1 ]; then strip -o "$stage/$e" "$root/$e"; else cp -p "$root/$e" "$stage/$e"; fi
done
(cd "$stage" && tar cf - "${exes[@]}" | xz -T1 --lzma2=preset=6,dict=384MiB > "$root/.box/bins.tar.xz")
du -ch "$root"/.box/*.tar.xz | tail -1
