#!/usr/bin/env bash
# Make a Docker engine and the offline base image available on this machine.
#
# Idempotent: installs docker.io, docker-compose and debootstrap if missing, starts dockerd with
# no bridge and no iptables (containers get no network at all) if no engine
# answers, and builds the base image arena-base:bookworm with debootstrap if it
# is not there yet (no registry is reachable here, so nothing can be pulled).
# Needs root. Used by .ci/run; run it by hand before the Docker tests.
#
#   --fresh    first stop the engine an earlier run of this script started (.ci/run: the
#              tests get an engine whose whole life is theirs, not one a session left)
#   --restart  the same, used by the tests when that engine stops starting containers
#              (tests/engine_guard.py); its goroutines are dumped to the log first
set -euo pipefail

BASE_IMAGE="${ARENA_BASE_IMAGE:-arena-base:bookworm}"
ROOTFS_CACHE="${ARENA_ROOTFS_CACHE:-/var/cache/arena/rootfs.tar}"
LOG_DIR=/var/log/arena

if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null || ! command -v docker-compose >/dev/null; then
  echo "== installing docker.io, docker-compose and debootstrap"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io docker-compose debootstrap >/dev/null
fi

PID_FILE=/var/run/arena-dockerd.pid
SHIM_ADDRESS=/var/run/docker/containerd/containerd.sock

# The dockerd this script started, if it still runs (nothing else is ever stopped).
own_engine_pid() {
  local pid
  pid=$(cat "$PID_FILE" 2>/dev/null || true)
  [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = dockerd ] && echo "$pid"
  return 0
}

# Stop that engine: TERM (it stops its containers), KILL after 30 s (a wedged engine does not
# stop), then what a killed engine leaves running: its containerd, the shims on its socket and
# the processes of their containers (found through each container's cgroup).
stop_own_engine() {
  local pid ids id procs
  pid=$(own_engine_pid)
  [ -n "$pid" ] || return 0
  echo "== stopping the engine this script started (dockerd $pid)"
  if [ "${1:-}" = dump ]; then
    kill -USR1 "$pid" 2>/dev/null || true  # dockerd writes its goroutines' stacks to its log
    sleep 2
    cp /var/run/docker/goroutine-stacks-*.log "$LOG_DIR/" 2>/dev/null || true
  fi
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 30); do [ -d "/proc/$pid" ] || break; sleep 1; done
  if [ -d "/proc/$pid" ]; then
    echo "== dockerd $pid did not stop within 30 s: killed"
    pkill -KILL -P "$pid" 2>/dev/null || true
    kill -KILL "$pid" 2>/dev/null || true
  fi
  ids=$(pgrep -a -f "containerd-shim.*-address $SHIM_ADDRESS" | sed -n 's/.* -id \([0-9a-f]*\).*/\1/p' || true)
  for id in $ids; do
    for procs in /sys/fs/cgroup/pids/docker/"$id"/cgroup.procs /sys/fs/cgroup/docker/"$id"/cgroup.procs \
                 /sys/fs/cgroup/system.slice/docker-"$id".scope/cgroup.procs; do
      [ -r "$procs" ] && xargs -r kill -KILL <"$procs" 2>/dev/null || true
    done
  done
  pkill -KILL -f "containerd-shim.*-address $SHIM_ADDRESS" 2>/dev/null || true
  rm -f "$PID_FILE"
}

mkdir -p "$LOG_DIR"
case "${1:-}" in
  --fresh) stop_own_engine ;;
  --restart) stop_own_engine dump ;;
  "") ;;
  *) echo "usage: $0 [--fresh|--restart]" >&2; exit 2 ;;
esac

if ! docker info >/dev/null 2>&1; then
  echo "== starting dockerd (--bridge=none --iptables=false)"
  # Appended, never truncated: the log of the engine an earlier run used is kept for its diagnosis.
  echo "== $(date -u +%FT%TZ) dockerd started by scripts/docker-setup.sh" >>"$LOG_DIR/dockerd.log"
  nohup dockerd --bridge=none --iptables=false --ip6tables=false >>"$LOG_DIR/dockerd.log" 2>&1 &
  echo $! >"$PID_FILE"
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
