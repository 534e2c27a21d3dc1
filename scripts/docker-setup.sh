#!/usr/bin/env bash
# Make a Docker engine and the offline base image available on this machine.
#
# Idempotent: installs docker.io, docker-compose and debootstrap if missing, starts dockerd with
# no bridge and no iptables (containers get no network at all) if no engine
# answers, and builds the base image arena-base:bookworm with debootstrap if it
# is not there yet (no registry is reachable here, so nothing can be pulled).
# Needs root. Used by .ci/run; run it by hand before the Docker tests.
set -euo pipefail

BASE_IMAGE="${ARENA_BASE_IMAGE:-arena-base:bookworm}"
ROOTFS_CACHE="${ARENA_ROOTFS_CACHE:-/var/cache/arena/rootfs.tar}"
LOG_DIR=/var/log/arena

if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null || ! command -v docker-compose >/dev/null; then
  echo "== installing docker.io, docker-compose and debootstrap"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io docker-compose debootstrap >/dev/null
fi

if ! docker info >/dev/null 2>&1; then
  echo "== starting dockerd (--bridge=none --iptables=false)"
  mkdir -p "$LOG_DIR"
  nohup dockerd --bridge=none --iptables=false --ip6tables=false >"$LOG_DIR/dockerd.log" 2>&1 &
  echo $! >/var/run/arena-dockerd.pid
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  docker info >/dev/null 2>&1 || { echo "dockerd did not start; see $LOG_DIR/dockerd.log" >&2; tail -20 "$LOG_DIR/dockerd.log" >&2; exit 1; }
fi

if ! docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
  if [ ! -s "$ROOTFS_CACHE" ]; then
    echo "== building the base root filesystem with debootstrap (about a minute)"
    work=$(mktemp -d)
    debootstrap --variant=minbase --include=python3,python3-venv bookworm "$work/rootfs" >"$work/debootstrap.log" 2>&1 \
      || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
    mkdir -p "$(dirname "$ROOTFS_CACHE")"
    tar -C "$work/rootfs" -cf "$ROOTFS_CACHE.tmp" .
    mv "$ROOTFS_CACHE.tmp" "$ROOTFS_CACHE"
    rm -rf "$work"
  fi
  echo "== importing $BASE_IMAGE"
  docker import "$ROOTFS_CACHE" "$BASE_IMAGE" >/dev/null
fi
echo "docker ready: engine $(docker version --format '{{.Server.Version}}'), base image $BASE_IMAGE"
