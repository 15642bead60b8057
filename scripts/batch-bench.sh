#!/usr/bin/env bash
# The batch benchmark of issue 15: N copies of a few 6000x4000 JPEGs through `gpulab-cli batch`,
# box r=15, JPEG out, on the GPU and with the codecs alone (--no-filter: the pipeline's limit in the
# same run), then the CPU baseline through the same pipeline, then a 10-image batch for the memory
# comparison, and one `filter` run whose output must equal the batch's byte for byte.
#   scripts/batch-bench.sh PHOTO_DIR WORK_DIR [N=200] [RSS_RUN]
# PHOTO_DIR holds p0.jpg p1.jpg ... (scripts/make-test-photo.cpp makes them); RSS_RUN is a wrapper
# that prints wall time and peak RSS (default /usr/bin/time -v).
set -u
photos=$1; work=$2; n=${3:-200}; rss=${4:-}
cli=${GPULAB_CLI:-build/app/cli/gpulab-cli}
measure() { if [ -n "$rss" ]; then "$rss" "$@"; else /usr/bin/time -f 'wall %e s, max RSS %M KiB' "$@"; fi; }
mapfile -t bases < <(ls "$photos"/p*.jpg)
rm -rf "$work"; mkdir -p "$work/in"
for ((i = 0; i < n; i++)); do cp "${bases[i % ${#bases[@]}]}" "$work/in/img$(printf %04d "$i").jpg"; done
echo "== $n images of $(du -sh "$work/in" | cut -f1) in $work/in"
run() { local name=$1; shift; echo "== $name: $*"; measure "$cli" batch "$@" 2>&1 | grep -v '^\[' ; }
run "codecs only" --no-filter --in "$work/in" --out "$work/none" --format jpg
run "gpu box r=15" --op box --radius 15 --in "$work/in" --out "$work/gpu" --format jpg --device gpu
run "codecs only, again" --no-filter --in "$work/in" --out "$work/none2" --format jpg
run "gpu box r=15, again" --op box --radius 15 --in "$work/in" --out "$work/gpu2" --format jpg --device gpu
run "gpu box r=15, 10 images" --op box --radius 15 --in "$work/in/img000*.jpg" --out "$work/gpu10" --format jpg --device gpu
run "cpu box r=15" --op box --radius 15 --in "$work/in" --out "$work/cpu" --format jpg --device cpu
echo "== filter, one image, GPU"
measure "$cli" filter --op box --radius 15 --in "$work/in/img0000.jpg" --out "$work/single.jpg" --device gpu
cmp "$work/single.jpg" "$work/gpu/img0000.jpg" && echo "filter output == batch output (byte for byte)"
echo "== filter, one image, CPU"
measure "$cli" filter --op box --radius 15 --in "$work/in/img0000.jpg" --out "$work/single-cpu.jpg" --device cpu
cmp "$work/single-cpu.jpg" "$work/cpu/img0000.jpg" && echo "CPU filter output == CPU batch output (byte for byte)"
