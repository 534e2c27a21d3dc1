#!/usr/bin/env bash
# Everything the full test suite needs besides Python packages: headless Chromium
# (the HTML leaderboard is tested through its DOM) and a Docker engine with the
# offline base image (scripts/docker-setup.sh).  Idempotent; needs root.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ ! -x /usr/bin/chromium ]; then
  echo "== installing chromium"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
bash "$here/docker-setup.sh"
