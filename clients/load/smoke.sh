#!/usr/bin/env bash
# CI smoke run of bete-load: a few seconds of tiny load against the real bete-server binary as a
# child process. Fails unless the harness stops by itself and its JSON and Markdown reports have
# the documented shape. Usage: clients/load/smoke.sh  (from anywhere; builds what it needs)
set -euo pipefail
cd "$(dirname "$0")/../.."
target="${CARGO_TARGET_DIR:-target}/debug"
# Under scripts/test.sh the binaries are built already (BETE_SERVER_BIN, BETE_LOAD_BIN).
if [ -z "${BETE_SERVER_BIN:-}" ] || [ -z "${BETE_LOAD_BIN:-}" ]; then
  cargo build -q -p bete-server -p bete-load
fi
server_bin=${BETE_SERVER_BIN:-$target/bete-server}
load_bin=${BETE_LOAD_BIN:-$target/bete-load}
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

run() {
    # `timeout` is only the CI guard: the harness must end well before it by itself.
    local status=0
    timeout 120 "$load_bin" --tables 4 --seats 3 --duration "${dur:-3s}" --ceiling-duration 1s \
        --drain 3s --embed child --server-bin "$server_bin" --config rounds=1 "$@" || status=$?
    if [ "$status" = 124 ]; then echo "smoke: bete-load did not stop by itself" >&2; exit 1; fi
    return "$status"
}

start=$(date +%s)
run --report "$out/report.json"
run --report "$out/report.md" --rate 200
run --report "$out/stream.json" --submit stream
# Ladder mode: 24 bots on a ladder the harness declares, seated by the server's scheduler.
# The window lasts until 10 tables have finished (8 were seated in setup, so some seatings
# happen in it), 60 s the cap: a slow machine makes it longer, not the checks below false.
dur=60s run --report "$out/ladder.json" --ladder --bots 24 --until-matches 10
end=$(date +%s)
echo "smoke: four runs took $((end - start)) s"

python3 - "$out/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
need = ["command", "versions", "machine", "moves_per_s", "events_per_s", "latency_ms", "errors",
        "ceiling_rps", "ratio_to_ceiling", "matches_finished", "server_cpu_s", "server_peak_rss_kib",
        "server_cpu_us_per_move", "stopped_by_itself", "submit"]
missing = [k for k in need if k not in r]
assert not missing, f"missing keys: {missing}"
for path in ("submit_to_ack", "submit_to_event_at_every_seat"):
    p = r["latency_ms"][path]
    assert all(isinstance(p[q], (int, float)) for q in ("p50", "p90", "p99", "p999", "max")), p
    assert 0 < p["p50"] <= p["p90"] <= p["p99"] <= p["p999"] <= p["max"], p
assert r["moves_per_s"] > 0 and r["events_per_s"] >= r["moves_per_s"], r["moves_per_s"]
assert r["ceiling_rps"] > 0 and r["ratio_to_ceiling"] > 0
assert isinstance(r["errors"]["by_code"], dict) and isinstance(r["errors"]["by_reason"], dict)
assert r["errors"]["total"] == 0, r["errors"]
assert r["stream"]["event_gaps"] == 0 and r["stream"]["event_duplicates"] == 0, r["stream"]
assert r["server"]["mode"] == "child" and r["server_cpu_s"] > 0 and r["server_peak_rss_kib"] > 0
assert r["stopped_by_itself"] is True
assert r["machine"]["cores"] >= 1
assert r["submit"] == "unary" and r["stream"]["submit_streams_opened"] == 0, r["submit"]
print(f"smoke: ok: {r['moves_per_s']:.0f} moves/s, p99 ack {r['latency_ms']['submit_to_ack']['p99']:.1f} ms, "
      f"ratio {r['ratio_to_ceiling']:.2f}")
PY
python3 - "$out/stream.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["submit"] == "stream" and r["stream"]["submit_streams_opened"] >= 1, r["stream"]
assert r["moves_per_s"] > 0 and r["errors"]["total"] == 0, r["errors"]
assert r["stream"]["event_gaps"] == 0 and r["stopped_by_itself"] is True
print(f"smoke: stream ok: {r['moves_per_s']:.0f} moves/s on {r['stream']['submit_streams_opened']} streams")
PY
python3 - "$out/ladder.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
l = r["ladder"]
assert r["errors"]["total"] == 0, r["errors"]
assert r["stream"]["event_gaps"] == 0 and r["stopped_by_itself"] is True
assert r["moves_per_s"] > 0 and r["server_cpu_us_per_move"] > 0
assert l["bots"] == 24 and l["bots_seated_in_setup"] == 24, l
assert l["tables_finished"] >= 10 and l["tables_per_min"] > 0, l
f = l["free_to_seated_ms"]
assert f["count"] == l["seated"] >= 1, l
assert f["count"] == l["new_match_seated_ms"]["count"] + l["next_rotation_seated_ms"]["count"], l
assert 0 <= f["p50"] <= f["p99"] <= f["max"], f
print(f"smoke: ladder ok: {l['tables_per_min']:.0f} tables/min, {l['sets_per_min']:.0f} sets/min, "
      f"free->seated p99 {f['p99']:.1f} ms")
PY
grep -q '^# bete-load report' "$out/report.md"
grep -q '| submit_to_ack |' "$out/report.md"
echo "smoke: markdown ok"
