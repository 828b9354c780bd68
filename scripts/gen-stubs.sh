#!/usr/bin/env bash
# Regenerates the committed protobuf stubs from proto/bete/v1 with pinned tools:
#   Python  clients/python/bete/v1/*_pb2.py, *_pb2.pyi, *_pb2_grpc.py   (import as bete.v1.xxx_pb2)
#   Go      clients/go/gen/bete/v1/*.pb.go, *_grpc.pb.go                 (package betev1)
#   TS      clients/web/src/gen/bete/v1/*_pb.ts  (@bufbuild/protobuf v2, by buf + protoc-gen-es
#           pinned in clients/web/package-lock.json; `npm ci` there on first use)
# The Rust code is generated at build time by service/api/build.rs (cargo build -p bete-api).
#
# Tools are installed on first use into .tools/ (gitignored):
#   .tools/venv            python3 -m venv + grpcio-tools==$GRPCIO_TOOLS_VERSION (its protoc runs every generator)
#   .tools/bin/protoc-gen-go, protoc-gen-go-grpc   via GOBIN=.tools/bin go install ...@pinned
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

GRPCIO_TOOLS_VERSION=1.85.1
PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2
GO_STUB_MODULE=github.com/bete-game/bete/clients/go/gen

tools=$root/.tools
venv=$tools/venv
py=$venv/bin/python

# --- pinned tools -------------------------------------------------------------------------
if ! "$py" -c "import sys, importlib.metadata as m; sys.exit(m.version('grpcio-tools') != '$GRPCIO_TOOLS_VERSION')" 2>/dev/null; then
  echo "gen-stubs: installing grpcio-tools==$GRPCIO_TOOLS_VERSION into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "grpcio-tools==$GRPCIO_TOOLS_VERSION"
fi

# go_tool NAME PACKAGE MODULE VERSION: install .tools/bin/NAME unless it is already MODULE@VERSION.
go_tool() {
  local bin=$tools/bin/$1
  if ! { [ -x "$bin" ] && go version -m "$bin" 2>/dev/null | grep -qE "^[[:space:]]+mod[[:space:]]+$3[[:space:]]+$4([[:space:]]|$)"; }; then
    echo "gen-stubs: installing $1 $4 into $tools/bin" >&2
    GOBIN=$tools/bin go install "$2@$4"
  fi
}
go_tool protoc-gen-go google.golang.org/protobuf/cmd/protoc-gen-go \
  google.golang.org/protobuf "$PROTOC_GEN_GO_VERSION"
go_tool protoc-gen-go-grpc google.golang.org/grpc/cmd/protoc-gen-go-grpc \
  google.golang.org/grpc/cmd/protoc-gen-go-grpc "$PROTOC_GEN_GO_GRPC_VERSION"

protos=(proto/bete/v1/*.proto)
py_out=clients/python
go_out=clients/go/gen

# --- Python -------------------------------------------------------------------------------
mkdir -p "$py_out/bete/v1"
rm -f "$py_out"/bete/v1/*_pb2.py "$py_out"/bete/v1/*_pb2.pyi "$py_out"/bete/v1/*_pb2_grpc.py
"$py" -m grpc_tools.protoc -Iproto \
  --python_out="$py_out" --pyi_out="$py_out" --grpc_python_out="$py_out" \
  "${protos[@]}"
# Only the services have gRPC stubs: drop the empty *_pb2_grpc.py of message-only files.
for f in "$py_out"/bete/v1/*_pb2_grpc.py; do
  grep -q "class .*Stub" "$f" || rm -f "$f"
done
printf '"""Generated protobuf and gRPC stubs of the bete API (package bete.v1).\n\nRegenerate with scripts/gen-stubs.sh; do not edit.\n"""\n' >"$py_out/bete/__init__.py"
printf '"""Generated from proto/bete/v1 by scripts/gen-stubs.sh; do not edit."""\n' >"$py_out/bete/v1/__init__.py"

# --- Go -----------------------------------------------------------------------------------
mkdir -p "$go_out/bete/v1"
rm -f "$go_out"/bete/v1/*.pb.go
"$py" -m grpc_tools.protoc -Iproto \
  --plugin=protoc-gen-go="$tools/bin/protoc-gen-go" \
  --plugin=protoc-gen-go-grpc="$tools/bin/protoc-gen-go-grpc" \
  --go_out="$go_out" --go_opt=module="$GO_STUB_MODULE" \
  --go-grpc_out="$go_out" --go-grpc_opt=module="$GO_STUB_MODULE" \
  "${protos[@]}"

# --- TypeScript (the web page) --------------------------------------------------------------
web=clients/web
if ! { [ -x "$web/node_modules/.bin/buf" ] && [ -x "$web/node_modules/.bin/protoc-gen-es" ]; }; then
  echo "gen-stubs: npm ci in $web" >&2
  (cd "$web" && npm ci --silent --no-audit --no-fund)
fi
(cd "$web" && node_modules/.bin/buf generate)

echo "gen-stubs: Python stubs in $py_out/bete/v1, Go stubs in $go_out/bete/v1, TypeScript in $web/src/gen" >&2
