#!/usr/bin/env bash
# The GPU machine side of the batch benchmark (issue 15), run from the folder to-device.sh made:
# needs .bench/make-test-photo and .bench/rss-run built here first:
#   g++ -O2 -std=c++20 -o .bench/make-test-photo scripts/make-test-photo.cpp; g++ -O2 -o .bench/rss-run scripts/rss-run.cpp
set -u
out=${OUT:-/tmp/out}; mkdir -p "$out"
export GPUBOX_ARCHIVE=$PWD/.box/libs.tar.xz
tar xJf .box/bins.tar.xz
source <(tar xJf .box/libs.tar.xz -O gpubox/env.sh)
{ nvidia-smi -L; nproc; free -g | head -2; df -h /tmp | tail -1; } > "$out/device.txt" 2>&1
mkdir -p /tmp/photos
( for s in 1 2 3 4; do .bench/make-test-photo 6000 4000 $s /tmp/photos/p$s.ppm & done; wait
  build/app/cli/gpulab-cli batch --no-filter --in '/tmp/photos/*.ppm' --out /tmp/photos/jpg --format jpg --device cpu > "$out/photos.log" 2>&1
  for s in 1 2 3 4; do mv /tmp/photos/jpg/p$s.jpg /tmp/photos/p$((s-1)).jpg; done ) &
gen=$!
for t in test_batch test_codecs test_image_io test_cli_batch test_core; do
  timeout 100 build/tests/$t > "$out/$t.log" 2>&1; echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/$t.log" | tr '\n' ' ')" >> "$out/summary.txt"
done
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/test_batch --gtest_filter='Batch.Gpu*' > "$out/sanitize.log" 2>&1
echo "sanitize rc=$? $(grep -E 'ERROR SUMMARY' "$out/sanitize.log")" >> "$out/summary.txt"
wait $gen
timeout 130 scripts/batch-bench.sh /tmp/photos /tmp/bench 200 .bench/rss-run > "$out/bench.log" 2>&1
echo "bench rc=$?" >> "$out/summary.txt"
