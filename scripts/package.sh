#!/usr/bin/env bash
# Builds the Debian 12 package gpulab_<version>_<arch>.deb into build-package/packages/ (or
# $GPULAB_BUILD_DIR/packages): a Release build without the tests, CUDA code for the full default
# architecture list (sm_75 to sm_90 plus PTX) unless CUDAARCHS says otherwise, then `cpack -G DEB`.
# Then checks that the package's Depends (cmake/Packaging.cmake) names every Debian package that
# dpkg-shlibdeps finds for the packaged programs, the CUDA toolkit's libraries aside.
#   scripts/package.sh                  # every architecture (long: nvcc compiles each kernel 6 times)
#   CUDAARCHS=90 scripts/package.sh     # sm_90 only, for a quick local package
#   scripts/package.sh -DOPTION=VALUE   # further arguments go to cmake's configure step
# Install it with `sudo apt-get install ./build-package/packages/gpulab_*.deb`; the CUDA toolkit
# comes from NVIDIA (https://developer.nvidia.com/cuda-downloads), not from this package.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GPULAB_BUILD_DIR:-$root/build-package}

GPULAB_BUILD_DIR=$build "$root/scripts/build.sh" -DGPULAB_BUILD_TESTS=OFF "$@"
rm -rf "$build/packages"
(cd "$build" && cpack -G DEB >/dev/null)
debs=("$build"/packages/gpulab_*.deb)
[ "${#debs[@]}" -eq 1 ] && [ -f "${debs[0]}" ] || { echo "package: cpack made no single .deb in $build/packages" >&2; exit 1; }
deb=${debs[0]}

# dpkg-shlibdeps (dpkg-dev) on the programs as packaged, laid out as it expects: debian/<package>/.
command -v dpkg-shlibdeps >/dev/null || { echo "package: dpkg-shlibdeps is missing: apt-get install dpkg-dev" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/debian"
touch "$stage/debian/control"
dpkg-deb -R "$deb" "$stage/debian/gpulab"  # with DEBIAN/, where dpkg-shlibdeps finds the package root
programs=()
for program in "$stage"/debian/gpulab/usr/bin/*; do programs+=("-edebian/gpulab/usr/bin/${program##*/}"); done
found=$(cd "$stage" && dpkg-shlibdeps --ignore-missing-info -O "${programs[@]}" | sed -n 's/^shlibs:Depends=//p')
declared=$(dpkg-deb -f "$deb" Depends)
missing=()
for alternatives in $(echo "$found" | tr -d ' ' | tr ',' ' '); do
  name=${alternatives%%|*}
  name=${name%%(*}
  case $name in cuda-* | libcu* | libnv* | libnpp*) continue ;; esac  # NVIDIA's toolkit packages
  echo ", $declared," | grep -q "[, |]$name[ ,(]" || missing+=("$name")
done
if ((${#missing[@]})); then
  echo "package: $deb: Depends lacks ${missing[*]} (dpkg-shlibdeps: $found); add them in cmake/Packaging.cmake" >&2
  exit 1
fi

echo "$deb ($(du -h "$deb" | cut -f1)), Depends: $declared"
