#!/usr/bin/env bash
# Runs on the GPU machine, from the repo root, after scripts/gpu-box.sh packed .box/ here:
# every test binary, compute-sanitizer memcheck on the GPU tests, and the benchmarks.
# Deliberate API failures (the out-of-memory tests) are the tests' business: memcheck reports
# memory access errors and leaks. Logs go to $OUT (or out/). Usage: scripts/gpu-check.sh [tests] [sanitize] [bench] (default: all)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}; mkdir -p "$out"
cd "$root"
steps=${*:-tests sanitize bench}

# The test binaries name /work/main/... (this build's source dir): make that path point here.
if [ ! -e /work/main/resources ]; then mkdir -p /work && ln -sfn "$root" /work/main; fi
tar xJf .box/bins.tar.xz -C "$root"
export GPUBOX_ARCHIVE=$root/.box/libs.tar.xz
source <(tar xJf .box/libs.tar.xz -O gpubox/env.sh)
export PATH=/usr/local/cuda/bin:$PATH

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv | tee "$out/device.txt"
tests=$(ls build/tests/test_* | grep -v '\.' )

if [[ $steps == *tests* ]]; then
  : > "$out/tests.log"
  for t in $tests; do
    echo "=== $t" | tee -a "$out/tests.log"
    "$t" --gtest_brief=1 >> "$out/tests.log" 2>&1
    echo "exit $?" | tee -a "$out/tests.log"
    grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/tests.log" | tail -3
  done
  grep -E '^\[  FAILED|^\[  PASSED|^\[  SKIPPED|tests ran' "$out/tests.log" > "$out/tests-summary.txt"
fi

if [[ $steps == *sanitize* ]]; then
  : > "$out/sanitize.log"
  for t in $tests; do
    [[ $t == *test_gui* || $t == *test_cli* ]] && continue
    echo "=== memcheck $t" >> "$out/sanitize.log"
    compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 99 "$t" --gtest_brief=1 \
      ${GPULAB_SANITIZE_FILTER:+--gtest_filter=$GPULAB_SANITIZE_FILTER} >> "$out/sanitize.log" 2>&1
    echo "exit $?" >> "$out/sanitize.log"
  done
  grep -E '^=== |^exit |ERROR SUMMARY' "$out/sanitize.log"
fi

if [[ $steps == *bench* ]]; then
  cli=build/app/cli/gpulab-cli
  $cli info | tee "$out/info.txt"
  $cli bench --json "$out/bench.json" 2>&1 | tee "$out/bench.txt"
fi
