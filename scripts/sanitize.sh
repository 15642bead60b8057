#!/usr/bin/env bash
# Sanitizer builds of the CPU test suites (by hand, and from .ci/run):
#
#   scripts/sanitize.sh asan     AddressSanitizer + UndefinedBehaviorSanitizer (every UBSan finding fatal):
#                                the engine, gpulab-cli and the suites of io, the filters' CPU paths, the
#                                pipeline, the CLI's parsing and outputs, and the fuzz replays; in build-asan/
#   scripts/sanitize.sh tsan     ThreadSanitizer: the GUI worker (Engine, WorkerContext, the latest-job machinery:
#                                test_gui; the tabs' jobs on it: test_filters_gui, test_filters_live_gui (live
#                                preview: LatestJob superseding running jobs), test_mandelbrot_gui with the
#                                Mandelbrot CPU renderers' parallelRows threads; the batch dialog's thread:
#                                test_batch_gui), the batch pipeline's threads (test_batch) and the CPU
#                                baselines' strips on OpenCV's pool (through all of these); in build-tsan/
#   scripts/sanitize.sh          both
#
# Each is a separate CMake build (GCC, -O1 -g1, CUDA for sm_90 only, the GUI only for tsan) that builds
# just the test binaries it runs. Its CUDA objects are compiled exactly as the Release build's (-O3,
# not instrumented), so with ccache the three builds compile each .cu file once. The GPU tests skip
# without a device, as in the ordinary build. Libraries that are not instrumented (OpenCV, TBB, Qt,
# the CUDA runtime) hand work between threads where the sanitizer cannot see it: our side of those
# hand-overs is annotated (gpulab/core/thread_annotations.hpp: Qt's queued calls, cv::parallel_for_),
# and what remains is suppressed entry by entry in tests/sanitizers/*.supp, each with the report and
# the reason. Any report fails the run (halt_on_error); TSan's reports also go to files
# (build-tsan/sanitizer-reports/), so a report in a child process (gpulab --screenshot) fails the
# run even where a test does not look at its exit status.
# GPULAB_SANITIZE_BUILD_ROOT moves the build folders; GPULAB_SANITIZE_TESTS (a ctest -R regex)
# narrows the suites.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
supp=$root/tests/sanitizers
tools=("$@")
((${#tools[@]})) || tools=(asan tsan)

nvcc=$(command -v nvcc || true)
[ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
[ -n "$nvcc" ] || { echo "sanitize.sh: the CUDA toolkit is missing (see scripts/build.sh)" >&2; exit 2; }
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)

# The CPU suites worth instrumenting: image files and codecs, the filters' CPU paths and references,
# regions, histograms, the pipeline, the CLI (gpulab-cli is built with the same sanitizers, so its
# parsing and outputs run instrumented) and every fuzz target's seeds and regression inputs.
# (The other filters' CPU paths share planewise.hpp and cv_interop.hpp with the box blur; each suite
# more costs CI about a minute of build, so the set stays this small.)
asan_targets=(test_core test_roi test_image_io test_codecs test_hostile_files test_files test_histogram test_batch
  test_box_blur test_cli_filter
  fuzz_replay_image fuzz_replay_npy fuzz_replay_kernel_text fuzz_replay_png_view fuzz_replay_cli_numbers)
asan_tests='^(test_(core|roi|image_io|codecs|hostile_files|files|histogram|batch|box_blur|cli_filter)(\.[0-9]+)?|fuzz_replay_.*)$'
# Threads: the GUI worker and the tabs' jobs on it, the batch dialog's and the batch pipeline's
# threads, and the CPU threads they start (parallelRows, OpenCV's pool).
tsan_targets=(test_gui test_filters_gui test_filters_live_gui test_mandelbrot_gui test_batch_gui test_batch tsan_selfcheck)
tsan_tests='^(test_gui|test_filters_gui|test_filters_live_gui|test_mandelbrot_gui|test_batch_gui|test_batch)$'

# --as-needed: GCC's sanitizer link turns it off, and the binaries would then need libcuda.so.1 (the
# driver, absent without a GPU) just to start; the ordinary build does not link it either.
configure_and_build() {  # dir flags gui targets...
  local dir=$1 flags=$2 gui=$3
  shift 3
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$nvcc" \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DGPULAB_BUILD_GUI="$gui" "${launcher[@]}" \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1 -fno-omit-frame-pointer" -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="$flags -Wl,--as-needed" -DCMAKE_SHARED_LINKER_FLAGS="$flags -Wl,--as-needed" >/dev/null
  cmake --build "$dir" --parallel "$(nproc)" --target "$@"
}

export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
status=0
for tool in "${tools[@]}"; do
  start=$SECONDS
  build_root=${GPULAB_SANITIZE_BUILD_ROOT:-$root}
  case $tool in
    asan)
      dir=$build_root/build-asan
      reports=$dir/sanitizer-reports
      configure_and_build "$dir" "-fsanitize=address,undefined -fno-sanitize-recover=undefined" OFF "${asan_targets[@]}"
      # protect_shadow_gap=0: the CUDA driver maps memory where ASan keeps its shadow gap (with a GPU).
      export ASAN_OPTIONS="protect_shadow_gap=0:detect_leaks=1:halt_on_error=1:suppressions=$supp/asan.supp"
      export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
      export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp"
      regex=${GPULAB_SANITIZE_TESTS:-$asan_tests}
      ;;
    tsan)
      dir=$build_root/build-tsan
      reports=$dir/sanitizer-reports
      configure_and_build "$dir" "-fsanitize=thread" ON "${tsan_targets[@]}"
      # ignore_noninstrumented_modules: libc calls made by the libraries we do not build (GLib's
      # wake-up eventfd, Qt, OpenCV, TBB) are not checked, ours are (tests/sanitizers/tsan.supp says why).
      export TSAN_OPTIONS="suppressions=$supp/tsan.supp:halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1:log_path=$reports/tsan"
      regex=${GPULAB_SANITIZE_TESTS:-$tsan_tests}
      ;;
    *) echo "sanitize.sh: unknown tool '$tool' (asan | tsan)" >&2; exit 2 ;;
  esac
  built=$((SECONDS - start))
  rm -rf "$reports"
  mkdir -p "$reports"
  tests_ok=1
  ctest --test-dir "$dir" --output-on-failure --parallel "$(nproc)" --timeout 900 -R "$regex" || tests_ok=0
  # The annotations that replace suppressions must not hide real races: two correct programs stay
  # clean and two racy ones are reported (tests/sanitizers/tsan_selfcheck.cpp).
  if [ "$tool" = tsan ] && [ -z "${GPULAB_SANITIZE_TESTS:-}" ]; then
    for check in queued-ok queued-race strips-ok strips-race; do
      out=$dir/selfcheck/$check
      rm -rf "$out" && mkdir -p "$out"
      TSAN_OPTIONS="${TSAN_OPTIONS%%:log_path=*}:log_path=$out/tsan" "$dir/tests/tsan_selfcheck" "$check" >"$out/log" 2>&1 || true
      found=$(cat "$out"/tsan.* 2>/dev/null | grep -c 'WARNING: ThreadSanitizer: data race' || true)
      if [[ $check == *-race && $found -eq 0 ]] || [[ $check == *-ok && $found -ne 0 ]]; then
        echo "sanitize.sh: tsan self-check $check: $found race report(s), expected $([[ $check == *-race ]] && echo some || echo none) ($out)" >&2
        tests_ok=0
      fi
    done
    ((tests_ok)) && echo "sanitize.sh: tsan self-check: the annotated hand-overs stay clean, both planted races are reported"
  fi
  took="build $built s, tests $((SECONDS - start - built)) s"
  if ((tests_ok)) && [ -z "$(ls -A "$reports")" ]; then
    echo "sanitize.sh: $tool clean ($took)"
  else
    for report in "$reports"/*; do
      [ -f "$report" ] && { echo "==== $report"; cat "$report"; }
    done
    echo "sanitize.sh: $tool FOUND PROBLEMS ($took): see the failed tests and the reports above ($reports)" >&2
    status=1
  fi
done
exit $status
