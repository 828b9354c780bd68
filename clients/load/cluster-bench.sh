#!/usr/bin/env bash
# Scale-out side by side in one run (docs/benchmarks.md, "Scale-out: one node on SQLite, one on
# PostgreSQL, three on one PostgreSQL"): the same bete-load case against
#   sqlite   one bete-server on SQLite,
#   pg-1     one bete-server on PostgreSQL,
#   pg-3     three bete-servers on one PostgreSQL (bete-load --targets: each table on one node),
# alternating, RUNS times each. Every node is started here the same way (release build, default
# runtime: one worker per core but one), so the three cases are measured alike: server CPU is the
# user + system time of the node processes and PostgreSQL CPU that of the bench's PostgreSQL server, each
# over the whole bete-load run, divided by the moves the nodes applied over the same run (their
# `bete_moves_total`); moves/s and the ack percentiles are bete-load's, over its window.
# PostgreSQL is the throw-away server of scripts/pg.sh (fsync on: a move is acknowledged after
# its commit, as SQLite's synchronous=FULL), a fresh database per run. Bounded: each bete-load
# run stops by itself; nodes get SIGTERM afterwards.
#   cargo build --release -p bete-server -p bete-load
#   clients/load/cluster-bench.sh
#   CASE="--tables 600" RUNS=2 WINDOW=15s clients/load/cluster-bench.sh
#   NODES=1 clients/load/cluster-bench.sh     # SQLite and one node on PostgreSQL only
#   PROFILE=1 NODES=1 RUNS=1 clients/load/cluster-bench.sh   # + statements and WAL of each PG run
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${BIN_DIR:-target/release}"
out="${OUT:-target/bench-cluster}"
runs="${RUNS:-1}"
window="${WINDOW:-10s}"
case_args="${CASE:---tables 600}"
mkdir -p "$out"

if [ -z "${BETE_TEST_DATABASE_URL:-}" ]; then
  if [ -n "${PROFILE:-}" ]; then
    # PROFILE=1: every statement's calls and time (pg_stat_statements) and the WAL written
    # (pg_waldump --stats) over each PostgreSQL run, in $out/NAME.statements.txt and .wal.txt.
    export BETE_PG_OPTIONS="-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track_planning=on -c pg_stat_statements.max=2000 -c log_autovacuum_min_duration=0"
  fi
  exec bash scripts/pg.sh "$0" "$@"
fi

# PROFILE=1, before a run: statistics reset, the WAL position.
profile_start() {
  psql -qtA "$1" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" \
    -c "SELECT pg_stat_statements_reset()" >/dev/null
  psql -qtA "$1" -c "SELECT pg_current_wal_insert_lsn()"
}

