#!/usr/bin/env bash
# Budget flood (issue 26): a bete-server on loopback with its default limits; one address
# (127.0.0.1) registers bots, creates accounts and opens waiting tables as fast as it is
# answered while a normal bot on another address ([::1]) plays. Prints the server's memory
# growth and the normal bot's p99 against its baseline (budget-flood.py). Bounded: BASELINE +
# DURATION seconds (defaults 30 and 300) plus start and stop.
# WORKERS=0 runs the same without the flood: the normal bot's own growth, the control.
# SAMPLE_LOG=file appends, every SAMPLE_SECS (30), the server's RSS, its anonymous memory
# (smaps_rollup), the number of metric series and the tables gauges: where the growth goes.
# SERVER_ENV="K=V ..." sets the server's environment (e.g. MIMALLOC_PURGE_DELAY=0).
# Usage: clients/load/budget-flood.sh [path/to/bete-server]
#   (Python: the SDK's venv, made by `bash clients/python/run-tests.sh`, or PYTHON=...)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${1:-$root/target/release/bete-server}
py=${PYTHON:-$root/.tools/py-venv/bin/python}
data=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET6); s.bind(("::",0)); print(s.getsockname()[1])')
metrics=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# Dual stack: IPv4 clients arrive as IPv4-mapped addresses, each its own share.
env ${SERVER_ENV:-} "$bin" --listen "[::]:$port" --metrics-listen 127.0.0.1:$metrics --data-dir "$data/data" \
  --house-tables 0 >"$data/server.log" 2>&1 &
pid=$!
sampler=
trap 'kill $pid $sampler 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$metrics/metrics" >/dev/null && break; sleep 0.1; done
if [ -n "${SAMPLE_LOG:-}" ]; then
  (
    t0=$(date +%s)
    while kill -0 $pid 2>/dev/null; do
      m=$(curl -s "http://127.0.0.1:$metrics/metrics" || true)
      printf '%s rss_kib=%s anon_kib=%s series=%s %s\n' "$(( $(date +%s) - t0 ))" \
        "$(awk '/^VmRSS:/{print $2}' /proc/$pid/status)" \
        "$(awk '/^Anonymous:/{print $2}' /proc/$pid/smaps_rollup)" \
        "$(grep -vc '^#' <<<"$m")" \
        "$(grep -E '^bete_(tables_loaded|tables_waiting_stored|tables_active|table_handles) ' <<<"$m" | tr ' ' '=' | tr '\n' ' ')"
      sleep "${SAMPLE_SECS:-30}"
    done >>"$SAMPLE_LOG"
  ) &
  sampler=$!
fi
timeout $(( ${BASELINE:-30} + ${DURATION:-300} + 60 )) "$py" "$here/budget-flood.py" --port "$port" \
  --pid "$pid" --baseline "${BASELINE:-30}" --duration "${DURATION:-300}" --workers "${WORKERS:-8}"
curl -s "http://127.0.0.1:$metrics/metrics" | grep -E '^bete_(tables_loaded|tables_waiting_stored|tables_active|table_handles|refusals_delayed_total)' | head -20 || true
