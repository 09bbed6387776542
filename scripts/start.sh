#!/usr/bin/env bash
# Sets up, builds and runs gpumon server (the main job) in the foreground.
#
# Installs missing dependencies (scripts/install-deps.sh), builds build/
# (RelWithDebInfo: optimized, with debug symbols; the same tree test.sh uses,
# so the two never rebuild each other's work) and then replaces itself with
#   build/bin/gpumon server --listen :9090 --data ./data [ARGS...]
# With no --config the server monitors this node in-process: the real GPUs
# through NVML when the driver library (libnvidia-ml.so.1) is installed,
# otherwise a simulated 8 x H200 node, said loudly; every simulated series
# carries the label simulated="true". Without --config it also evaluates the
# shipped GPU rule pack (rules/*.rules.yml; alerts in /api/v1/alerts).
#
# Usage: scripts/start.sh [extra gpumon server arguments, e.g. --config FILE]
# Env:   GPUMON_LISTEN    listen address (default :9090)
#        GPUMON_DATA      data directory (default ./data)
#        GPUMON_SIMULATE  force a simulated fleet, e.g. h200x8 or rtx4080sx1
#        GPUMON_SKIP_DEPS=1  do not run install-deps.sh
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

if [ "${GPUMON_SKIP_DEPS:-0}" != 1 ]; then
  bash scripts/install-deps.sh
fi

# Build only what the server needs, not the test suite: the gpumon target,
# which also builds the fake NVML library it loads when simulating.
bash scripts/build.sh default gpumon

LISTEN=${GPUMON_LISTEN:-:9090}
ARGS=(server --listen "$LISTEN" --data "${GPUMON_DATA:-./data}")
SIMULATE=${GPUMON_SIMULATE:-}
HAS_CONFIG=0
HAS_RULES=0
for a in "$@"; do
  case "$a" in
    --config | --config=*) HAS_CONFIG=1 ;;
    --rules | --rules=*) HAS_RULES=1 ;;
  esac
done
if [ "$HAS_CONFIG" = 0 ] && [ "$HAS_RULES" = 0 ]; then
  ARGS+=(--rules "$ROOT/rules/*.rules.yml")
fi
# With --config the server scrapes what the file says; simulation applies
# only to the in-process local collection.
if [ "$HAS_CONFIG" = 0 ] && [ -z "$SIMULATE" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml\.so\.1'; then
  SIMULATE=h200x8
  cat >&2 <<'EOF'

  ###########################################################################
  #  NO NVIDIA DRIVER FOUND (libnvidia-ml.so.1 is not installed).           #
  #  Starting gpumon on a SIMULATED fleet of 8 x H200 GPUs.                 #
  #  These readings are NOT real; every series has simulated="true".        #
  ###########################################################################

EOF
fi
if [ "$HAS_CONFIG" = 0 ] && [ -n "$SIMULATE" ]; then
  ARGS+=(--simulate "$SIMULATE")
  printf 'start: simulated GPUs: %s\n' "$SIMULATE" >&2
fi

UI_HOST=${LISTEN%:*}
case "$UI_HOST" in "" | 0.0.0.0 | "[::]") UI_HOST=localhost ;; esac
printf 'start: web UI at http://%s:%s/ (once the server says it is serving)\n' \
  "$UI_HOST" "${LISTEN##*:}" >&2
printf 'start: exec build/bin/gpumon %s\n' "${ARGS[*]} $*" >&2
exec build/bin/gpumon "${ARGS[@]}" "$@"
