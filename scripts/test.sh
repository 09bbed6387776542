#!/usr/bin/env bash
# Runs gpumon's whole test suite on a fresh Debian 12 machine.
#
#   1. installs missing dependencies (scripts/install-deps.sh; quick when done)
#   2. build/       RelWithDebInfo: every test, unit and integration (ctest)
#   3. build-asan/  ASan + UBSan: unit tests (ctest -LE integration)
#   4. build-fuzz/  clang libFuzzer: every fuzz_* target for a bounded time,
#                   on a scratch copy of fuzz/corpus/<name without fuzz_> (or
#                   of its longest "_"-prefix folder, e.g. exposition)
#
# Keeps going after a failure so one run reports everything, exits non-zero
# if anything failed, and ends with one summary line:
#   <N> passed, <N> failed, <N> skipped
# (ctest results of both trees plus one entry per fuzz target; a build or
# ctest run that fails before reporting tests counts as one failure).
#
# Env: GPUMON_JOBS=2            build and ctest parallelism
#      GPUMON_FUZZ_SECONDS=20   time per fuzz target
#      GPUMON_SKIP_DEPS=1       do not run install-deps.sh
#      GPUMON_SKIP_ASAN=1, GPUMON_SKIP_FUZZ=1   leave out a stage (local use)
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1

JOBS=${GPUMON_JOBS:-2}
FUZZ_SECONDS=${GPUMON_FUZZ_SECONDS:-12}
export GPUMON_JOBS=$JOBS

PASSED=0
FAILED=0
SKIPPED=0
FAILURES=()
SCRATCH=$(mktemp -d -t gpumon-test.XXXXXX)
trap 'rm -rf "$SCRATCH"' EXIT
SUITE_START=$(date +%s)

say() { printf '\n==> %s\n' "$*"; }
fail() {
  FAILED=$((FAILED + 1))
  FAILURES+=("$1")
}

summary() {
  say "finished in $(($(date +%s) - SUITE_START)) s"
  if [ "${#FAILURES[@]}" -gt 0 ]; then
    printf 'failed:\n'
    printf '  %s\n' "${FAILURES[@]}"
  fi
  printf '%d passed, %d failed, %d skipped\n' "$PASSED" "$FAILED" "$SKIPPED"
}

# Runs ctest in a build tree and adds its per-test results to the totals.
# Usage: run_ctest DIR [ctest args...]
run_ctest() {
  local dir=$1
  shift
  local log="$SCRATCH/ctest-$dir.log"
  local start rc
  start=$(date +%s)
  say "ctest in $dir/ $*"
  ctest --test-dir "$dir" --output-on-failure --no-tests=error -j "$JOBS" --timeout 300 "$@" \
    2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  # One result line per test: " 3/40 Test  #3: name ....   Passed    0.01 sec".
  local results p s f
  results=$(grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: ' "$log" || true)
  p=$(grep -c -E ' Passed +[0-9.]+ sec' <<<"$results" || true)
  s=$(grep -c -E '\*\*\*Skipped|Not Run \(Disabled\)' <<<"$results" || true)
  [ -n "$results" ] || p=0 s=0
  f=$(($(grep -c . <<<"$results" || true) - p - s))
  PASSED=$((PASSED + p))
  SKIPPED=$((SKIPPED + s))
  if [ "$f" -gt 0 ]; then
    FAILED=$((FAILED + f))
    while IFS= read -r line; do
      FAILURES+=("$dir: $line")
    done < <(grep -v -E ' Passed +[0-9.]+ sec|\*\*\*Skipped|Not Run \(Disabled\)' <<<"$results" |
      sed -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: //; s/ \.{2,}/ /; s/ +[0-9.]+ sec$//')
  elif [ "$rc" -ne 0 ]; then
    fail "ctest in $dir/ exited $rc without a failing test (no tests found?)"
  fi
  printf 'ctest %s/: %d passed, %d failed, %d skipped in %d s\n' \
    "$dir" "$p" "$f" "$s" "$(($(date +%s) - start))"
}

# Runs every libFuzzer binary in build-fuzz/bin for FUZZ_SECONDS each.
run_fuzzers() {
  local bin name short seeds work rc dict found=0
  for bin in build-fuzz/bin/fuzz_*; do
    if [ ! -f "$bin" ] || [ ! -x "$bin" ]; then continue; fi
    found=1
    name=$(basename "$bin")
    short=${name#fuzz_}
    work="$SCRATCH/$name"
    mkdir -p "$work/corpus" "$work/artifacts"
    # Seeds: fuzz/corpus/<short>, else the longest "_"-prefix of it that has
    # a folder (fuzz_exposition_parser may use fuzz/corpus/exposition). A
    # scratch copy, since libFuzzer writes new inputs into its corpus folder
    # and the checked-in seeds must stay as they are.
    seeds=$short
    while [ ! -d "fuzz/corpus/$seeds" ] && [ "${seeds%_*}" != "$seeds" ]; do
      seeds=${seeds%_*}
    done
    if [ -d "fuzz/corpus/$seeds" ]; then
      cp -R "fuzz/corpus/$seeds/." "$work/corpus/"
    fi
    dict=()
    for d in "fuzz/$short.dict" "fuzz/dict/$short.dict" "fuzz/$seeds.dict"; do
      [ -f "$d" ] && dict=("-dict=$d") && break
    done
    say "fuzz $name for ${FUZZ_SECONDS} s ($(find "$work/corpus" -type f | wc -l) seed inputs)"
    timeout --kill-after=10 $((FUZZ_SECONDS + 120)) "$bin" \
      -max_total_time="$FUZZ_SECONDS" -timeout=25 -rss_limit_mb=2048 \
      -artifact_prefix="$work/artifacts/" -print_final_stats=1 "${dict[@]}" \
      "$work/corpus" >"$work/log" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ]; then
      PASSED=$((PASSED + 1))
      grep -E '^(stat::number_of_executed_units|Done [0-9]+ runs)' "$work/log" || true
    else
      tail -n 60 "$work/log"
      # Keep the reproducer outside the scratch area so it survives the run.
      local keep="build-fuzz/crashes/$name"
      mkdir -p "$keep"
      cp -R "$work/artifacts/." "$keep/" 2>/dev/null || true
      printf 'fuzz %s failed (exit %d); reproducers, if any, in %s/\n' "$name" "$rc" "$keep"
      fail "fuzz: $name (exit $rc)"
    fi
  done
  if [ "$found" = 0 ]; then
    printf 'note: no fuzz_* binaries in build-fuzz/bin\n'
  fi
}

if [ "${GPUMON_SKIP_DEPS:-0}" != 1 ]; then
  say "dependencies"
  if ! bash scripts/install-deps.sh; then
    fail "install-deps.sh"
    summary
    exit 1
  fi
fi

say "build build/"
if bash scripts/build.sh default; then
  run_ctest build
else
  fail "build: build/"
fi

if [ "${GPUMON_SKIP_ASAN:-0}" != 1 ]; then
  say "build build-asan/"
  if bash scripts/build.sh asan; then
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
      ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:check_initialization_order=1} \
      run_ctest build-asan -LE integration
  else
    fail "build: build-asan/"
  fi
fi

if [ "${GPUMON_SKIP_FUZZ:-0}" != 1 ]; then
  say "build build-fuzz/"
  if bash scripts/build.sh fuzz; then
    run_fuzzers
  else
    fail "build: build-fuzz/"
  fi
fi

summary
[ "$FAILED" -eq 0 ]
