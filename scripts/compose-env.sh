#!/bin/sh
# Write a fresh .env for compose.yaml: four random seat tokens and a random deal seed.
#
#   scripts/compose-env.sh            # writes ./.env (mode 600), replacing any earlier one
#   scripts/compose-env.sh path/.env  # somewhere else
#
# compose.yaml has no default for any of these: without them docker-compose
# stops with "ARENA_TOKEN_N is not set: run scripts/compose-env.sh".  Run this
# before every match: a seed or token that is known in advance lets a bot
# compute the deals or join as another seat.  Needs only sh and /dev/urandom.
set -eu

out="${1:-.env}"
random_hex() { od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }

umask 077
tmp="$out.tmp.$$"
{
  echo "# Written by scripts/compose-env.sh on $(date -u +%Y-%m-%dT%H:%M:%SZ); secret: do not commit or share."
  for seat in N E S W; do
    echo "ARENA_TOKEN_$seat=$(random_hex 24)"
  done
  echo "ARENA_SEED=$(random_hex 16)"
  echo "ARENA_UID=$(id -u)"
} >"$tmp"
mv "$tmp" "$out"
echo "wrote $out: fresh seat tokens and seed (mode 600)"
