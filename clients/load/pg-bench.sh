#!/usr/bin/env bash
# One node on SQLite against one node on PostgreSQL, side by side in one run (docs/benchmarks.md,
# "One node: SQLite and PostgreSQL"): the same bete-load case against a child bete-server, the
# two stores alternating, RUNS times each. PostgreSQL is the throw-away server of scripts/pg.sh
# (fsync on, as SQLite's synchronous=FULL: a move is acknowledged after its commit), a fresh
# database per run. Besides bete-load's report, each PostgreSQL run records the CPU the
# PostgreSQL server used (`postgres_cpu_s`; its own server's only), since bete-load counts only
# the bete-server's.
#   cargo build --release -p bete-server -p bete-load
#   clients/load/pg-bench.sh                      # closed loop over 1,000 tables
#   CASE="--tables 1000 --rate 5000" RUNS=3 WINDOW=15s clients/load/pg-bench.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${BIN_DIR:-target/release}"
out="${OUT:-target/bench-pg}"
runs="${RUNS:-2}"
window="${WINDOW:-10s}"
case_args="${CASE:---tables 1000}"
mkdir -p "$out"

if [ -z "${BETE_TEST_DATABASE_URL:-}" ]; then
  exec bash scripts/pg.sh "$0" "$@"
fi

# CPU seconds (user + system) of this run's PostgreSQL server only (scripts/pg.sh's: its
# postmaster, found from the data folder beside $BETE_TEST_PG_RESTART, with the postmaster's
# reaped children, the backends of connections already closed, and its live children).
# Another PostgreSQL on the machine (a test's) is not counted; as clients/load/cluster-bench.sh.
pg_cpu() {
  python3 - <<'PY'
import os
hz = os.sysconf("SC_CLK_TCK")
def stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    return s[s.rindex(")") + 2:].split()
data = os.path.join(os.path.dirname(os.environ["BETE_TEST_PG_RESTART"]), "data")
with open(os.path.join(data, "postmaster.pid")) as f:
    master = f.readline().strip()
total = sum(int(x) for x in stat(master)[11:15])
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        fields = stat(pid)
    except OSError:
        continue
    if fields[1] == master:
        total += int(fields[11]) + int(fields[12])
print(total / hz)
PY
}

load() {
  # shellcheck disable=SC2086
  "$bin/bete-load" --seats 5 --duration "$window" --connections 8 --submit stream --quiet \
    --ceiling-duration 0s \
    --server-bin "$bin/bete-server" $case_args --report "$1"
}

for i in $(seq 1 "$runs"); do
  echo "== sqlite run $i: $case_args" >&2
  load "$out/sqlite.run$i.json"
  db="bench_${i}_$$_$RANDOM"
  psql -q "$BETE_TEST_DATABASE_URL" -c "CREATE DATABASE $db"
  echo "== postgres run $i: $case_args" >&2
  before=$(pg_cpu)
  BETE_DATABASE_URL="${BETE_TEST_DATABASE_URL%/*}/$db" BETE_NODE_ID="bench-$i" load "$out/postgres.run$i.json"
  after=$(pg_cpu)
  python3 - "$out/postgres.run$i.json" "$before" "$after" <<'PY'
import json, sys
path, before, after = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
r = json.load(open(path))
r["postgres_cpu_s"] = after - before
json.dump(r, open(path, "w"), indent=2)
PY
done

python3 - "$out" "$runs" <<'PY'
import json, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
print("| store | moves/s | ack p50 ms | ack p99 ms | server µs/move | PostgreSQL µs/move | errors |")
print("|---|---|---|---|---|---|---|")
for store in ("sqlite", "postgres"):
    rs = [json.load(open(f"{out}/{store}.run{i}.json")) for i in range(1, runs + 1)]
    def col(f, nd):
        v = [f(r) for r in rs]
        return f"{statistics.median(v):.{nd}f} ({min(v):.{nd}f}–{max(v):.{nd}f})"
    moves = col(lambda r: r["moves_per_s"], 0)
    p50 = col(lambda r: r["latency_ms"]["submit_to_ack"]["p50"], 2)
    p99 = col(lambda r: r["latency_ms"]["submit_to_ack"]["p99"], 2)
    cpu = col(lambda r: r["server_cpu_us_per_move"], 1)
    # PostgreSQL's CPU over the whole bete-load run (table creation and drain included) per move
    # of the window: an upper bound.
    pg = (col(lambda r: r["postgres_cpu_s"] / max(r["moves_per_s"] * r["window_s"], 1) * 1e6, 1)
          if store == "postgres" else "–")
    errs = sum(r["errors"]["total"] for r in rs)
    print(f"| {store} | {moves} | {p50} | {p99} | {cpu} | {pg} | {errs} |")
PY
