#!/usr/bin/env bash
# Runs the agent against a real NVIDIA driver and saves what it saw, for an
# entry in docs/hardware.md. Usage: scripts/hardware-check.sh [OUTPUT_DIR]
# Needs a machine with an NVIDIA GPU and driver; builds with whatever
# compiler and libraries are present (see scripts/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-hardware-check-out}"
mkdir -p "$out"
jobs=$(nproc)
cmake -S . -B build-hw -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUMON_TESTS=OFF -DGPUMON_BENCH=OFF \
  >"$out/cmake.log" 2>&1
ninja -C build-hw -j"$jobs" gpumon >"$out/build.log" 2>&1
bin=build-hw/bin/gpumon
{ nvidia-smi -q 2>&1 || echo "nvidia-smi not available"; } >"$out/nvidia-smi-q.txt"
"$bin" doctor >"$out/doctor.txt" 2>&1 || true
port=19409
"$bin" agent --listen "127.0.0.1:$port" --names both >"$out/agent.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break
  sleep 0.2
done
sleep 3  # let every 1 s group run a few times
curl -sf "http://127.0.0.1:$port/metrics" >"$out/metrics-both.txt"
curl -sf -H 'Accept: application/openmetrics-text; version=1.0.0' \
  "http://127.0.0.1:$port/metrics" >"$out/metrics-openmetrics.txt"
sleep 5
curl -sf "http://127.0.0.1:$port/metrics" >"$out/metrics-both-later.txt"
# The agent's health, and the GPU's own limits as this driver reports them
# (absolute thresholds, or derived from the T.Limit fields on drivers that
# dropped them), its T.Limit margin and the recommended recovery action.
grep -E '^(gpumon_nvml_up|gpumon_gpus|gpumon_nvml_errors_total|process_resident_memory_bytes)' \
  "$out/metrics-both-later.txt" >"$out/summary.txt" || true
grep -E '^(gpu_(shutdown|slowdown|max_operating|memory_max_operating)_temperature_celsius|gpu_temperature_margin_celsius|gpu_recovery_action|gpu_temperature_celsius|gpu_memory_temperature_celsius)\{' \
  "$out/metrics-both-later.txt" >>"$out/summary.txt" || true
echo "saved to $out"; cat "$out/summary.txt"
