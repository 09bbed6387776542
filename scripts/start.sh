#!/usr/bin/env bash
# Sets up, builds and runs the gpumon agent in the foreground.
#
# Installs missing dependencies (scripts/install-deps.sh), builds build/
# (RelWithDebInfo: optimized, with debug symbols; the same tree test.sh uses,
# so the two never rebuild each other's work) and then replaces itself with
#   build/bin/gpumon agent --listen :9400 [ARGS...]
# When no NVIDIA driver library (libnvidia-ml.so.1) is installed, the agent
# is started on a simulated 8 x H200 node instead, and says so loudly; every
# simulated series carries the label simulated="true".
#
# Usage: scripts/start.sh [extra gpumon agent arguments...]
# Env:   GPUMON_LISTEN    listen address (default :9400)
#        GPUMON_SIMULATE  force a simulated fleet, e.g. h200x8 or rtx4080sx1
#        GPUMON_SKIP_DEPS=1  do not run install-deps.sh
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

if [ "${GPUMON_SKIP_DEPS:-0}" != 1 ]; then
  bash scripts/install-deps.sh
fi

# Build only what the agent needs, not the test suite: the gpumon target,
# which also builds the fake NVML library it loads when simulating.
bash scripts/build.sh default gpumon

LISTEN=${GPUMON_LISTEN:-:9400}
ARGS=(agent --listen "$LISTEN")
SIMULATE=${GPUMON_SIMULATE:-}
if [ -z "$SIMULATE" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml\.so\.1'; then
  SIMULATE=h200x8
  cat >&2 <<'EOF'

  ###########################################################################
  #  NO NVIDIA DRIVER FOUND (libnvidia-ml.so.1 is not installed).           #
  #  Starting gpumon on a SIMULATED fleet of 8 x H200 GPUs.                 #
  #  These readings are NOT real; every series has simulated="true".        #
  ###########################################################################

EOF
fi
if [ -n "$SIMULATE" ]; then
  ARGS+=(--simulate "$SIMULATE")
  printf 'start: simulated GPUs: %s\n' "$SIMULATE" >&2
fi

printf 'start: exec build/bin/gpumon %s\n' "${ARGS[*]} $*" >&2
exec build/bin/gpumon "${ARGS[@]}" "$@"
