#!/usr/bin/env bash
# Issue 17 on a machine with several GPUs (photo batches and the Lab), run from the folder
# /work/notes/to-device.sh made (build/ packed in .box). Needs .bench/make-test-photo built here:
#   g++ -O2 -std=c++20 -o .bench/make-test-photo scripts/make-test-photo.cpp
# Steps: the GPU tests of the batch and the lab parts, `lab matmul-multi` at 16384 f32 on every GPU
# and on one, `lab transfer` with the peer-to-peer rows, and two batches of generated 6000x4000
# photos with --gpus 1 and --gpus all: JPEG in and out with box r=15 and PPM in and out with a
# direct convolution (CONV=63 measured the codecs' limit on 2 H100s; CONV=127 loads the GPUs four
# times as much). summary.txt goes to $OUT; every log and JSON in $OUT/logs.tar.gz (the
# device tool brings back only a few files).
set -u
final=${OUT:-/tmp/out}; mkdir -p "$final"
out=$(mktemp -d)
trap 'cp "$out/summary.txt" "$final/" 2>/dev/null; tar czf "$final/logs.tar.gz" -C "$out" .' EXIT
export GPUBOX_ARCHIVE=$PWD/.box/libs.tar.xz
tar xJf .box/bins.tar.xz
source <(tar xJf .box/libs.tar.xz -O gpubox/env.sh)
export QT_QPA_PLATFORM=offscreen GPULAB_PACKED_BUILD=1
cli=build/app/cli/gpulab-cli
mkdir -p .bench
conv=${CONV:-63}  # side of the box-shaped convolution kernel of the PPM batch
awk -v n="$conv" 'BEGIN { for (y = 0; y < n; ++y) { for (x = 0; x < n; ++x) printf "%s%.9g", x ? " " : "", 1 / (n * n); print "" } }' \
  > .bench/k$conv.txt
{ nvidia-smi -L; nvidia-smi topo -m; nproc; free -g | head -2; } > "$out/device.txt" 2>&1

# Photos, made while the tests run: 4 distinct 6000x4000 images, 60 files of each kind.
mkdir -p /tmp/photos/ppm /tmp/photos/jpg
( for s in 1 2 3 4; do .bench/make-test-photo 6000 4000 $s /tmp/photos/p$s.ppm & done; wait
  $cli batch --no-filter --in '/tmp/photos/p*.ppm' --out /tmp/photos/j --format jpg --device cpu > "$out/photos.log" 2>&1
  for i in $(seq 0 59); do s=$((i % 4 + 1))
    cp /tmp/photos/p$s.ppm /tmp/photos/ppm/img$i.ppm; cp /tmp/photos/j/p$s.jpg /tmp/photos/jpg/img$i.jpg; done ) &
gen=$!

t0=$(date +%s)
for t in "test_batch --gtest_filter=BatchPipelines.*:Batch.Gpu*" "test_lab_matmul_multi" "test_lab_transfer" \
         "test_cli_batch --gtest_filter=CliBatch.Gpus*:CliBatch.Json*" \
         "test_lab_cli --gtest_filter=LabCli.MatmulMulti*" "test_lab_common --gtest_filter=LabSweepGpu.*"; do
  set -- $t; n=$1; shift
  timeout 60 build/tests/$n "$@" > "$out/$n.log" 2>&1
  echo "$n $* rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/$n.log" | tr '\n' ' ')" >> "$out/summary.txt"
done
echo "tests took $(( $(date +%s) - t0 )) s" >> "$out/summary.txt"

timeout 40 $cli lab matmul-multi --gpus all --sizes 16384 --dtype f32 --json "$out/matmul-all.json" > "$out/matmul-all.log" 2>&1
echo "matmul-multi all rc=$?" >> "$out/summary.txt"
timeout 25 $cli lab matmul-multi --gpus 1 --sizes 16384 --dtype f32 --json "$out/matmul-one.json" > "$out/matmul-one.log" 2>&1
echo "matmul-multi 1 rc=$?" >> "$out/summary.txt"
timeout 30 $cli lab transfer --sizes 1M,64M,256M --ops h2d,d2h,p2p_ab,p2p_ba --reps 5 --json "$out/transfer.json" > "$out/transfer.log" 2>&1
echo "transfer rc=$?" >> "$out/summary.txt"

wait $gen
ls /tmp/photos/jpg | wc -l >> "$out/summary.txt"
for g in 1 all; do
  rm -rf /tmp/o; timeout 30 $cli batch --op box --radius 15 --in /tmp/photos/jpg --out /tmp/o --format jpg --gpus $g \
    --json "$out/batch-jpg-$g.json" > "$out/batch-jpg-$g.log" 2>&1
  echo "batch jpg box --gpus $g rc=$?" >> "$out/summary.txt"
done
for g in 1 all; do
  rm -rf /tmp/o; timeout 40 $cli batch --op conv --kernel "$PWD/.bench/k$conv.txt" --method direct --in /tmp/photos/ppm \
    --out /tmp/o --gpus $g --json "$out/batch-ppm-$g.json" > "$out/batch-ppm-$g.log" 2>&1
  echo "batch ppm conv$conv --gpus $g rc=$?" >> "$out/summary.txt"
done

# compute-sanitizer memcheck on the several-pipeline GPU tests.
timeout 45 compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/test_batch \
  --gtest_filter='BatchPipelines.TwoPipelines*:BatchPipelines.AGpu*' > "$out/sanitize.log" 2>&1
echo "sanitize rc=$? $(grep -E 'ERROR SUMMARY' "$out/sanitize.log")" >> "$out/summary.txt"
