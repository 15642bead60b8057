#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ with clang (AddressSanitizer + UndefinedBehaviorSanitizer,
# every UBSan finding fatal) and runs each for a fixed time. CPU sources only: no CUDA, no GPU.
#
#   scripts/fuzz.sh                       build, then run every target 45 s
#   scripts/fuzz.sh --time 1800           30 minutes a target (on demand: hours with --time 14400)
#   scripts/fuzz.sh --jobs 4 npy image    4 fuzzer processes a target (libFuzzer -jobs/-workers), two targets
#   scripts/fuzz.sh --merge               afterwards, merge the inputs that add coverage into the seed corpora
#   scripts/fuzz.sh --keep-going          go on after a finding (libFuzzer -fork), to collect several
#   scripts/fuzz.sh --build-only          build the targets (build-fuzz/, or $GPULAB_FUZZ_BUILD_DIR)
#   scripts/fuzz.sh --replay              run every seed and regression input once (no fuzzing)
#
# A run starts from tests/fuzz/<target>/corpus and regressions, writes what it finds new to
# build-fuzz/<target>/found (never into the repository unless --merge), and a crash, leak, timeout
# or out-of-memory to build-fuzz/<target>/artifacts. The script prints per target the executions and
# findings, and exits 1 when any target found something: copy the artifact into
# tests/fuzz/<target>/regressions/ (CTest replays it in the ordinary build) and fix the cause.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GPULAB_FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=45
jobs=1
merge=0
keep_going=0
mode=fuzz
targets=()
while (($#)); do
  case $1 in
    --time) seconds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --merge) merge=1; shift ;;
    --keep-going) keep_going=1; shift ;;
    --build-only) mode=build; shift ;;
    --replay) mode=replay; shift ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
