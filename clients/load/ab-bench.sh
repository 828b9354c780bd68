#!/usr/bin/env bash
# Two builds of the server side by side: the same load against server A and server B,
# alternated (A, B, A, B, ...: a drift of the shared machine hits both alike), each run a child
# bete-server of its own; server CPU per move is read by bete-load from /proc. Used to show that
# a refactoring moved no performance (issue 25: the crate split). Bounded: PAIRS pairs of runs
# of WINDOW each (default 4 pairs of 15 s, about 3 minutes with setup).
#   cp target/release/bete-server /tmp/before/      # the old build, kept aside
#   cargo build --release -p bete-server -p bete-load
#   A=/tmp/before/bete-server clients/load/ab-bench.sh
#   A=... B=... PAIRS=6 ARGS="--tables 100" clients/load/ab-bench.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
a="${A:?A=path of the first bete-server}"
b="${B:-target/release/bete-server}"
load="${LOAD:-target/release/bete-load}"
out="${OUT:-target/bench-ab}"
pairs="${PAIRS:-4}"
window="${WINDOW:-15s}"
args="${ARGS:---tables 1000}"
mkdir -p "$out"
rm -f "$out"/server-a.run*.json "$out"/server-b.run*.json
echo "A = $a ($(sha256sum "$a" | cut -c1-12)), B = $b ($(sha256sum "$b" | cut -c1-12))" >&2

run() { # side, binary, run number
  echo "== server-$1 run $3: bete-load --seats 5 --duration $window --submit stream $args" >&2
  # shellcheck disable=SC2086
  timeout 300 "$load" --seats 5 --duration "$window" --connections 8 \
    --submit stream --quiet --embed child --server-bin "$2" $args \
    --report "$out/server-$1.run$3.json" || echo "== server-$1 run $3 failed" >&2
}

for i in $(seq 1 "$pairs"); do
  run a "$a" "$i"
  run b "$b" "$i"
done
python3 clients/load/summarize.py "$out" server-a server-b
python3 - "$out" "$pairs" <<'PY'
import json, statistics, sys
d, n = sys.argv[1], int(sys.argv[2])
ratios = []
for i in range(1, n + 1):
    try:
        a = json.load(open(f"{d}/server-a.run{i}.json"))["server_cpu_us_per_move"]
        b = json.load(open(f"{d}/server-b.run{i}.json"))["server_cpu_us_per_move"]
    except (OSError, KeyError, TypeError):
        continue
    ratios.append(b / a)
if ratios:
    print(f"\nB/A server CPU per move, per pair: {', '.join(f'{r:.3f}' for r in ratios)}; "
          f"median {statistics.median(ratios):.3f}")
PY
