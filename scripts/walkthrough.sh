#!/usr/bin/env bash
# The walk-through of docs/protocol.md ("Your first bot in 15 minutes, without an SDK"), run as a
# test: the guide's own commands, in a fresh project directory, with no SDK.
#   1. starts the real server (target/debug/bete-server, built here) on a free port, with signup
#      closed as a hosted ladder runs it, and makes an account with the admin token (the
#      operator's part); the bots register with the account's token
#   2. Python: installs the guide's pip packages into .tools/venv, generates stubs from proto/
#      with the guide's protoc command, and plays docs/first-bot/first_bot.py to the end of a
#      match in every ruleset, importing only those stubs (checked), then one set on a ladder
#   3. Go: installs protoc-gen-go and protoc-gen-go-grpc (go install, module proxy), generates
#      stubs under the example module's own import path with the guide's -M remapping, and plays
#      docs/first-bot/go to the end of a match in every ruleset, then one set on a ladder
#   4. Go with buf managed mode and TypeScript (Protobuf-ES): generates the stubs with the guide's
#      buf.gen.yaml files (generation only)
# Every command the guide shows is checked to appear in docs/protocol.md verbatim, so the guide
# and this test cannot drift apart. `protoc` is the one inside grpcio-tools (the guide names it
# as one way to get protoc).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
tools=$root/.tools
export PATH="$tools/venv/bin:$tools/bin:$tools/node_modules/.bin:$PATH"
export GOBIN=$tools/bin
RULESETS=(RULESET_BETE RULESET_BETE_ACE_HIGH RULESET_BEAST RULESET_BESTE_BOER RULESET_LANTERLUI
  RULESET_BESTER_BUBE RULESET_MOUCHE RULESET_MISTIGRI RULESET_LOO RULESET_RAMS)
ADMIN_TOKEN=walkthrough-admin-$$

