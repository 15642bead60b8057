#!/usr/bin/env bash
# Installs what gpulab needs to build and test on Debian 12, and nothing already present.
# The CUDA toolkit is not a Debian package: it must already be at /usr/local/cuda (or on PATH).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  qt6-base-dev libgl-dev
  libopencv-core-dev libopencv-imgproc-dev
  libstb-dev libgtest-dev libcli11-dev nlohmann-json3-dev
  libopenblas-dev libmpfr-dev
  libturbojpeg0-dev libjpeg62-turbo-dev libspng-dev libtiff-dev zlib1g-dev
  clang-14 libclang-rt-14-dev  # scripts/fuzz.sh: libFuzzer, ASan and UBSan runtimes
  ccache  # scripts/sanitize.sh: the tsan build reuses the asan build's CUDA objects
  xvfb xauth fonts-dejavu-core
  libqt6svg6 desktop-file-utils appstream
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
