#!/usr/bin/env bash
# Vet and test the Go SDK. The e2e tests start the real server: $BETE_SERVER_BIN (default
# <repo>/target/debug/bete-server, built by `cargo build -p bete-server`), and the mixed-table
# test runs the Python SDK with $BETE_PYTHON (default <repo>/.tools/py-venv/bin/python).
set -euo pipefail
cd "$(dirname "$0")"
go vet ./...
go test -count=1 -timeout 5m ./... "$@"
