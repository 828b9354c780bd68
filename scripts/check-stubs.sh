#!/usr/bin/env bash
# CI check of the schema and the committed stubs (fails on any difference):
#   1. buf lint (STANDARD + COMMENTS), buf format -d --exit-code and buf breaking (FILE rules)
#      against the schema as released at $BREAKING_BASE (read from git: needs that commit)
#   2. scripts/gen-stubs.sh, then no diff and no untracked file under the stub paths (Python,
#      Go, and the web page's TypeScript)
#   3. the Rust code generates and compiles (cargo check -p bete-api), the Go stubs compile
# buf is installed on first use: npm install --prefix .tools @bufbuild/buf@$BUF_VERSION.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

BUF_VERSION=1.75.0
# The last release of the schema: every change must stay wire- and source-compatible with it.
# Move it forward only with a release (a tag), never to let a breaking change through.
BREAKING_BASE=c02cbc0
buf=$root/.tools/node_modules/.bin/buf
stub_paths=(clients/python/bete clients/go/gen clients/web/src/gen)

if ! { [ -x "$buf" ] && [ "$("$buf" --version 2>/dev/null)" = "$BUF_VERSION" ]; }; then
  echo "check-stubs: installing @bufbuild/buf@$BUF_VERSION into .tools" >&2
  npm install --silent --no-audit --no-fund --prefix "$root/.tools" "@bufbuild/buf@$BUF_VERSION"
fi

echo "check-stubs: buf lint" >&2
"$buf" lint
echo "check-stubs: buf format" >&2
"$buf" format -d --exit-code
echo "check-stubs: buf breaking against $BREAKING_BASE" >&2
if ! git cat-file -e "$BREAKING_BASE^{commit}" 2>/dev/null; then
  echo "check-stubs: commit $BREAKING_BASE is not in this clone (fetch the full history)" >&2
  exit 1
fi
# The schema of that commit, extracted (works in a worktree, where .git is a file).
base=$(mktemp -d)
trap 'rm -rf "$base"' EXIT
git archive "$BREAKING_BASE" proto buf.yaml | tar -x -C "$base"
"$buf" breaking --against "$base"

echo "check-stubs: regenerating stubs" >&2
bash scripts/gen-stubs.sh

status=0
if ! git diff --exit-code --stat -- "${stub_paths[@]}"; then
  echo "check-stubs: committed stubs differ from proto/ (diff above); run scripts/gen-stubs.sh and commit" >&2
  status=1
fi
untracked=$(git ls-files --others --exclude-standard -- "${stub_paths[@]}")
if [ -n "$untracked" ]; then
  printf 'check-stubs: generated files not committed:\n%s\n' "$untracked" >&2
  status=1
fi
[ "$status" -eq 0 ] || exit "$status"

echo "check-stubs: Rust code generation (cargo check -p bete-api)" >&2
cargo check --quiet -p bete-api
echo "check-stubs: Go stubs compile" >&2
(cd clients/go && go build ./gen/... && go vet ./gen/...)
echo "check-stubs: Python stubs import" >&2
(cd clients/python && "$root/.tools/venv/bin/python" -c "import bete.v1.table_service_pb2_grpc, bete.v1.bot_service_pb2_grpc, bete.v1.errors_pb2")

echo "check-stubs: ok" >&2
