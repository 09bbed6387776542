#!/usr/bin/env bash
# Installs everything gpumon needs to build and test on Debian 12 (bookworm).
#
# Idempotent and quiet: when every package is already installed it only
# checks and returns (about a second). It refreshes the apt lists only when a
# package is missing and the lists are older than a day or absent. Services
# that packages would start on install (the Debian prometheus package ships
# one) are kept from starting: the tests run their own Prometheus on a
# private port and must never depend on a system one.
#
# Usage: scripts/install-deps.sh        (as root, or as a user with sudo)
# Env:   GPUMON_APT_FORCE_UPDATE=1      always run apt-get update first
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  clang libclang-rt-14-dev clang-format clang-tidy
  libgtest-dev libgmock-dev libbenchmark-dev
  libcpp-httplib-dev libyaml-cpp-dev zlib1g-dev libssl-dev libbrotli-dev libre2-dev rapidjson-dev
  libcrypt-dev libsnappy-dev libprotobuf-dev protobuf-compiler libboost1.81-dev
  prometheus prometheus-alertmanager victoria-metrics prometheus-node-exporter
  python3 python3-torch curl ca-certificates wrk
  python3-venv python3-pip python3-setuptools python3-prometheus-client
  nodejs chromium fonts-dejavu-core
)
# npm: Debian's package, unless the installed Node.js already brings its own
# (a Node.js build from elsewhere ships npm inside its nodejs package and
# conflicts with Debian's npm).
if ! command -v npm >/dev/null 2>&1; then
  PACKAGES+=(npm)
fi

log() { printf 'install-deps: %s\n' "$*" >&2; }

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  fi
fi

missing_packages() {
  local pkg status
  for pkg in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
    [ "$status" = "installed" ] || printf '%s\n' "$pkg"
  done
}

# True when the apt lists are absent or older than a day; a stale list can
# name package versions the mirror no longer has.
lists_are_stale() {
  local fresh
  fresh=$(find /var/lib/apt/lists -maxdepth 1 -name '*_InRelease' -mtime -1 2>/dev/null | head -n 1)
  [ -z "$fresh" ]
}

# Run a noisy command; show its output only when it fails.
quiet() {
  local out
  out=$(mktemp)
  if ! "$@" >"$out" 2>&1; then
    log "command failed: $*"
    tail -n 40 "$out" >&2
    rm -f "$out"
    return 1
  fi
  rm -f "$out"
}

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  log "this script needs a Debian-based system with apt (Debian 12 is the reference)"
  exit 1
fi

mapfile -t MISSING < <(missing_packages)
if [ "${#MISSING[@]}" -eq 0 ] && [ "${GPUMON_APT_FORCE_UPDATE:-0}" != 1 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ] && [ "${#SUDO[@]}" -eq 0 ]; then
  log "missing packages: ${MISSING[*]}"
  log "run this script as root (or install sudo) to install them"
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
APT_OPTS=(-q -y -o Dpkg::Use-Pty=0 -o DPkg::Lock::Timeout=300)

if [ "${GPUMON_APT_FORCE_UPDATE:-0}" = 1 ] || lists_are_stale; then
  log "refreshing apt package lists"
  quiet "${SUDO[@]}" apt-get "${APT_OPTS[@]}" update
fi

# Keep maintainer scripts from starting services while we install: without
# this, the prometheus package starts a daemon on :9090 (via systemd or its
# init script) and victoria-metrics one on :8428. An existing policy file
# (common in containers) is left as is.
POLICY=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e "$POLICY" ]; then
  printf '#!/bin/sh\n# Temporary, written by gpumon scripts/install-deps.sh.\nexit 101\n' |
    "${SUDO[@]}" tee "$POLICY" >/dev/null
  "${SUDO[@]}" chmod 755 "$POLICY"
  created_policy=1
fi
remove_policy() {
  if [ "$created_policy" = 1 ]; then
    "${SUDO[@]}" rm -f "$POLICY"
  fi
}
trap remove_policy EXIT

# Services whose packages we install now (the benchmarks and tests start their
# own instances on private ports).
SERVICES=()
for svc in prometheus prometheus-alertmanager victoria-metrics prometheus-node-exporter; do
  case " ${MISSING[*]} " in *" $svc "*) SERVICES+=("$svc") ;; esac
done

log "installing: ${MISSING[*]:-(none missing)}"
if ! quiet "${SUDO[@]}" apt-get "${APT_OPTS[@]}" install --no-install-recommends "${MISSING[@]}"; then
  # The lists may be out of date even if younger than a day; retry once.
  log "retrying after apt-get update"
  quiet "${SUDO[@]}" apt-get "${APT_OPTS[@]}" update
  quiet "${SUDO[@]}" apt-get "${APT_OPTS[@]}" install --no-install-recommends "${MISSING[@]}"
fi

# If we were the ones who installed a service package, make sure no system
# service of it keeps running (a policy file of the host may have allowed the
# start).
for svc in "${SERVICES[@]}"; do
  if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
    "${SUDO[@]}" systemctl disable --now "$svc" >/dev/null 2>&1 || true
  elif [ -x "/etc/init.d/$svc" ]; then
    "${SUDO[@]}" "/etc/init.d/$svc" stop >/dev/null 2>&1 || true
  fi
done

mapfile -t STILL_MISSING < <(missing_packages)
if [ "${#STILL_MISSING[@]}" -ne 0 ]; then
  log "still missing after install: ${STILL_MISSING[*]}"
  exit 1
fi
log "all dependencies installed"
