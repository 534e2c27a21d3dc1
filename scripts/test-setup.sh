#!/usr/bin/env bash
# Everything the full test suite needs besides Python packages: headless Chromium
# (the HTML leaderboard is tested through its DOM), Node.js with the Node example
# bot's npm packages, and a Docker engine with the offline base image
# (scripts/docker-setup.sh).  Idempotent; needs root.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ ! -x /usr/bin/chromium ]; then
  echo "== installing chromium"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "== installing nodejs and npm (the Node.js example bot)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi
if [ ! -d "$here/../example_bots/node/node_modules/@grpc/grpc-js" ]; then
  echo "== installing the Node.js example bot's packages (pinned by package-lock.json)"
  (cd "$here/../example_bots/node" && npm ci --no-audit --no-fund --loglevel=error)
fi
bash "$here/docker-setup.sh"