all_targets=(image npy kernel_text png_view cli_numbers)
((${#targets[@]})) || targets=("${all_targets[@]}")

# ---------------------------------------------------------------------------------------------
# Build

cxx=${CXX_FUZZ:-}
if [ -z "$cxx" ]; then
  for c in clang++ clang++-14 clang++-15 clang++-16; do
    if command -v "$c" >/dev/null; then cxx=$c; break; fi
  done
fi
[ -n "$cxx" ] || { echo "fuzz.sh: no clang++ (scripts/install-deps.sh installs clang-14)" >&2; exit 2; }
launcher=()
command -v ccache >/dev/null && launcher=(ccache)

# shellcheck disable=SC2054  # the commas belong to clang's option
sanitize=(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
cxxflags=(-std=c++20 -O1 -g -DNDEBUG "${sanitize[@]}" -I"$root/engine/include" -I"$root/engine/src"
  -I"$root/kernels/include" -I/usr/include/stb)
# Headers only: deep_view.cpp includes the kernels' shared .cuh (host-and-device helpers), which
# include cuda_runtime_api.h for __host__/__device__ (the CUDA runtime is linked for core/image.cpp only).
cuda_include=${CUDA_HOME:-/usr/local/cuda}/include
[ -f "$cuda_include/cuda_runtime_api.h" ] && cxxflags+=(-I"$cuda_include")
# The engine's image decoders link what pkg-config knows of these (whichever the engine uses).
cuda_lib=${CUDA_HOME:-/usr/local/cuda}/lib64
libs=(-L"$cuda_lib" -Wl,-rpath,"$cuda_lib" -lcudart)
for module in mpfr gmp libspng spng libpng libjpeg libturbojpeg libtiff-4 libwebp zlib; do
  if pkg-config --exists "$module" 2>/dev/null; then
    # shellcheck disable=SC2207  # pkg-config's flags are words
    cxxflags+=($(pkg-config --cflags "$module"))
    # shellcheck disable=SC2207
    libs+=($(pkg-config --libs "$module"))
  fi
done

# What each target compiles besides its own file: the CPU sources it calls, nothing with CUDA.
# core/image.cpp keeps images in page-locked memory when a GPU is there (cudaHostRegister): it
# takes core/device.cpp and the CUDA runtime (without a driver every call fails, and images stay pageable).
core_sources=("$root/engine/src/core/image.cpp" "$root/engine/src/core/device.cpp")
io_sources=("$root"/engine/src/io/*.cpp "${core_sources[@]}")
mandelbrot_sources=("$root"/engine/src/mandelbrot/{png_view,view,palette,deep_number,deep_view,mpfr_real}.cpp
  "${core_sources[@]}")
sources_of() {
  case $1 in
    image | npy) echo "${io_sources[@]}" ;;
    kernel_text) echo "${io_sources[@]}" "$root/engine/src/filters/kernel_file.cpp" ;;
    png_view) echo "${mandelbrot_sources[@]}" ;;
    cli_numbers) echo "${mandelbrot_sources[@]}" "$root/engine/src/lab/common.cpp" "$root/app/cli/cli_parse.cpp" ;;
  esac
}

build_targets() {
  local start=$SECONDS t src
  mkdir -p "$build/obj"
  declare -A objects=()
  for t in "${targets[@]}"; do
    [ -f "$root/tests/fuzz/$t/fuzz_$t.cpp" ] || { echo "fuzz.sh: no target $t (${all_targets[*]})" >&2; exit 2; }
    for src in $(sources_of "$t") "$root/tests/fuzz/$t/fuzz_$t.cpp"; do objects[$src]=1; done
  done
  # Every source once, $(nproc) at a time (ccache makes a rebuild quick).
  export root build cxx cxxflags_joined="${cxxflags[*]}" launcher_joined="${launcher[*]}"
  # shellcheck disable=SC2016  # expanded by the inner shell
  printf '%s\n' "${!objects[@]}" | xargs -P "$(nproc)" -I{} bash -c \
    'set -e; obj=$build/obj/${1#"$root"/}.o; mkdir -p "$(dirname "$obj")"
     $launcher_joined $cxx $cxxflags_joined -fsanitize=fuzzer-no-link -ffunction-sections -fdata-sections \
       -c "$1" -o "$obj"' _ {}
  for t in "${targets[@]}"; do
    local objs=()
    for src in $(sources_of "$t") "$root/tests/fuzz/$t/fuzz_$t.cpp"; do objs+=("$build/obj/${src#"$root"/}.o"); done
    # cli_numbers takes lab::parseSizeList from lab/common.cpp, whose experiment table names the GPU
    # experiments' functions. The parser never calls them: a copy of the object with its symbols
    # weak links without them (a call would jump to 0, and the fuzzer would report the crash).
    if [ "$t" = cli_numbers ]; then
      local common_o=$build/obj/engine/src/lab/common.cpp.o
      objcopy --weaken "$common_o" "$build/$t/lab_common_weak.o"
      objs=("${objs[@]/"$common_o"/"$build/$t/lab_common_weak.o"}")
    fi
    "$cxx" "${sanitize[@]}" -fsanitize=fuzzer "${objs[@]}" -Wl,--gc-sections "${libs[@]}" -lpthread -o "$build/$t/fuzz_$t" 2>"$build/$t/link.log" || { cat "$build/$t/link.log" >&2; exit 1; }
  done
  echo "fuzz.sh: built ${targets[*]} with $("$cxx" --version | head -1) in $((SECONDS - start)) s"
}

mkdir -p "$build"
for t in "${targets[@]}"; do mkdir -p "$build/$t"; done
build_targets
[ "$mode" = build ] && exit 0

# ---------------------------------------------------------------------------------------------
# Run

common=(-rss_limit_mb=2560 -malloc_limit_mb=2048 -timeout=20 -print_final_stats=1)
max_len_of() { case $1 in image) echo 65536 ;; npy) echo 16384 ;; *) echo 4096 ;; esac; }
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

failed=0
summary=()
for t in "${targets[@]}"; do
  dir=$root/tests/fuzz/$t
  work=$build/$t
  mkdir -p "$work/found" "$work/artifacts"
  if [ "$mode" = replay ]; then
    if "$work/fuzz_$t" "${common[@]}" "$dir/corpus" "$dir/regressions" -runs=0 >"$work/replay.log" 2>&1; then
      summary+=("$t: replayed $(find "$dir/corpus" "$dir/regressions" -type f ! -name .gitkeep | wc -l) inputs, no findings")
    else
      failed=1
      summary+=("$t: REPLAY FAILED (see $work/replay.log)")
    fi
    continue
  fi
  dict=()
  [ -f "$dir/$t.dict" ] && dict=(-dict="$dir/$t.dict")
  rm -f "$work"/artifacts/* "$work"/fuzz-*.log
  log=$work/fuzz.log
  par=()
  ((jobs > 1)) && par=(-jobs="$jobs" -workers="$jobs")
  ((keep_going)) && par=(-fork="$jobs" -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1)
  echo "fuzz.sh: $t for $seconds s ($jobs process(es))"
  status=0
  started=$SECONDS
  (cd "$work" && "./fuzz_$t" "${common[@]}" "${dict[@]}" "${par[@]}" -max_len="$(max_len_of "$t")" \
    -max_total_time="$seconds" -artifact_prefix="$work/artifacts/" \
    "$work/found" "$dir/corpus" "$dir/regressions") >"$log" 2>&1 || status=$?
  ((jobs > 1)) && cat "$work"/fuzz-*.log >>"$log" 2>/dev/null
  # (|| true: a log without the line is no reason to stop before the summary)
  execs=$(grep -h 'stat::number_of_executed_units' "$log" | awk '{s += $2} END {print s + 0}') || true
  if ((keep_going)); then  # fork mode: the last status line counts every child's runs
    execs=$(grep -ho '^#[0-9]*' "$log" | tail -1 | tr -d '#') || true
  fi
  findings=$(find "$work/artifacts" -type f | wc -l)
  line="$t: ${execs:-0} executions in $((SECONDS - started)) s, $findings finding(s)"
  if ((status != 0 || findings > 0)); then
    failed=1
    line+=" -- FAILED (exit $status; artifacts in $work/artifacts, log $log)"
    grep -h -m3 -E 'ERROR: |runtime error:|fuzz property failed|uncaught exception|deadly signal' "$log" | sed 's/^/    /' || true
  fi
  summary+=("$line")
  if ((merge)); then
    "$work/fuzz_$t" -merge=1 "${common[@]}" "$dir/corpus" "$work/found" >"$work/merge.log" 2>&1
    summary+=("    merged: $(grep -ho 'MERGE-OUTER: [0-9]* new files' "$work/merge.log" | tail -1)")
  fi
done

echo "fuzz.sh: summary"
printf '  %s\n' "${summary[@]}"
exit "$failed"
