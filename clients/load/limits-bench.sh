#!/usr/bin/env bash
# What the limits cost: the same load run with every limit on (the defaults) and with every
# limit off, alternated (on, off, on, off, ...: ABAB, so a drift of the shared machine hits both
# sides alike), same build, a child bete-server each run; server CPU per move is read from
# /proc/<pid>/stat of the server process by bete-load. Bounded: PAIRS pairs of runs of WINDOW
# each (default 3 pairs of 15 s, about 4 minutes in all with setup).
#   cargo build --release -p bete-server -p bete-load
#   clients/load/limits-bench.sh                      # closed loop, 1,000 tables, SubmitActions
#   PAIRS=2 ARGS="--tables 100" clients/load/limits-bench.sh
# The server takes the limits from its environment (BETE_*, see docs/security.md); the harness
# starts it as its child, which inherits them. Off: every rate 0, every count 0 (no bound), no
# load shedding, and the two bounds that cannot be switched off (connections, the first-bytes
# deadline) set far beyond the run.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${BIN_DIR:-target/release}"
out="${OUT:-target/bench-limits}"
pairs="${PAIRS:-3}"
window="${WINDOW:-15s}"
args="${ARGS:---tables 1000}"
mkdir -p "$out"
rm -f "$out"/limits-on.run*.json "$out"/limits-off.run*.json

off=(
  BETE_RATE_CALLS_PER_BOT=0
  BETE_RATE_REGISTRATIONS_PER_ADDRESS=0
  BETE_RATE_CREATIONS_PER_BOT=0
  BETE_RATE_CALLS_PER_ACCOUNT=0
  BETE_RATE_CREATIONS_PER_ACCOUNT=0
  BETE_RATE_REGISTRATIONS_PER_ACCOUNT=0
  BETE_RATE_ACCOUNTS_PER_ADDRESS=0
  BETE_MAX_STREAMS_PER_BOT=0
  BETE_MAX_OPEN_TABLES_PER_BOT=0
  BETE_MAX_BOTS_PER_ADDRESS=0
  BETE_MAX_ACCOUNTS_PER_ADDRESS=0
  BETE_MAX_SEATS_PER_BOT=0
  BETE_MAX_IN_FLIGHT=0
  BETE_MAX_CONNECTIONS=1000000
  BETE_PREFACE_TIMEOUT_SECS=86400
)

run() { # side, run number
  echo "== limits-$1 run $2: bete-load --seats 5 --duration $window --submit stream $args" >&2
  local envs=()
  [ "$1" = off ] && envs=("${off[@]}")
  # shellcheck disable=SC2086
  env "${envs[@]}" timeout 300 "$bin/bete-load" --seats 5 --duration "$window" --connections 8 \
    --submit stream --quiet --embed child --server-bin "$bin/bete-server" $args \
    --report "$out/limits-$1.run$2.json" || echo "== limits-$1 run $2 failed" >&2
}

for i in $(seq 1 "$pairs"); do
  run on "$i"
  run off "$i"
done
python3 clients/load/summarize.py "$out" limits-on limits-off
