#!/usr/bin/env bash
# Runs on the GPU machine, from the repo root, after scripts/gpu-box.sh packed .box/ here:
# every test binary, the compute-sanitizer tools on the GPU tests, the soak and the benchmarks.
# Logs go to $OUT (or out/), one folder per step, packed into logs.tar.gz.
#   scripts/gpu-check.sh [tests] [sanitize] [racecheck] [synccheck] [initcheck] [soak] [bench] [deep] [shots] [tiles]
# (default: tests sanitize bench deep shots tiles), in the order of this file.
#
# The compute-sanitizer steps run every test binary's *Gpu* tests (with --target-processes all, so the
# gpulab-cli and gpulab children of the CLI and GUI suites are checked too), GPULAB_SANITIZER_JOBS
# shards at a time (default 12), each under a time limit, and write $OUT/<step>-summary.txt (a line per binary: exit, the tool's ERROR SUMMARY,
# the GoogleTest totals, seconds) and $OUT/<step>-errors.txt (the first reports):
#   sanitize   memcheck with leak check. Deliberate API failures (the out-of-memory tests) are the
#              tests' business: memcheck reports memory access errors and leaks, not API errors.
#   racecheck  shared-memory data races (hazards between threads of a block).
#   synccheck  illegal __syncthreads/__syncwarp use (divergent barriers, bad masks).
#   initcheck  device global memory read before it was written (cudaMalloc'd buffers are not zeroed).
# Per tool: GPULAB_<TOOL>_FILTER (a GoogleTest filter, default *Gpu*; GPULAB_SANITIZE_FILTER for
# memcheck), GPULAB_<TOOL>_TIMEOUT (seconds a binary, default 460) and GPULAB_SANITIZER_STEP_SECONDS
# (the whole step, default 470: binaries not reached by then are listed as not run).
# soak: `gpulab-cli soak` (GPULAB_SOAK_RUNS filter runs, default 1000) and the GUI zoom soak
# (test_soak_gui, GPULAB_SOAK_FRAMES frames, default 10000) with host and GPU memory, each stopped after
# GPULAB_SOAK_SECONDS (default 85); $OUT/soak.txt.
# On a machine with several GPUs the test and shard processes are spread over them (one GPU each, round
# robin; GPULAB_ALL_GPU_TESTS see them all), so a sweep finishes that many times sooner.
# GPULAB_ONLY="test_a test_b" limits the tests and sanitizer steps to those binaries. GPULAB_LOGS=DIR keeps
# the logs in DIR, and a sanitizer step run again with the same DIR skips the shards that ran to their
# end (a tool's sweep spread over several calls; on a fresh machine, GPULAB_RESUME=FILE takes the
# logs.tar.gz of the last call, carried along). Shards hold GPULAB_SANITIZER_SHARD_TESTS tests (default 40), fewer for the binaries named in
# GPULAB_SANITIZER_FINE_SHARDS ("binary:tests ...", default: the ones slow under every tool).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}; mkdir -p "$out"
logs=${GPULAB_LOGS:-$(mktemp -d)}  # GPULAB_LOGS=DIR: keep the logs there (a later call resumes)
mkdir -p "$logs"
# GPULAB_RESUME=FILE: the logs.tar.gz an earlier call brought back, carried here: the sanitizer shards
# it ran to their end are not run again (a sweep across calls that each get a fresh machine).
if [ -n "${GPULAB_RESUME:-}" ]; then
  resumed=$(mktemp -d)
  tar xzf "$GPULAB_RESUME" -C "$resumed"
  for step in sanitize racecheck synccheck initcheck; do
    if [ -d "$resumed/$step" ]; then mkdir -p "$logs/$step" && cp -n "$resumed/$step"/*.log "$logs/$step"/ 2>/dev/null; fi
  done
  rm -rf "$resumed"
fi
cd "$root"
steps=${*:-tests sanitize bench deep shots tiles}

# The test binaries name /work/main/... (this build's source dir): make that path point here.
if [ ! -e /work/main/resources ]; then mkdir -p /work && ln -sfn "$root" /work/main; fi
# Unpacked once: several gpu-check.sh (one step each) may run side by side in this tree.
(
  flock 9
  if [ ! -e build/.unpacked ] || [ .box/bins.tar.xz -nt build/.unpacked ]; then
    tar xJf .box/bins.tar.xz -C "$root" && touch build/.unpacked
  fi
) 9> "$root/.box/unpack.lock"
export GPUBOX_ARCHIVE=$root/.box/libs.tar.xz
# The bundle's env.sh unpacks the libraries into /tmp/gpubox each time it is sourced: several
# gpu-check.sh side by side would overwrite libraries that running tests have mapped. Unpack once
# (under a lock), then take only its settings.
(
  flock 9
  if [ ! -e /tmp/gpubox/.unpacked ] || [ .box/libs.tar.xz -nt /tmp/gpubox/.unpacked ]; then
    tar xJf .box/libs.tar.xz -C /tmp && touch /tmp/gpubox/.unpacked
  fi
) 9> /tmp/gpubox.lock
source <(tar xJf .box/libs.tar.xz -O gpubox/env.sh | sed '/tar xJf/d')
export PATH=/usr/local/cuda/bin:$PATH QT_QPA_PLATFORM=offscreen
export GPULAB_PACKED_BUILD=1  # built elsewhere: tests that compare the build with this tree skip

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv | tee "$out/device.txt"
tests=$(ls build/tests/test_* | grep -v '\.')
# The soak tests read the whole device's memory: they run alone, in the soak step, not beside the others.
suites=$(printf '%s\n' $tests | grep -v '/test_soak_')
# GPULAB_ONLY="test_a test_b ...": only these binaries (a build packed in parts, one part a call).
if [ -n "${GPULAB_ONLY:-}" ]; then
  suites=$(for t in $suites; do case " $GPULAB_ONLY " in *" $(basename "$t") "*) echo "$t" ;; esac; done)
fi
# A boundary point of seahorse valley good to 1e-102 (the deep benchmark's, engine/src/mandelbrot/deep_bench_views.cpp).
sx=-0.74361188847330224914444350843275271654387781715973313695436280182213037747031080759132550809537224388507262848072074461608
sy=0.131837002394806472849310458452438856417046191888077007404889544934349771337518486837307510297873928251456528894582019421000
jobs=${GPULAB_JOBS:-6}
# The value for binary $2 in a list of "binary:value" pairs $1, else $3.
pair_value() { local v=$3 f; for f in $1; do [ "${f%%:*}" = "$2" ] && v=${f#*:}; done; echo "$v"; }
# GoogleTest's brief output (--gtest_brief=1) prints a line a failing test and no failed total.
failed_count() { local n; n=$(grep -c '^\[  FAILED  \] [A-Za-z_]' "$1"); [ "$n" -gt 0 ] && echo "[  FAILED  ] $n"; }
# Several GPUs (a multi-GPU machine): test processes are spread over them, one GPU each by its xargs
# slot (CUDA_VISIBLE_DEVICES), so N GPUs run N times the shards; the binaries that test several GPUs
# (GPULAB_ALL_GPU_TESTS) always see every GPU. GPULAB_GPUS=1 keeps every process on all GPUs.
gpus=${GPULAB_GPUS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')}
[ "$gpus" -ge 1 ] 2>/dev/null || gpus=1
all_gpu_tests=${GPULAB_ALL_GPU_TESTS:-test_multi_gpu test_lab_matmul_multi test_lab_transfer test_lab_studies test_lab_studies_cli test_mandelbrot_gui test_course_gui}
# Prints the CUDA_VISIBLE_DEVICES setting for binary $1 in xargs slot $2 (nothing: every GPU).
gpu_for() {
  [ "$gpus" -gt 1 ] || return 0
  case " $all_gpu_tests " in *" $1 "*) return 0 ;; esac
  echo "CUDA_VISIBLE_DEVICES=$(($2 % gpus))"
}
export -f gpu_for; export gpus all_gpu_tests

if [[ $steps == *tests* ]]; then
  mkdir -p "$logs/tests"
  # GPULAB_TEST_SHARDS ("binary:shards ..."): the largest tables run as that many GoogleTest shards side by
  # side (test_box_blur's ~7800 tests as one process did not finish in 9 minutes beside other work;
  # test_fft_filter alone ran past 150 s).
  for t in $suites; do
    k=$(pair_value "${GPULAB_TEST_SHARDS:-test_box_blur:8 test_morphology:2 test_median:2 test_sobel:2 test_fft_filter:4}" "$(basename "$t")" 1)
    for ((i = 0; i < k; i++)); do echo "$t $k $i"; done
  done | xargs -P "$jobs" --process-slot-var=GPULAB_SLOT -I{} bash -c '
    set -- {}; t=$1; k=$2; i=$3; n=$(basename $t); log='"$logs"'/tests/$n.log
    [ "$k" -gt 1 ] && log='"$logs"'/tests/$n.$i.log
    env $(gpu_for $n $GPULAB_SLOT) GTEST_TOTAL_SHARDS=$k GTEST_SHARD_INDEX=$i timeout 540 $t --gtest_brief=1 > $log 2>&1
    echo "exit $?" >> $log'
  for f in "$logs"/tests/*.log; do
    printf '%-28s %s | %s\n' "$(basename "$f" .log)" "$(tail -1 "$f")" \
      "$(grep -E '^\[  (PASSED|SKIPPED) *\] [0-9]+ test' "$f" | tr '\n' ' ')$(failed_count "$f")"
  done | tee "$out/tests-summary.txt"
  grep -h -B3 -A12 '^\[  FAILED  \]' "$logs"/tests/*.log | head -150 > "$out/failures.txt"
fi

# The soak (before the sanitizers, alone on the GPU): 1000 CLI filter runs in one process and 10000 GUI zoom frames (the Mandelbrot tab offscreen),
# host RSS and GPU memory sampled, with a flat-memory verdict each; nothing else on the GPU meanwhile
# (the GPU figure is the device's used memory).
if [[ $steps == *soak* ]]; then
  soak_s=${GPULAB_SOAK_SECONDS:-85}  # a limit for each of the two: the step stays under 3 minutes
  {
    echo "== gpulab-cli soak --runs ${GPULAB_SOAK_RUNS:-1000}"
    timeout "$soak_s" build/app/cli/gpulab-cli soak --runs "${GPULAB_SOAK_RUNS:-1000}"; echo "exit $?"
    echo "== test_soak_gui, ${GPULAB_SOAK_FRAMES:-10000} frames"
    GPULAB_SOAK_FRAMES=${GPULAB_SOAK_FRAMES:-10000} GPULAB_SOAK_CANVAS=${GPULAB_SOAK_CANVAS:-480x270} \
      GPULAB_SOAK_TIMEOUT_MS=$(((soak_s - 15) * 1000)) timeout "$soak_s" build/tests/test_soak_gui --gtest_brief=1
    echo "exit $?"
  } > "$out/soak.txt" 2>&1
  cat "$out/soak.txt"
fi

# One compute-sanitizer tool over every binary's GPU tests. Each binary's matching tests are split into
# GoogleTest shards of about GPULAB_SANITIZER_SHARD_TESTS tests (default 40), and the shards of all
# binaries run GPULAB_SANITIZER_JOBS at a time (default 12), largest binaries first, so the big filter
# tables finish inside one call. GPULAB_UNDER_SANITIZER=<step> tells the tests that time things that the
# tool's slowdown makes their timing meaningless (they still run their GPU work; see gpu_test.hpp).
# Every sanitizer step leaves out *GpuFaultRecovery* and *GpuFaultRelaunch*: those tests launch a kernel
# that faults on purpose (an illegal address, to prove the engine resets the device and goes on, or that
# the programs restart themselves), which every tool would report; the tests step checks them instead.
sanitizer_step() {  # step tool-arguments...
  local step=$1 filter_var timeout_var filter timeout per
  shift
  filter_var=GPULAB_$(echo "$step" | tr '[:lower:]' '[:upper:]')_FILTER
  timeout_var=GPULAB_$(echo "$step" | tr '[:lower:]' '[:upper:]')_TIMEOUT
  filter=${!filter_var:-*Gpu*}
  timeout=${!timeout_var:-460}
  per=${GPULAB_SANITIZER_SHARD_TESTS:-40}
  # Binaries whose tests are slow under every tool get smaller shards, "binary:tests" pairs. Measured
  # on H100s: test_fft_range's 33 tests in one shard ran past 195-257 s under all four tools,
  # test_transfers' 8 tests took 185-216 s; test_conv_method's 30 took 96-405 s and ran past 457 s
  # under racecheck, test_fft_conv's second 24 took 407 s there (its GPU calibration alone 164 s).
  # test_filters_gui's GPU tests calibrate the convolution cost model: one a shard.
  local finer=${GPULAB_SANITIZER_FINE_SHARDS:-test_fft_range:4 test_transfers:1 test_conv_method:3 test_fft_conv:6 test_filters_gui:1}
  # The whole step ends by GPULAB_SANITIZER_STEP_SECONDS (default 470): a shard starting later gets
  # what is left (and is not run once under 10 s are left), so its summary is always written.
  local deadline=$(($(date +%s) + ${GPULAB_SANITIZER_STEP_SECONDS:-470}))
  # Also left out: *OnHost* tests (a GPU kernel's block code emulated on the CPU: no GPU work to check).
  case $filter in *-*) filter="$filter:*GpuFaultRecovery*:*GpuFaultRelaunch*:*OnHost*" ;;
    *) filter="$filter-*GpuFaultRecovery*:*GpuFaultRelaunch*:*OnHost*" ;; esac
  mkdir -p "$logs/$step"
  local started=$SECONDS t n count shards i p f
  # "count binary shards index" lines, the binaries with the most tests first.
  for t in $suites; do
    n=$(basename "$t")
    count=$("$t" --gtest_list_tests --gtest_filter="$filter" 2>/dev/null | grep -c '^  ')
    if [ "$count" -eq 0 ]; then
      printf 'no test matches %s\nexit 0 (0 s)\n' "$filter" > "$logs/$step/$n.log"; continue; fi
    p=$(pair_value "$finer" "$n" "$per")
    shards=$(((count + p - 1) / p))
    for f in "$logs/$step/$n".*.log; do  # a resumed sweep's logs of shards this sharding no longer has
      i=${f##*/"$n".}; i=${i%.log}
      [[ $i =~ ^[0-9]+$ ]] && [ "$i" -ge "$shards" ] && rm -f "$f"
    done
    for ((i = 0; i < shards; i++)); do echo "$count $t $shards $i"; done
  done | sort -k1,1nr -s | cut -d' ' -f2- |
    GPULAB_STEP_NAME=$step GPULAB_STEP_LOGS=$logs/$step GPULAB_STEP_FILTER=$filter GPULAB_STEP_TIMEOUT=$timeout GPULAB_STEP_DEADLINE=$deadline \
    xargs -P "${GPULAB_SANITIZER_JOBS:-12}" --process-slot-var=GPULAB_SLOT -I{} bash -c '
     line=$1; shift; set -- $line "$@"; t=$1; shards=$2; i=$3; shift 3; n=$(basename $t); log=$GPULAB_STEP_LOGS/$n.$i.log
     # Resuming (GPULAB_LOGS kept from an earlier call): a shard that ran to its end is not run again,
     # if it was the same shard (the same count of shards: a shard size changed since means other tests).
     if [ -f $log ] && tail -1 $log | grep -Eq "^exit [0-9]+ .*, shard $((i + 1))/$shards\)$" && ! tail -1 $log | grep -q "^exit 124 "; then exit 0; fi
     s=$(date +%s); left=$((GPULAB_STEP_DEADLINE - s)); limit=$GPULAB_STEP_TIMEOUT
     if [ "$left" -lt 10 ]; then echo "exit - (not run: the step ran out of time)" > $log; exit 0; fi
     [ "$left" -lt "$limit" ] && limit=$left
     env $(gpu_for $n $GPULAB_SLOT) GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i GPULAB_UNDER_SANITIZER=$GPULAB_STEP_NAME timeout $limit \
       compute-sanitizer "$@" --error-exitcode 99 $t --gtest_brief=1 --gtest_filter="$GPULAB_STEP_FILTER" > $log 2>&1
     echo "exit $? ($(( $(date +%s) - s )) s, shard $((i + 1))/$shards)" >> $log' _ {} "$@"
  {
    echo "# compute-sanitizer $* over --gtest_filter='$filter' in shards of ~$per tests ($finer)," \
      "${GPULAB_SANITIZER_JOBS:-12} at a time, $timeout s a shard at most (exit 124: stopped there), step $((SECONDS - started)) s"
    for f in "$logs/$step"/*.log; do
      printf '%-28s %-34s | %s | %s\n' "$(basename "$f" .log)" "$(tail -1 "$f")" \
        "$(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$f" | tail -1)" \
        "$(grep -E '^\[  (PASSED|SKIPPED) *\] [0-9]+ test' "$f" | tr '\n' ' ')$(failed_count "$f")"
    done
    # Totals: shards that ended with exit 0, tests passed, errors reported.
    # A binary whose matching tests make no CUDA call ends with compute-sanitizer's "Target application
    # terminated before first instrumented API call" and exit 255: nothing for the tool to check.
    cat "$logs/$step"/*.log | awk -v step="$step" '
      /^exit 0 /{ok++} /^exit /{all++} /terminated before first instrumented API call/{none++}
      /^\[  PASSED  \] [0-9]+ test/{p+=$4} /^\[  SKIPPED \] [0-9]+ test/{k+=$4} /^\[  FAILED  \] [A-Za-z_]/{f++}
      /ERROR SUMMARY: [0-9]+ error/{e+=$4} /RACECHECK SUMMARY: [0-9]+ hazard/{e+=$4}
      END{printf "TOTAL %s: %d of %d runs exit 0, %d made no CUDA call; tests passed %d, skipped %d, failed %d; tool errors (racecheck: hazards) %d\n", step, ok, all, none, p, k, f, e}'
  } | tee "$out/$step-summary.txt"
  for f in "$logs/$step"/*.log; do
    if grep -q '^========= [A-Z]' "$f" && ! grep -Eq '(ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards|terminated before first instrumented API call)' "$f"; then
      echo "=== $(basename "$f" .log)"
      grep -m 60 '^=========' "$f"
    fi
  done > "$out/$step-errors.txt"
}

[[ $steps == *sanitize* ]] && sanitizer_step sanitize --target-processes all --tool memcheck --leak-check full --report-api-errors no
[[ $steps == *racecheck* ]] && sanitizer_step racecheck --target-processes all --tool racecheck --racecheck-report hazard
[[ $steps == *synccheck* ]] && sanitizer_step synccheck --target-processes all --tool synccheck
[[ $steps == *initcheck* ]] && sanitizer_step initcheck --target-processes all --tool initcheck

if [[ $steps == *bench* ]]; then
  mkdir -p "$logs/bench"
  cli=build/app/cli/gpulab-cli
  {
    $cli info
    $cli bench --json "$logs/bench/bench.json"
    $cli fft --bench --size 4096
    $cli mandelbrot --bench --json "$logs/bench/mandel.json"
    $cli lab matmul --sizes 4096 --reps 10 --json "$logs/bench/mm32.json"
    $cli lab matmul --sizes 4096 --reps 10 --dtype f64 --json "$logs/bench/mm64.json"
    $cli lab transpose --sizes 8192 --reps 20
    $cli lab transfer --json "$logs/bench/transfer.json"
    $cli lab elementwise --sizes 1M,4M,16M,256M --impl gpu
    $cli lab custom --expr "y = sin(x)*2 + sqrt(abs(x))" --size 16M --reps 20 --no-disk-cache
    $cli lab pool --reps 2
    $cli lab timing
  } > "$out/bench.txt" 2>&1
  cat "$out/bench.txt"
fi

# Deep zoom beyond `mandelbrot --bench`'s rows: escape time against forced perturbation where both
# work (1e-10), the CPU render of the 1e-100 view on all cores, and an 8K still at 1e-10000 (the
# reference orbit included in the wall time) into $out.
if [[ $steps == *deep* ]]; then
  cli=build/app/cli/gpulab-cli
  deepy="0.$(printf '9%.0s' $(seq 10000))8"  # 2e-10001 below c = i, a Misiurewicz point
  {
    for p in f64 perturbation; do
      $cli mandelbrot --device gpu --center "$sx,$sy" --width 1e-10 --precision $p --reps 20 --out "$logs/deep-1e-10-$p.png"
    done
    $cli mandelbrot --device gpu --center "$sx,$sy" --width 1e-100 --iters 20000 --reps 20 --out "$out/deep-1e-100.png"
    $cli mandelbrot --device gpu --center "$sx,$sy" --width 1e-100 --iters 20000 --no-bla --reps 5 --out "$logs/nobla.png"
    $cli mandelbrot --device cpu --center "$sx,$sy" --width 1e-100 --iters 20000 --reps 1 --out "$logs/deep-cpu.png"
    start=$(date +%s%N)
    $cli mandelbrot --device gpu --center "0,$deepy" --width 1e-10000 --size 7680x4320 --iters 100000 --density 8 \
      --reps 1 --out "$logs/deep-8k-1e-10000.png"
    echo "8K still at 1e-10000, reference, frame, colouring and PNG included: $((($(date +%s%N) - start) / 1000000)) ms wall"
    rm -f "$logs"/*.png  # 4 to 20 MB each: more than the logs may carry back
    $cli mandelbrot --device gpu --center "0,$deepy" --width 1e-10000 --size 1920x1080 --iters 100000 --density 8 \
      --reps 10 --out "$out/deep-1e-10000.png"
  } > "$out/deep.txt" 2>&1
  cat "$out/deep.txt"
fi

# Screenshots of the GUI on this GPU (offscreen) into $out/shots.tar, the Mandelbrot zoom frame
# rate at 1920x1080 into shots.txt, and the 8K still.
if [[ $steps == *shots* ]]; then
  shots=$logs/shots; mkdir -p "$shots"  # at most 8 files come back: the small ones as one tar
  gui=build/app/gui/gpulab
  {
    $gui --size 1400x900 --tab FFT --screenshot "$shots/fft-tab.png"
    $gui --size 1400x900 --tab Mandelbrot --screenshot "$shots/mandelbrot-tab.png"
    $gui --size 1400x900 --tab Mandelbrot --mandelbrot-center "$sx,$sy" --mandelbrot-width 1e-100 \
      --screenshot "$shots/mandelbrot-deep.png"
    for e in matmul:32..4096 transpose:256..8192 transfer:4K..256M elementwise:1K..64M reduce:1K..64M; do
      timeout 300 $gui --size 1920x1080 --screenshot "$shots/lab-${e%%:*}.png" --lab-experiment "${e%%:*}" \
        --lab-sizes "${e#*:}" --lab-with-copies --lab-run || echo "lab-${e%%:*} failed"
    done
    GPULAB_TEST_SCREENSHOTS=$shots build/tests/test_filters_gui --gtest_filter='*MainWindow*' --gtest_brief=1
    $gui --zoom-benchmark 400 --size 1920x1080
    $gui --zoom-benchmark 400 --size 1920x1080 --zoom-rate 0
    build/app/cli/gpulab-cli mandelbrot --device gpu --size 7680x4320 --center -1.7548776662,0 --width 0.05 \
      --density 0.2 --offset 0.55 --out "$out/mandelbrot-8k.png"
  } > "$out/shots.txt" 2>&1
  tar cf "$out/shots.tar" -C "$shots" .
  cat "$out/shots.txt"
fi
# Images bigger than the GPU: a 16384x16384 f32 image under --gpu-memory-limit 512M against the same
# run uncapped, in process for box, Sobel, direct and FFT convolution (max difference, tiles, timings,
# measured peak), then through gpulab-cli (the files compared byte for byte); the FFT low-pass through
# gpulab-cli uncapped and under 512M (out of core), then in process and the two CLI outputs compared
# (max difference).
if [[ $steps == *tiles* ]]; then
  big=$(mktemp -d); cli=build/app/cli/gpulab-cli
  {
    GPULAB_TILING_16K=$big build/tests/test_tiled_gpu --gtest_brief=1 --gtest_filter='TiledGpuLarge.*'
    for cap in 0 512M; do
      $cli filter --op box --radius 7 --in "$big/in16k.npy" --out "$big/box-$cap.npy" --reps 3 --gpu-memory-limit $cap
    done
    cmp "$big/box-0.npy" "$big/box-512M.npy" && echo "box r=7, 16384x16384 f32: uncapped and 512M outputs are byte-identical"
    md5sum "$big"/box-*.npy | sed "s|$big/||"
    printf '1 2 3 2 1\n2 4 6 4 2\n3 6 9 6 3\n2 4 6 4 2\n1 2 3 2 1\n' > "$big/k5.txt"
    $cli filter --op conv --kernel "$big/k5.txt" --in "$big/in16k.npy" --out "$big/conv.npy" --gpu-memory-limit 512M --json "$big/conv.json" && cat "$big/conv.json"
    for cap in 0 512M; do  # the FFT low-pass: uncapped in one piece, under 512M out of core
      $cli fft --cutoff 0.2 --in "$big/in16k.npy" --out "$big/fft-$cap.npy" --reps 1 --gpu-memory-limit $cap \
        --json "$big/fft-$cap.json"; echo "fft --gpu-memory-limit $cap: exit $?"
    done
    cat "$big/fft-512M.json"
    GPULAB_TILING_16K=$big build/tests/test_fft_out_of_core_gpu --gtest_brief=1 --gtest_filter='FftOutOfCoreLarge.*'
  } > "$out/tiles.txt" 2>&1
  rm -rf "$big"
  cat "$out/tiles.txt"
fi
tar czf "$out/logs.tar.gz" -C "$logs" .