# PROFILE=1, after a run: the statements of this run's database, and the WAL since $3.
profile_end() {
  local url=$1 name=$2 lsn0=$3 moves=$4 lsn1 pgbin
  lsn1=$(psql -qtA "$url" -c "SELECT pg_current_wal_insert_lsn()")
  {
    echo "moves applied: $moves; WAL $lsn0 .. $lsn1"
    psql -q "$url" -c "SELECT calls, round((calls::numeric / $moves), 3) AS per_move, rows,
        round(total_exec_time::numeric, 1) AS exec_ms, round(total_plan_time::numeric, 1) AS plan_ms,
        plans, round((1000 * total_exec_time / $moves)::numeric, 2) AS exec_us_per_move,
        wal_records, wal_bytes, left(regexp_replace(query, '\s+', ' ', 'g'), 200) AS query
      FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
      ORDER BY total_exec_time DESC LIMIT 40"
  } >"$out/$name.statements.txt"
  # PostgreSQL's live processes by role (their CPU so far), and what autovacuum used (its
  # workers are reaped: their CPU is in the postmaster's children's, logged per run).
  {
    echo "live PostgreSQL processes, CPU seconds since the server started:"
    local master
    master=$(head -n 1 "$(dirname "$BETE_TEST_PG_RESTART")/data/postmaster.pid")
    for pid in $(pgrep -P "$master"); do
      awk -v hz="$(getconf CLK_TCK)" -v cmd="$(tr '\0' ' ' <"/proc/$pid/cmdline")" \
        '{ split($0, a, ") "); split(a[2], f, " "); printf "  %7.2f  %s\n", (f[12] + f[13]) / hz, cmd }' \
        "/proc/$pid/stat" 2>/dev/null
    done
    echo "autovacuum and autoanalyze runs so far (server log):"
    grep -o "automatic \(vacuum\|analyze\) of table \"[^\"]*\"" "$(dirname "$BETE_TEST_PG_RESTART")/log" | sort | uniq -c || true
    { grep -o "CPU: user: [0-9.]* s, system: [0-9.]* s" "$(dirname "$BETE_TEST_PG_RESTART")/log" || true; } |
      awk '{ u += $3; s += $6 } END { printf "  autovacuum CPU in all: %.2f s\n", u + s }'
  } >>"$out/$name.statements.txt"
  pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
  "$pgbin/pg_waldump" --stats=record -p "$(dirname "$BETE_TEST_PG_RESTART")/data/pg_wal" \
    -s "$lsn0" -e "$lsn1" >"$out/$name.wal.txt" 2>&1 || true
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# CPU seconds (user + system) of the given pids, or with "postgres" of this run's PostgreSQL
# server only (scripts/pg.sh's: its postmaster, from the data folder beside
# $BETE_TEST_PG_RESTART, with the postmaster's reaped children, and its live children): another
# PostgreSQL on the machine (a test's) is not counted.
cpu() {
  python3 - "$@" <<'PY'
import os, sys
hz = os.sysconf("SC_CLK_TCK")
def stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    return s[s.index("(") + 1:s.rindex(")")], s[s.rindex(")") + 2:].split()
total = 0
if sys.argv[1:] == ["postgres"]:
    data = os.path.join(os.path.dirname(os.environ["BETE_TEST_PG_RESTART"]), "data")
    with open(os.path.join(data, "postmaster.pid")) as f:
        master = f.readline().strip()
    _, fields = stat(master)
    total += sum(int(x) for x in fields[11:15])
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            _, fields = stat(pid)
        except OSError:
            continue
        if fields[1] == master:
            total += int(fields[11]) + int(fields[12])
else:
    for pid in sys.argv[1:]:
        _, fields = stat(pid)
        total += int(fields[11]) + int(fields[12])
print(total / hz)
PY
}

# Sum of bete_moves_total over the given metrics addresses.
moves() {
  python3 - "$@" <<'PY'
import sys, urllib.request
total = 0
for addr in sys.argv[1:]:
    with urllib.request.urlopen(f"http://{addr}/metrics", timeout=5) as r:
        for line in r.read().decode().splitlines():
            if line.startswith("bete_moves_total "):
                total += float(line.split()[1])
print(int(total))
PY
}

# Sum over the given pids of a /proc/PID/status field in KiB (VmRSS, VmHWM).
mem() {
  local field=$1 total=0 pid v
  shift
  for pid in "$@"; do
    v=$(awk -v f="$field:" '$1 == f { print $2 }' "/proc/$pid/status")
    total=$((total + v))
  done
  echo "$total"
}

# Transactions committed in a database so far (pg_stat_database), 0 without one.
commits() {
  if [ -z "$1" ]; then
    echo 0
    return
  fi
  psql -qtA "$BETE_TEST_DATABASE_URL" -c \
    "SELECT xact_commit FROM pg_stat_database WHERE datname = '${1##*/}'"
}

wait_healthy() {
  for _ in $(seq 1 200); do
    if python3 -c "import urllib.request,sys; urllib.request.urlopen('http://$1/healthz', timeout=1)" 2>/dev/null; then
      return 0
    fi
    sleep 0.1
  done
  echo "node at $1 did not become healthy" >&2
  return 1
}

# run NAME NODES [DATABASE_URL]: start NODES nodes, run bete-load against them, stop them.
run() {
  local name=$1 n=$2 url=${3:-} i
  local pids=() addrs=() metrics=()
  local dir
  dir=$(mktemp -d "$out/$name.XXXX")
  for i in $(seq 1 "$n"); do
    local port mport
    port=$(free_port)
    mport=$(free_port)
    local store=(--data-dir "$dir/data$i")
    if [ -n "$url" ]; then
      store=(--database-url "$url" --node-id "node$i" --advertise-addr "127.0.0.1:$port")
    fi
    RUST_LOG=warn "$bin/bete-server" --listen "127.0.0.1:$port" --metrics-listen "127.0.0.1:$mport" \
      --no-web --house-tables 0 "${store[@]}" 2>"$dir/node$i.log" &
    pids+=($!)
    addrs+=("127.0.0.1:$port")
    metrics+=("127.0.0.1:$mport")
  done
  for m in "${metrics[@]}"; do wait_healthy "$m"; done
  local targets
  targets=$(IFS=,; echo "${addrs[*]}")
  local target_args=(--server "$targets")
  if [ "$n" -gt 1 ]; then
    target_args=(--targets "$targets")
  fi
  local cpu0 pg0 moves0 cpu1 pg1 moves1 rss0 hwm1 commits0 commits1
  cpu0=$(cpu "${pids[@]}")
  pg0=$(cpu postgres)
  moves0=$(moves "${metrics[@]}")
  rss0=$(mem VmRSS "${pids[@]}")
  commits0=$(commits "$url")
  local lsn0=""
  if [ -n "${PROFILE:-}" ] && [ -n "$url" ]; then
    lsn0=$(profile_start "$url")
  fi
  # shellcheck disable=SC2086
  "$bin/bete-load" --seats 5 --duration "$window" --connections 4 --submit stream --quiet \
    --ceiling-duration 0s "${target_args[@]}" $case_args --report "$out/$name.json"
  cpu1=$(cpu "${pids[@]}")
  pg1=$(cpu postgres)
  moves1=$(moves "${metrics[@]}")
  hwm1=$(mem VmHWM "${pids[@]}")
  # The statistics collector reports with a delay of up to a second.
  sleep 1
  commits1=$(commits "$url")
  if [ -n "$lsn0" ]; then
    profile_end "$url" "$name" "$lsn0" "$((moves1 - moves0))"
  fi
  kill -TERM "${pids[@]}"
  wait "${pids[@]}" || true
  python3 - "$out/$name.json" "$n" "$cpu0" "$cpu1" "$pg0" "$pg1" "$moves0" "$moves1" "$(cat /proc/loadavg)" \
    "$rss0" "$hwm1" "$commits0" "$commits1" <<'PY'
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
cpu0, cpu1, pg0, pg1 = map(float, sys.argv[3:7])
m0, m1 = int(sys.argv[7]), int(sys.argv[8])
rss0, hwm1, c0, c1 = map(int, sys.argv[10:14])
r = json.load(open(path))
r["bench"] = {
    "nodes": n,
    "node_cpu_s": cpu1 - cpu0,
    "postgres_cpu_s": pg1 - pg0,
    "node_moves": m1 - m0,
    "loadavg_after": sys.argv[9],
    # Memory of the nodes once serving and at their peak (tables, bots, streams).
    "nodes_rss_start_kib": rss0,
    "nodes_peak_rss_kib": hwm1,
    # Transactions PostgreSQL committed in the bench database over the run (all nodes).
    "postgres_commits": c1 - c0,
}
json.dump(r, open(path, "w"), indent=2)
PY
  rm -rf "$dir"
}

echo "load average before: $(cat /proc/loadavg)" | tee "$out/loadavg.txt" >&2
for i in $(seq 1 "$runs"); do
  echo "== sqlite run $i: $case_args" >&2
  run "sqlite.run$i" 1
  for n in ${NODES:-1 3}; do
    db="cbench_${n}_${i}_$$_$RANDOM"
    psql -q "$BETE_TEST_DATABASE_URL" -c "CREATE DATABASE $db"
    echo "== postgres, $n node(s), run $i: $case_args" >&2
    run "pg-$n.run$i" "$n" "${BETE_TEST_DATABASE_URL%/*}/$db"
  done
done
echo "load average after: $(cat /proc/loadavg)" | tee -a "$out/loadavg.txt" >&2

python3 - "$out" "$runs" <<'PY'
import json, os, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
print("| setup | moves/s | ack p50 ms | ack p99 ms | node CPU µs/move | PostgreSQL CPU µs/move | PG commits/s per node | node memory KiB/table | errors |")
print("|---|---|---|---|---|---|---|---|---|")
for name, label in (("sqlite", "1 node, SQLite"), ("pg-1", "1 node, PostgreSQL"), ("pg-3", "3 nodes, one PostgreSQL")):
    if not os.path.exists(f"{out}/{name}.run1.json"):
        continue  # a setup not run (NODES=1)
    rs = [json.load(open(f"{out}/{name}.run{i}.json")) for i in range(1, runs + 1)]
    def col(f, nd):
        v = [f(r) for r in rs]
        if len(v) == 1:
            return f"{v[0]:.{nd}f}"
        return f"{statistics.median(v):.{nd}f} ({min(v):.{nd}f}–{max(v):.{nd}f})"
    per_move = lambda key: (lambda r: r["bench"][key] / max(r["bench"]["node_moves"], 1) * 1e6)
    pg = col(per_move("postgres_cpu_s"), 1) if name != "sqlite" else "–"
    # Commits over the whole run, per second of the window and per node: an upper bound.
    commits = (col(lambda r: r["bench"]["postgres_commits"] / r["window_s"] / r["bench"]["nodes"], 0)
               if name != "sqlite" else "–")
    tables = lambda r: r["settings"]["tables"]
    memory = col(lambda r: (r["bench"]["nodes_peak_rss_kib"] - r["bench"]["nodes_rss_start_kib"])
                 / max(tables(r), 1), 1)
    errs = sum(r["errors"]["total"] for r in rs)
    print(f"| {label} | {col(lambda r: r['moves_per_s'], 0)} | "
          f"{col(lambda r: r['latency_ms']['submit_to_ack']['p50'], 2)} | "
          f"{col(lambda r: r['latency_ms']['submit_to_ack']['p99'], 2)} | "
          f"{col(per_move('node_cpu_s'), 1)} | {pg} | {commits} | {memory} | {errs} |")
PY
