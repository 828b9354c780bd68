#!/usr/bin/env bash
# The "Service" benchmark matrix of docs/benchmarks.md: every case RUNS times (default 3) with
# release builds and a child bete-server, one JSON report per run in $OUT, then the summary
# table (median and spread) from summarize.py.
#   clients/load/bench.sh                 # every case
#   clients/load/bench.sh closed-100 idle-10000
# Build first: cargo build --release -p bete-server -p bete-load
# SUBMIT=stream (default: moves on SubmitActions streams, as the Rust runner sends them) or unary.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${BIN_DIR:-target/release}"
out="${OUT:-target/bench-load}"
runs="${RUNS:-3}"
window="${WINDOW:-15s}"
submit="${SUBMIT:-stream}"
mkdir -p "$out"

declare -A cases=(
  [closed-10]="--tables 10"
  [closed-100]="--tables 100"
  [closed-1000]="--tables 1000"
  [closed-10000]="--tables 10000"
  [rate-1000-over-100]="--tables 100 --rate 1000"
  [rate-5000-over-1000]="--tables 1000 --rate 5000"
  [rate-2000-over-10000]="--tables 10000 --rate 2000"
  # Seated tables whose bots never answer inside the window: memory per table, idle CPU.
  [idle-10000]="--tables 10000 --think-time 600s --deadline-ms 3600000 --ceiling-duration 0s --drain 1s"
)
order=(closed-10 closed-100 closed-1000 closed-10000 rate-1000-over-100 rate-5000-over-1000 rate-2000-over-10000 idle-10000)
[ "$#" -gt 0 ] && order=("$@")

for name in "${order[@]}"; do
  args="${cases[$name]:?unknown case $name}"
  for i in $(seq 1 "$runs"); do
    echo "== $name run $i: bete-load --seats 5 --duration $window --submit $submit $args" >&2
    # shellcheck disable=SC2086
    "$bin/bete-load" --seats 5 --duration "$window" --connections 8 --submit "$submit" --quiet \
      --server-bin "$bin/bete-server" $args --report "$out/$name.run$i.json" \
      || echo "== $name run $i failed" >&2
  done
done
python3 clients/load/summarize.py "$out" "${order[@]}"
