#!/usr/bin/env bash
# A PostgreSQL primary with a synchronous streaming standby, and its failover: for the test of
# a failover under real bete-server nodes (service/server/tests/pg_failover.rs). scripts/pg.sh
# sets BETE_TEST_PG_FAILOVER to a wrapper of this script that knows where PostgreSQL is and
# which user runs it; the pair is a cluster of its own (its own ports and folders), so the
# shared test server is never disturbed.
#
#   up              starts the pair; prints "DIR PORT": the pair's folder and the primary's port
#                   (database bete_test, user bete, trust on loopback)
#   fail DIR SECS   the primary dies (immediate stop: no shutdown checkpoint, as in a crash),
#                   SECS later the standby is promoted and comes up on the primary's port
#                   (what a failover with a moving address, a Service or a virtual IP, does)
#   down DIR        stops both and removes the folder
#
# Replication is synchronous (synchronous_standby_names = '*', set after the base backup so
# the standby does not wait for a standby of its own once promoted): every commit the primary
# acknowledged is on the standby, as with the Kubernetes deployment's synchronous standby.
#
# Environment: BETE_PG_BIN (PostgreSQL's bin folder), BETE_PG_USER (when run as root, the
# user the servers run as), BETE_PG_BASE (where pairs' folders go).
set -euo pipefail

bin=${BETE_PG_BIN:?}
base=${BETE_PG_BASE:?}
if [ "$(id -u)" -eq 0 ]; then
  as_user() { runuser -u "${BETE_PG_USER:?}" -- "$@"; }
else
  as_user() { "$@"; }
fi

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() { # DATA PORT
  as_user "$bin/pg_ctl" -D "$1" -l "$1.log" -w -t 60 start \
    -o "-h 127.0.0.1 -p $2 -k $(dirname "$1") -c max_connections=200 -c shared_buffers=32MB" >/dev/null
}

sql() { # PORT SQL
  as_user "$bin/psql" -h 127.0.0.1 -p "$1" -U bete -d postgres -XAtqc "$2"
}

# Polls SQL on PORT until it prints "t" (at most 60 s).
wait_for() { # PORT SQL WHAT
  for _ in $(seq 600); do
    [ "$(sql "$1" "$2" 2>/dev/null || true)" = t ] && return 0
    sleep 0.1
  done
  echo "pg-failover.sh: $3 never happened" >&2
  exit 1
}

case "${1:-}" in
  up)
    dir=$(mktemp -d "$base/failover.XXXXXX")
    chown "${BETE_PG_USER:-$(id -un)}" "$dir" 2>/dev/null || true
    chmod 700 "$dir"
    port=$(free_port)
    echo "$port" >"$dir/port"
    as_user "$bin/initdb" -D "$dir/primary" -U bete --auth=trust --encoding=UTF8 --no-sync >/dev/null
    start "$dir/primary" "$port"
    as_user "$bin/pg_basebackup" -h 127.0.0.1 -p "$port" -U bete -D "$dir/standby" -R -X stream -c fast
    sport=$(free_port)
    start "$dir/standby" "$sport"
    wait_for "$port" "SELECT count(*) > 0 FROM pg_stat_replication WHERE state = 'streaming'" \
      "the standby's streaming"
    sql "$port" "ALTER SYSTEM SET synchronous_standby_names = '*'" >/dev/null
    sql "$port" "SELECT pg_reload_conf()" >/dev/null
    wait_for "$port" "SELECT count(*) > 0 FROM pg_stat_replication WHERE sync_state = 'sync'" \
      "synchronous replication"
    as_user "$bin/createdb" -h 127.0.0.1 -p "$port" -U bete bete_test
    echo "$dir $port"
    ;;
  fail)
    dir=${2:?usage: $0 fail DIR SECONDS}
    port=$(cat "$dir/port")
    as_user "$bin/pg_ctl" -D "$dir/primary" -m immediate -w stop >/dev/null
    sleep "${3:-2}"
    as_user "$bin/pg_ctl" -D "$dir/standby" -w -t 60 promote >/dev/null
    as_user "$bin/pg_ctl" -D "$dir/standby" -m fast -w -t 60 stop >/dev/null
    start "$dir/standby" "$port"
    ;;
  down)
    dir=${2:?usage: $0 down DIR}
    for d in primary standby; do
      as_user "$bin/pg_ctl" -D "$dir/$d" -m immediate -w stop >/dev/null 2>&1 || true
    done
    rm -rf "$dir"
    ;;
  *)
    echo "usage: $0 up | fail DIR SECONDS | down DIR" >&2
    exit 2
    ;;
esac
