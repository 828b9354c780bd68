#!/usr/bin/env bash
# Runs the Python SDK's tests against the real server. Needs the server built first
# (`cargo build -p bete-server`, or BETE_SERVER_BIN pointing at a binary).
#   - creates/uses the venv .tools/py-venv (repo root; .tools/ is gitignored)
#   - installs clients/python/requirements-dev.txt (exact pins) and `pip install -e clients/python`
#   - builds the bete-engine wheel (clients/python-engine) with maturin into target/wheels and
#     installs it, so the tests use the engine as a bot author gets it
#   - runs pytest on clients/python/tests; extra arguments go to pytest
# Exits non-zero on any failure, and also when no test ran.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
venv=$root/.tools/py-venv
py=$venv/bin/python
req=clients/python/requirements-dev.txt
stamp=$venv/.bete-requirements

if [ ! -x "$py" ]; then
  echo "run-tests: creating $venv" >&2
  python3 -m venv "$venv"
fi
# Reinstall only when the pins or the package metadata changed.
want=$(cat "$req" clients/python/pyproject.toml | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ] || ! "$py" -c "import bete_bot, bete.v1.table_service_pb2_grpc" 2>/dev/null; then
  "$py" -m pip install --quiet --disable-pip-version-check -r "$req"
  "$py" -m pip install --quiet --disable-pip-version-check -e clients/python
  echo "$want" >"$stamp"
fi

# The engine's wheel: a release build (playouts are its point), reinstalled only when it was
# rebuilt (cargo decides; an up-to-date build takes seconds).
wheels=$root/target/wheels
rm -f "$wheels"/bete_engine-*.whl
"$venv/bin/maturin" build --quiet --release --locked -m clients/python-engine/Cargo.toml -o "$wheels" -i "$py"
"$py" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheels"/bete_engine-*.whl

export BETE_SERVER_BIN=${BETE_SERVER_BIN:-$root/target/debug/bete-server}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
"$py" -m pytest clients/python/tests -p no:cacheprovider "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  echo "run-tests: pytest failed (exit $status)" >&2
  exit "$status"
fi
if ! grep -Eq '[0-9]+ passed' "$log"; then
  echo "run-tests: no test passed; treating as a failure" >&2
  exit 1
fi
