#!/usr/bin/env bash
# Runs every test of the project, installing what it needs on the way (idempotent):
# Rust workspace tests (the PostgreSQL store's among them, beside a PostgreSQL that
# scripts/pg.sh installs if missing and starts), schema lint, compatibility and stub freshness, the Python (with the
# bete-engine wheel, built by maturin) and Go SDK
# suites against the real server, Kubernetes manifests, the protocol guide's walk-through bots
# (scripts/walkthrough.sh), the web page in Chromium against the real server, and the load
# harness smoke run.
#
#   bash scripts/test.sh            # everything
#   BETE_SKIP="python go" bash scripts/test.sh   # skip parts while iterating
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PATH="$root/.tools/bin:$PATH"

skip() { [[ " ${BETE_SKIP:-} " == *" $1 "* ]]; }
step() { printf '\n==> %s\n' "$*"; }

results=()
record() { results+=("$1"); }

if ! skip lint; then
  step "rustfmt and clippy"
  cargo fmt --all --check
  cargo clippy --workspace --all-targets --locked -- -D warnings
  record "lint: ok"
fi

if ! skip rust; then
  step "cargo test --workspace (beside a throw-away PostgreSQL: scripts/pg.sh)"
  bash scripts/pg.sh cargo test --workspace --locked
  record "rust: ok"
fi

if ! skip proto && [ -x scripts/check-stubs.sh ]; then
  step "schema lint, format and generated stubs"
  bash scripts/check-stubs.sh
  record "proto: ok"
fi

if ! skip deploy; then
  step "Kubernetes manifests: kustomize build, offline schema validation; alert rules and dashboard against the real server's metrics"
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
  if [ -z "${BETE_SERVER_BIN:-}" ]; then
    cargo build -p bete-server --locked
  fi
  BETE_SERVER_BIN=${BETE_SERVER_BIN:-$root/target/debug/bete-server} \
    "$kvenv/bin/python" -m pytest deploy/tests -p no:cacheprovider -q
  record "deploy: ok"
fi

if ! skip python && [ -x clients/python/run-tests.sh ]; then
  step "Python SDK against the real server (and the bete-engine wheel, built by maturin)"
  cargo build -p bete-server --locked
  bash clients/python/run-tests.sh
  record "python: ok"
fi

if ! skip go && [ -x clients/go/run-tests.sh ]; then
  step "Go SDK against the real server"
  cargo build -p bete-server --locked
  bash clients/go/run-tests.sh
  record "go: ok"
fi

if ! skip walkthrough; then
  step "the guide's first bot, from generated stubs only (Python, Go; TypeScript stubs)"
  bash scripts/walkthrough.sh
  record "walkthrough: ok"
fi

if ! skip web; then
  step "web page: build freshness, size, browser tests (Chromium)"
  bash scripts/test-web.sh
  record "web: ok"
fi

if ! skip load && [ -x clients/load/smoke.sh ]; then
  step "load harness smoke run"
  bash clients/load/smoke.sh
  record "load: ok"
fi

step "summary"
printf '%s\n' "${results[@]}"
