#!/usr/bin/env bash
# The README's second command: installs what is missing, builds, and runs every test.
# GPU tests skip with a reason on machines without a CUDA device.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GPULAB_BUILD_DIR:-$root/build}
"$root/scripts/build.sh"
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" --timeout 600
