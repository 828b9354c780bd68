#!/usr/bin/env bash
# Runs a command beside a throw-away PostgreSQL server, for the tests of the PostgreSQL store:
#
#   bash scripts/pg.sh cargo test -p bete-store
#
# Installs PostgreSQL from Debian's packages when no initdb is found (as root, as in CI), starts
# it as an unprivileged user on a free loopback port with a temporary data folder, runs the
# command with BETE_TEST_DATABASE_URL set (a database of its own), and stops the server and
# removes its folder when the command ends, however it ends. The command's exit status is kept.
# Also installs libfaketime (Debian's `faketime`), which the test of a node whose clock is off
# preloads into a real server. `$BETE_TEST_PG_RESTART` restarts the server; `$BETE_TEST_PG_FAILOVER`
# (scripts/pg-failover.sh) makes a primary and standby pair of its own and fails it over.
set -euo pipefail

if [ $# -eq 0 ]; then
  echo "usage: $0 COMMAND [ARGS...]" >&2
  exit 2
fi

find_bin() {
  local found
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$found" ] && [ -x "$found/initdb" ]; then
    echo "$found"
  fi
}

bin=$(find_bin)
if [ -z "$bin" ]; then
  echo "==> PostgreSQL not found: installing it from Debian's packages" >&2
  if [ "$(id -u)" -ne 0 ]; then
    echo "scripts/pg.sh: PostgreSQL is missing and only root can install it" \
      "(apt-get install -y postgresql)" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  bin=$(find_bin)
  [ -n "$bin" ] || { echo "scripts/pg.sh: postgresql installed but no initdb found" >&2; exit 1; }
fi

# libfaketime, for the test of a node whose clock is off (tests/postgres.rs).
if ! ls /usr/lib/*/faketime/libfaketimeMT.so.1 >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "==> libfaketime not found: installing it from Debian's packages" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime >/dev/null
  else
    echo "scripts/pg.sh: libfaketime is missing (apt-get install -y faketime);" \
      "the clock-skew test will fail" >&2
  fi
fi

# PostgreSQL refuses to run as root: run it as an unprivileged user.
if [ "$(id -u)" -eq 0 ]; then
  user=postgres
  id -u "$user" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$user"
  as_user() { runuser -u "$user" -- "$@"; }
else
  user=$(id -un)
  as_user() { "$@"; }
fi

dir=$(mktemp -d /tmp/bete-pg.XXXXXX)
chown "$user" "$dir" 2>/dev/null || true
chmod 700 "$dir"

stop() {
  as_user "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  # Failover pairs a test left running (scripts/pg-failover.sh).
  for d in "$dir"/failover.*/primary "$dir"/failover.*/standby; do
    [ -d "$d" ] && as_user "$bin/pg_ctl" -D "$d" -m immediate stop >/dev/null 2>&1 || true
  done
  rm -rf "$dir"
}
trap stop EXIT

# A free loopback port: the kernel's pick for a socket bound to port 0.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

as_user "$bin/initdb" -D "$dir/data" -U bete --auth=trust --encoding=UTF8 --no-sync >/dev/null
# Many test servers and stores at once; fsync stays on (the store's durability is under test).
# `BETE_PG_OPTIONS` adds server options (a benchmark's profiling: `-c shared_preload_libraries=...`).
as_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 start \
  -o "-h 127.0.0.1 -p $port -k $dir -c max_connections=400 -c shared_buffers=64MB ${BETE_PG_OPTIONS:-}" >/dev/null
as_user "$bin/createdb" -h 127.0.0.1 -p "$port" -U bete bete_test

# For the test of a PostgreSQL restart mid-play: `$BETE_TEST_PG_RESTART SECONDS` stops the
# server (fast: open transactions are aborted), waits, and starts it again on the same port.
run_as=""
[ "$(id -u)" -eq 0 ] && run_as="runuser -u $user --"
{
  echo '#!/usr/bin/env bash'
  echo 'set -euo pipefail'
  echo "$run_as '$bin/pg_ctl' -D '$dir/data' -m fast -w stop >/dev/null"
  echo 'sleep "${1:-2}"'
  echo "$run_as '$bin/pg_ctl' -D '$dir/data' -l '$dir/log' -w -t 60 start -o '-h 127.0.0.1 -p $port -k $dir -c max_connections=400 -c shared_buffers=64MB ${BETE_PG_OPTIONS:-}' >/dev/null"
} >"$dir/restart.sh"
chmod 755 "$dir/restart.sh"

# For the test of a PostgreSQL failover: `$BETE_TEST_PG_FAILOVER up|fail|down` manages a primary
# with a synchronous standby of its own (scripts/pg-failover.sh).
{
  echo '#!/usr/bin/env bash'
  echo "BETE_PG_BIN='$bin' BETE_PG_USER='$user' BETE_PG_BASE='$dir' exec bash '$(cd "$(dirname "$0")" && pwd)/pg-failover.sh' \"\$@\""
} >"$dir/failover.sh"
chmod 755 "$dir/failover.sh"

export BETE_TEST_DATABASE_URL="postgres://bete@127.0.0.1:$port/bete_test"
export BETE_TEST_PG_RESTART="$dir/restart.sh"
export BETE_TEST_PG_FAILOVER="$dir/failover.sh"
echo "==> PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (as $user)" >&2
set +e
"$@"
status=$?
set -e
exit $status
