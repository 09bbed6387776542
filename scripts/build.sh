#!/usr/bin/env bash
# Configures and builds one of gpumon's build trees with CMake + Ninja.
#
# Usage: scripts/build.sh [KIND] [NINJA_TARGET...]
#   KIND     default  build/       RelWithDebInfo, tests and benchmarks, the web UI
#                                  bundled with npm and embedded (the default)
#            asan     build-asan/  Debug, AddressSanitizer + UBSan, no benchmarks,
#                                  no web UI (GPUMON_UI=OFF: no npm)
#            fuzz     build-fuzz/  clang, libFuzzer targets only, no web UI
#   targets  passed to ninja; when none are given: all targets, or for fuzz
#            every fuzz_* target
# Env:   GPUMON_JOBS        parallel jobs (default 2: the CI machine has 2 cores)
#        GPUMON_BUILD_TYPE  overrides the CMake build type of the chosen kind
#        GPUMON_VERBOSE=1   show every compile command and cmake's output
#        GPUMON_DEBUG_INFO  lines (default: line tables only, enough for
#                           backtraces and sanitizer reports, and a third
#                           faster to compile) or full (for a debugger)
#
# Re-running is cheap: cmake only re-checks the tree and ninja only rebuilds
# what changed. Dependencies are not installed here; see install-deps.sh.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

KIND=default
case "${1:-}" in
  default | asan | fuzz)
    KIND=$1
    shift
    ;;
  -h | --help)
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
    exit 0
    ;;
esac

JOBS=${GPUMON_JOBS:-2}
CMAKE_ARGS=(-G Ninja -Wno-dev)
case "${GPUMON_DEBUG_INFO:-lines}" in
  lines) DEBUG_FLAG=-g1 ;;
  full) DEBUG_FLAG=-g ;;
  *)
    printf 'build: GPUMON_DEBUG_INFO must be "lines" or "full", not "%s"\n' "$GPUMON_DEBUG_INFO" >&2
    exit 2
    ;;
esac
# The build types' flags with that debug level (CMake's own defaults otherwise).
for lang in C CXX; do
  CMAKE_ARGS+=("-DCMAKE_${lang}_FLAGS_RELWITHDEBINFO=-O2 $DEBUG_FLAG -DNDEBUG"
    "-DCMAKE_${lang}_FLAGS_DEBUG=$DEBUG_FLAG")
done
case "$KIND" in
  default)
    DIR=build
    # Only this tree bundles the web UI (npm ci + esbuild, into build/ui/dist).
    CMAKE_ARGS+=(-DCMAKE_BUILD_TYPE="${GPUMON_BUILD_TYPE:-RelWithDebInfo}" -DGPUMON_UI=ON)
    ;;
  asan)
    DIR=build-asan
    CMAKE_ARGS+=(-DCMAKE_BUILD_TYPE="${GPUMON_BUILD_TYPE:-Debug}"
      -DGPUMON_SANITIZE=ON -DGPUMON_TESTS=ON -DGPUMON_BENCH=OFF -DGPUMON_UI=OFF)
    ;;
  fuzz)
    DIR=build-fuzz
    # The compiler is fixed at first configure; giving it every time keeps a
    # tree from silently staying on gcc.
    CMAKE_ARGS+=(-DCMAKE_BUILD_TYPE="${GPUMON_BUILD_TYPE:-RelWithDebInfo}"
      -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
      -DGPUMON_FUZZ=ON -DGPUMON_TESTS=OFF -DGPUMON_BENCH=OFF -DGPUMON_UI=OFF)
    export CC=clang CXX=clang++
    ;;
esac

log() { printf 'build(%s): %s\n' "$KIND" "$*" >&2; }

if [ -f "$DIR/CMakeCache.txt" ]; then
  generator=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$DIR/CMakeCache.txt")
  if [ -n "$generator" ] && [ "$generator" != Ninja ]; then
    log "$DIR/ was configured with '$generator', not Ninja; remove $DIR/ and re-run"
    exit 1
  fi
fi

configure_log=$(mktemp)
trap 'rm -f "$configure_log"' EXIT
if ! cmake -S . -B "$DIR" "${CMAKE_ARGS[@]}" >"$configure_log" 2>&1; then
  cat "$configure_log" >&2
  log "cmake configure failed"
  exit 1
fi
if [ "${GPUMON_VERBOSE:-0}" = 1 ]; then
  cat "$configure_log" >&2
fi

TARGETS=("$@")
if [ "$KIND" = fuzz ] && [ "${#TARGETS[@]}" -eq 0 ]; then
  # The fuzz tree exists for its fuzz_* binaries; the rest of the tree is
  # instrumented for libFuzzer there and is not meant to link on its own.
  mapfile -t TARGETS < <(ninja -C "$DIR" -t targets all | sed -n 's/^\(fuzz_[A-Za-z0-9_]*\): phony$/\1/p')
  if [ "${#TARGETS[@]}" -eq 0 ]; then
    log "no fuzz_* targets defined"
    exit 0
  fi
fi

NINJA_ARGS=(-C "$DIR" -j "$JOBS")
if [ "${GPUMON_VERBOSE:-0}" = 1 ]; then
  NINJA_ARGS+=(-v)
else
  NINJA_ARGS+=(--quiet)
fi
start=$(date +%s)
if ! ninja "${NINJA_ARGS[@]}" "${TARGETS[@]}"; then
  log "build failed"
  exit 1
fi
log "built $DIR/ ${TARGETS[*]:-all} in $(($(date +%s) - start)) s"
