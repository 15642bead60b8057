#!/usr/bin/env bash
# The README's first command: installs what is missing, builds, and starts the GUI on the bundled
# photo. Without a display it says so and runs the headless demo through gpulab-cli instead.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GPULAB_BUILD_DIR:-$root/build}
photo=$root/resources/photos/coffee.png
"$root/scripts/build.sh"

if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
  exec "$build/app/gui/gpulab" "$photo"
fi

echo "gpulab: no display (DISPLAY and WAYLAND_DISPLAY are unset): running the headless demo instead."
cli=$build/app/cli/gpulab-cli
out=$(mktemp -d)
"$cli" info
devices=(cpu)
"$cli" info --json | grep -q '"cuda_available": true' && devices=(gpu cpu)
for device in "${devices[@]}"; do
  echo "--- $device, $(basename "$photo")"
  "$cli" filter --op box --radius 7 --in "$photo" --out "$out/box-$device.png" --device "$device"
  "$cli" filter --op sobel --in "$photo" --out "$out/sobel-$device.png" --device "$device"
done
echo "results in $out"
