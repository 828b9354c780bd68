#!/usr/bin/env bash
# "Bots meet bots" (issue 24): eight outside bots from the CLI (four heuristic, four random)
# enter the default server's `beste-boer-4` together and play 24 tables each; prints the share of
# the seats at their tables held by outside bots, the pairs of them that met, and the sets after
# which two outside bots online with the house entrants first met.
# Needs target/release/{bete-server,bete}: cargo build --release -p bete-server -p bete-client
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${BIN:-target/release}
port=${PORT:-50191}
url=http://127.0.0.1:$port
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
start_server() {
  rm -rf "$work/data"
  BETE_LOG=warn "$bin/bete-server" --listen 127.0.0.1:$port --data-dir "$work/data" \
    --metrics-listen 127.0.0.1:0 --web-listen 127.0.0.1:0 >"$work/server.log" 2>&1 &
  server=$!
  for _ in $(seq 100); do "$bin/bete" ladder list --server "$url" >/dev/null 2>&1 && return; sleep 0.1; done
  echo "server did not start" >&2; exit 1
}
count() { # $1: bots' names prefix
  "$bin/bete" ladder matches beste-boer-4 --server "$url" --limit 200 --json >"$work/matches.json"
  python3 - "$work/matches.json" "$1" <<'PY'
import json, sys, itertools
ms = [m for m in json.load(open(sys.argv[1]))["matches"] if m["state"] == "rated"]
ms.sort(key=lambda m: m["started_at"])
pre = sys.argv[2]
ours = lambda m: [e["bot_name"] for e in m["entrants"] if e["bot_name"].startswith(pre)]
with_ours = [m for m in ms if ours(m)]
theirs = sum(len(ours(m)) for m in with_ours)
seats = sum(len(m["entrants"]) for m in with_ours)
names = sorted({n for m in with_ours for n in ours(m)})
pairs = {tuple(sorted(p)) for m in with_ours for p in itertools.combinations(ours(m), 2)}
print(f"sets {len(with_ours)}; outside seats {theirs} of {seats} = {100*theirs/max(seats,1):.1f} %; "
      f"pairs met {len(pairs)} of {len(names)*(len(names)-1)//2}")
if len(names) == 2:
    seen = {n: 0 for n in names}
    for m in with_ours:
        for n in ours(m): seen[n] += 1
        if len(ours(m)) == 2:
            print(f"the two met in set {seen[names[0]]} of {names[0]} and {seen[names[1]]} of {names[1]}")
            break
    else:
        print("the two never met")
PY
}
# Eight bots, 24 tables (six sets) each.
start_server
for i in 1 2 3 4 5 6 7 8; do
  s=heuristic; [ $((i % 2)) = 0 ] && s=random
  "$bin/bete" bot --server "$url" --ladder beste-boer-4 --strategy $s --name "meet$i" --matches 24 \
    >"$work/bot$i.log" 2>&1 &
  bots+=($!)
done
wait "${bots[@]}"
echo "eight bots, 24 tables each:"; count meet
kill "$server"; wait "$server" 2>/dev/null || true
# Two bots, three sets (12 tables) each.
start_server
bots=()
for i in 1 2; do
  "$bin/bete" bot --server "$url" --ladder beste-boer-4 --strategy heuristic --name "duo$i" --matches 12 \
    >"$work/duo$i.log" 2>&1 &
  bots+=($!)
done
wait "${bots[@]}"
echo "two bots, 12 tables each:"; count duo
