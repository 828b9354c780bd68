#!/usr/bin/env bash
# Runs every test of the project, installing what it needs on the way (idempotent). The parts, in
# order (each a name for BETE_SKIP):
#   lint         rustfmt and clippy
#   rust         cargo test --workspace, beside a throw-away PostgreSQL (scripts/pg.sh installs it)
#   proto        schema lint, compatibility and generated stubs' freshness (scripts/check-stubs.sh)
#   deploy       Kubernetes manifests, alert rules and dashboard against the real server's metrics
#   python       the Python SDK (and the bete-engine wheel, built by maturin) against the real server
#   go           the Go SDK against the real server
#   walkthrough  the protocol guide's first bots from generated stubs (scripts/walkthrough.sh)
#   web          the web page in Chromium against the real server (scripts/test-web.sh)
#   load         the load harness smoke run (clients/load/smoke.sh)
#
#   bash scripts/test.sh                          # everything
#   BETE_SKIP="python go" bash scripts/test.sh    # skip parts while iterating
#
# Every part runs even when an earlier one failed (a part stops at its own first failure); the
# run ends with a summary of all parts (ok, FAILED or skipped, with the time each took) and exits
# non-zero if any part failed.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PATH="$root/.tools/bin:$PATH"
# A test run builds everything once: incremental files would only cost disk (9.5 GB of a 29 GB
# target/ once). Set CARGO_INCREMENTAL=1 to keep them.
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}

PARTS=(lint rust proto deploy python go walkthrough web load)

for name in ${BETE_SKIP:-}; do
  if [[ " ${PARTS[*]} " != *" $name "* ]]; then
    echo "test.sh: BETE_SKIP names an unknown part '$name' (parts: ${PARTS[*]})" >&2
    exit 2
  fi
done

skip() { [[ " ${BETE_SKIP:-} " == *" $1 "* ]]; }

# The binaries the later parts start (bete-server; bete-load for the smoke run): one build for all
# of them, made by the same command as the rust part's, so after that part it compiles nothing.
# (`cargo build -p bete-server` resolves features without the workspace's dev-dependencies: tokio,
# tonic, libc and everything above them came out different and were compiled a second time.)
# With the rust part skipped (iterating on the others) the two binaries alone are built instead.
# The scripts below build only when BETE_SERVER_BIN is unset, i.e. when run on their own.
server_bin() {
  if [ -z "${BETE_SERVER_BIN:-}" ]; then
    if skip rust; then
      cargo build -p bete-server -p bete-load --locked --quiet
    else
      cargo test --workspace --locked --no-run --quiet
    fi
    export BETE_SERVER_BIN=$root/target/debug/bete-server BETE_LOAD_BIN=$root/target/debug/bete-load
  fi
}

part_lint() {
  cargo fmt --all --check
  cargo clippy --workspace --all-targets --locked -- -D warnings
}

part_rust() {
  bash scripts/pg.sh cargo test --workspace --locked --no-fail-fast
}

part_proto() {
  bash scripts/check-stubs.sh
}

part_deploy() {
  if ! command -v kustomize >/dev/null; then
    GOBIN="$root/.tools/bin" go install sigs.k8s.io/kustomize/kustomize/v5@v5.5.0
  fi
  # The checks' Python tools (deploy/tools/requirements.txt, exact pins) in a venv of their own,
  # reinstalled only when the pins change.
  kvenv=$root/.tools/k8s-venv
  kreq=deploy/tools/requirements.txt
  if [ ! -x "$kvenv/bin/python" ]; then
    python3 -m venv "$kvenv"
  fi
  if [ "$(cat "$kvenv/.bete-requirements" 2>/dev/null)" != "$(sha256sum <"$kreq")" ]; then
    "$kvenv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$kreq"
    sha256sum <"$kreq" >"$kvenv/.bete-requirements"
  fi
  # Every overlay renders and validates (deploy/tools/validate.py says what is checked).
  "$kvenv/bin/python" deploy/tools/validate.py
  # The validator refuses broken manifests; the manifests' environment starts a real
  # bete-server; the metrics the alerts and the dashboard use are the ones it exports.
  server_bin
  "$kvenv/bin/python" -m pytest deploy/tests -p no:cacheprovider -q
}

part_python() {
  server_bin
  bash clients/python/run-tests.sh
}

part_go() {
  server_bin
  bash clients/go/run-tests.sh
}

part_walkthrough() {
  server_bin
  bash scripts/walkthrough.sh
}

part_web() {
  server_bin
  bash scripts/test-web.sh
}

part_load() {
  server_bin
  bash clients/load/smoke.sh
}

declare -A title=(
  [lint]="rustfmt and clippy"
  [rust]="cargo test --workspace (beside a throw-away PostgreSQL: scripts/pg.sh)"
  [proto]="schema lint, format and generated stubs"
  [deploy]="Kubernetes manifests: kustomize build, offline schema validation; alert rules and dashboard against the real server's metrics"
  [python]="Python SDK against the real server (and the bete-engine wheel, built by maturin)"
  [go]="Go SDK against the real server"
  [walkthrough]="the guide's first bot, from generated stubs only (Python, Go; TypeScript stubs)"
  [web]="web page: build freshness, size, browser tests (Chromium)"
  [load]="load harness smoke run"
)
declare -A needs=(
  [proto]=scripts/check-stubs.sh [python]=clients/python/run-tests.sh
  [go]=clients/go/run-tests.sh [load]=clients/load/smoke.sh
)

summary=()
failed=0
took() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
for name in "${PARTS[@]}"; do
  if skip "$name"; then
    summary+=("$(printf '%-12s skipped (BETE_SKIP)' "$name")")
    continue
  fi
  if [ -n "${needs[$name]:-}" ] && [ ! -e "${needs[$name]}" ]; then
    summary+=("$(printf '%-12s skipped (no %s)' "$name" "${needs[$name]}")")
    continue
  fi
  printf '\n==> %s: %s\n' "$name" "${title[$name]}"
  start=$SECONDS
  # A subshell with -e: the part stops at its own first failure, and the others still run.
  (set -e; "part_$name")
  status=$?
  if [ "$status" -eq 0 ]; then
    summary+=("$(printf '%-12s ok      %s' "$name" "$(took $((SECONDS - start)))")")
  else
    failed=1
    summary+=("$(printf '%-12s FAILED  %s  (exit %d)' "$name" "$(took $((SECONDS - start)))" "$status")")
  fi
done

printf '\n==> summary\n'
printf '%s\n' "${summary[@]}"
if [ "$failed" -ne 0 ]; then
  echo "test.sh: some parts FAILED (see above; rerun one with BETE_SKIP naming the others)" >&2
  exit 1
fi