work=$(mktemp -d)
server_pid=
cleanup() {
  status=$?
  if [ "$status" -ne 0 ] && [ -f "$work/server.log" ]; then
    echo "walkthrough: failed; the server's last log lines:" >&2
    tail -20 "$work/server.log" >&2
  fi
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# in_guide TEXT: fail unless docs/protocol.md prints TEXT verbatim.
in_guide() {
  if ! grep -qF -- "$1" "$root/docs/protocol.md"; then
    echo "walkthrough: this command is not in docs/protocol.md any more: $1" >&2
    exit 1
  fi
}
# guide CMD: run CMD (one line, as the guide prints it) after checking the guide prints it.
guide() {
  in_guide "$1"
  echo "+ $1" >&2
  eval "$1"
}
protoc() { "$tools/venv/bin/python" -m grpc_tools.protoc "$@"; }

# --- the server -------------------------------------------------------------------------------
# The venv of scripts/gen-stubs.sh (grpcio-tools, whose protoc is used here).
[ -x "$tools/venv/bin/python" ] || bash scripts/gen-stubs.sh
# buf for the Go alternative (the same pinned version scripts/check-stubs.sh installs).
[ -x "$tools/node_modules/.bin/buf" ] ||
  npm install --silent --no-audit --no-fund --prefix "$tools" @bufbuild/buf@1.75.0
server_bin=${BETE_SERVER_BIN:-}
if [ -z "$server_bin" ]; then
  cargo build --quiet -p bete-server --locked
  server_bin=$root/target/debug/bete-server
fi
free_port() { "$tools/venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port)
"$server_bin" --listen "127.0.0.1:$port" --data-dir "$work/data" \
  --metrics-listen "127.0.0.1:$(free_port)" --log-format json \
  --open-signup false --admin-token "$ADMIN_TOKEN" >"$work/server.log" 2>&1 &
server_pid=$!
up=
for _ in $(seq 300); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    up=1
    break
  fi
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$up" ]; then
  echo "walkthrough: the server did not start; its log:" >&2
  cat "$work/server.log" >&2
  exit 1
fi
server=127.0.0.1:$port

# The operator's part: an account (signup is closed), whose token the bots register with.
BETE_ACCOUNT_TOKEN=$(PYTHONPATH=clients/python "$tools/venv/bin/python" -c '
import sys, grpc
from bete.v1 import account_service_pb2 as a, account_service_pb2_grpc as g
stub = g.AccountServiceStub(grpc.insecure_channel(sys.argv[1]))
print(stub.CreateAccount(a.CreateAccountRequest(name="walkthrough"),
                         metadata=[("authorization", "Bearer " + sys.argv[2])]).token)' "$server" "$ADMIN_TOKEN")
export BETE_ACCOUNT_TOKEN

# The reader's project: a copy of proto/ and the bot, nothing else of the repository.
mkdir -p "$work/py" "$work/go"
cp -r proto "$work/py/proto"
cp docs/first-bot/first_bot.py "$work/py/"
cp -r proto "$work/go/proto"
cp docs/first-bot/go/main.go docs/first-bot/go/go.mod docs/first-bot/go/go.sum "$work/go/"

# --- Python -----------------------------------------------------------------------------------
(
  cd "$work/py"
  guide 'pip install grpcio==1.85.3 grpcio-tools==1.85.1 grpcio-status==1.85.3 googleapis-common-protos==1.76.0'
  guide 'mkdir -p gen'
  guide 'python -m grpc_tools.protoc -I proto --python_out=gen --pyi_out=gen --grpc_python_out=gen proto/bete/v1/*.proto'
  # Only the generated stubs: not the SDK's committed copy, not the bete-bot package.
  PYTHONPATH=gen python -c '
import os, sys, bete.v1.table_service_pb2 as m
assert os.path.realpath(m.__file__).startswith(os.path.realpath("gen") + os.sep), m.__file__
import importlib.util
assert importlib.util.find_spec("bete_bot") is None, "the SDK is importable"'
  for ruleset in "${RULESETS[@]}"; do
    echo "walkthrough: Python bot, $ruleset" >&2
    in_guide 'PYTHONPATH=gen python first_bot.py --server 127.0.0.1:50051'
    PYTHONPATH=gen python first_bot.py --server "$server" --ruleset "$ruleset"
  done
  echo "walkthrough: Python bot, a set on beste-boer-4" >&2
  in_guide 'PYTHONPATH=gen python first_bot.py --server 127.0.0.1:50051 --account-token "$BETE_ACCOUNT_TOKEN" --ladder beste-boer-4'
  PYTHONPATH=gen python first_bot.py --server "$server" --account-token "$BETE_ACCOUNT_TOKEN" --ladder beste-boer-4
)

# --- Go ---------------------------------------------------------------------------------------
(
  cd "$work/go"
  guide 'go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12'
  guide 'go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2'
  guide 'M=""; for f in proto/bete/v1/*.proto; do M="$M --go_opt=M${f#proto/}=example.com/firstbot/betev1 --go-grpc_opt=M${f#proto/}=example.com/firstbot/betev1"; done'
  guide 'protoc -I proto --go_out=. --go_opt=module=example.com/firstbot --go-grpc_out=. --go-grpc_opt=module=example.com/firstbot $M proto/bete/v1/*.proto'
  test -f betev1/table_service_grpc.pb.go
  guide 'go build -o firstbot .'
  for ruleset in "${RULESETS[@]}"; do
    echo "walkthrough: Go bot, $ruleset" >&2
    in_guide './firstbot -server 127.0.0.1:50051'
    ./firstbot -server "$server" -ruleset "$ruleset"
  done
  echo "walkthrough: Go bot, a set on beste-boer-4" >&2
  in_guide './firstbot -server 127.0.0.1:50051 -account-token "$BETE_ACCOUNT_TOKEN" -ladder beste-boer-4'
  ./firstbot -server "$server" -account-token "$BETE_ACCOUNT_TOKEN" -ladder beste-boer-4
)

# --- Go with buf managed mode (the guide's alternative; generation only) -------------------------
mkdir -p "$work/go-buf"
cp -r proto "$work/go-buf/proto"
(
  cd "$work/go-buf"
  sed -n '/^# buf.gen.yaml (Go)$/,/^```$/p' "$root/docs/protocol.md" | sed '1d;$d' >buf.gen.yaml
  guide 'buf generate'
  grep -q '^package betev1$' gen/bete/v1/table_service_grpc.pb.go
)

# --- TypeScript (stubs only) --------------------------------------------------------------------
mkdir -p "$work/ts"
cp -r proto "$work/ts/proto"
(
  cd "$work/ts"
  guide 'npm install --save-dev @bufbuild/buf@1.75.0 @bufbuild/protoc-gen-es@2.17.0 @bufbuild/protobuf@2.17.0'
  sed -n '/^# buf.gen.yaml (TypeScript)$/,/^```$/p' "$root/docs/protocol.md" | sed '1d;$d' >buf.gen.yaml
  guide 'npx buf generate'
  test -f gen/bete/v1/table_service_pb.ts
)

echo "walkthrough: ok (Python and Go bots played ${#RULESETS[@]} matches and a ladder set each, on a closed-signup server; TypeScript stubs generated)" >&2
