#!/usr/bin/env bash
# Connection flood (issue 26): a bete-server on loopback with its default limits, 1,000
# connections of each kind from 127.0.0.2 reopened as they close, fresh gRPC and web clients
# from 127.0.0.1 probing. Bounded: DURATION seconds (default 60) plus start and stop.
# Usage: clients/load/conn-flood.sh [path/to/bete-server]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../target/release/bete-server}
duration=${DURATION:-60}
per_kind=${PER_KIND:-1000}
data=$(mktemp -d)
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
grpc=$(port); web=$(port); metrics=$(port)
"$bin" --listen 127.0.0.1:$grpc --web-listen 127.0.0.1:$web --metrics-listen 127.0.0.1:$metrics \
  --data-dir "$data/data" --house-tables 0 >"$data/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$web/" >/dev/null && break; sleep 0.1; done
timeout $((duration + 60)) python3 "$here/conn-flood.py" --grpc 127.0.0.1:$grpc --web 127.0.0.1:$web \
  --per-kind "$per_kind" --duration "$duration"
curl -s "http://127.0.0.1:$metrics/metrics" | grep -E '^bete_connections_(refused|retired|open)' || true
