#!/usr/bin/env bash
# The "Ladders" benchmark of docs/benchmarks.md: ladder tables against plain tables of the same
# shape, side by side in one window, interleaved (ladder, plain, ladder, plain, ...) because the
# shared host drifts more between minutes than the two differ. Each pair: BOTS bots entered in a
# ladder (capacity 1, so BOTS/SEATS tables at once) and the same number of bots at as many plain
# tables (one table each), the same ruleset, seats and deals per match. Prints one line per run
# and the medians. Build first: cargo build --release -p bete-server -p bete-load
#   clients/load/ladder-bench.sh                       # 3 pairs, 1,000 bots, 20 s windows
#   PAIRS=5 BOTS=400 WINDOW=15s DUPLICATE=false clients/load/ladder-bench.sh
#   EXTRA="--rate 3000" OUT=target/bench-ladder-rate clients/load/ladder-bench.sh   # same moves/s
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${BIN_DIR:-target/release}"
out="${OUT:-target/bench-ladder}"
pairs="${PAIRS:-3}"
bots="${BOTS:-1000}"
seats="${SEATS:-4}"
rounds="${ROUNDS:-2}"
window="${WINDOW:-20s}"
duplicate="${DUPLICATE:-true}"
submit="${SUBMIT:-stream}"
mkdir -p "$out"
tables=$((bots / seats))
common=(--seats "$seats" --duration "$window" --connections 8 --submit "$submit" --quiet
        --ceiling-duration 0s --setup-timeout 300s --server-bin "$bin/bete-server"
        --config "rounds=$rounds")
# Extra flags for both kinds, e.g. EXTRA="--rate 3000" to compare at the same moves/s.
read -r -a extra <<< "${EXTRA:-}"
common+=("${extra[@]}")

for i in $(seq 1 "$pairs"); do
  echo "== pair $i: ladder" >&2
  "$bin/bete-load" --ladder --bots "$bots" --capacity 1 --duplicate "$duplicate" "${common[@]}" \
    --report "$out/ladder.run$i.json" || echo "== ladder run $i failed" >&2
  echo "== pair $i: plain" >&2
  "$bin/bete-load" --tables "$tables" --bots-per-seat "$tables" "${common[@]}" \
    --config max_extra_deals=0 --report "$out/plain.run$i.json" || echo "== plain run $i failed" >&2
done

python3 - "$out" "$pairs" <<'PY'
import json, os, statistics, sys
out, pairs = sys.argv[1], int(sys.argv[2])
def load(kind, i):
    p = os.path.join(out, f"{kind}.run{i}.json")
    return json.load(open(p)) if os.path.exists(p) else None
rows = {"ladder": [], "plain": []}
print("| pair | kind | load at start | moves/s | server µs/move | ack p99 ms | tables/min | sets/min | free→seated p50 / p99 / max ms | waiting at end (longest ms) | errors |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for i in range(1, pairs + 1):
    for kind in ("ladder", "plain"):
        r = load(kind, i)
        if r is None:
            print(f"| {i} | {kind} | failed |")
            continue
        rows[kind].append(r)
        l = r.get("ladder")
        per_min = r["matches_finished"] / r["window_s"] * 60
        seat = sets = wait = "–"
        if l:
            f = l["free_to_seated_ms"]
            seat = f"{f['p50']:.0f} / {f['p99']:.0f} / {f['max']:.0f}"
            sets = f"{l['sets_per_min']:.0f}"
            wait = f"{l['waiting_at_end']} ({l['longest_wait_at_end_ms']:.0f})"
        print(f"| {i} | {kind} | {r['machine'].get('load_1m_at_start') or 0:.1f} | {r['moves_per_s']:.0f} "
              f"| {r['server_cpu_us_per_move'] or 0:.1f} | {r['latency_ms']['submit_to_ack']['p99']:.1f} "
              f"| {per_min:.0f} | {sets} | {seat} | {wait} | {r['errors']['total']} |")
for kind, rs in rows.items():
    if rs:
        cpu = statistics.median(r["server_cpu_us_per_move"] or 0 for r in rs)
        mv = statistics.median(r["moves_per_s"] for r in rs)
        print(f"{kind}: median {mv:.0f} moves/s, {cpu:.1f} µs server CPU per move over {len(rs)} runs")
pairs_ok = [(l, p) for l, p in zip(rows["ladder"], rows["plain"])]
if pairs_ok:
    ratios = [l["server_cpu_us_per_move"] / p["server_cpu_us_per_move"] for l, p in pairs_ok
              if l["server_cpu_us_per_move"] and p["server_cpu_us_per_move"]]
    print("ladder/plain CPU per move, pair by pair: " + ", ".join(f"{x:.3f}" for x in ratios)
          + (f"; median {statistics.median(ratios):.3f}" if ratios else ""))
PY
