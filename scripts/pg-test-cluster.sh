#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the test suites (issue 15): `initdb` into DIR from Debian's
# /usr/lib/postgresql/<ver>/bin, listening on 127.0.0.1 only, on a free port, password auth.
#   bash scripts/pg-test-cluster.sh start DIR   # prints the admin URL (postgres://…) on stdout
#   bash scripts/pg-test-cluster.sh stop DIR    # stops it and removes DIR
#   bash scripts/pg-test-cluster.sh server-stop DIR / server-start DIR   # the server down and up
#                                               again, DIR kept (bench:cluster's "PostgreSQL stopped")
# As root it runs the server as the `postgres` user (Debian's package creates it). Relies on no
# cluster already running and on no links: only the package's binaries. `scripts/with-pg.sh`
# wraps a command with one; `.ci/run` starts one for `pnpm test` and stops it in its EXIT trap.
set -euo pipefail
cmd=${1:?usage: pg-test-cluster.sh start|stop DIR}
dir=${2:?usage: pg-test-cluster.sh start|stop DIR}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
  echo "pg-test-cluster: no PostgreSQL under /usr/lib/postgresql (install Debian's postgresql: sudo apt-get install postgresql)" >&2
  exit 1
fi
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
case "$cmd" in
  start)
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    password=$(node -e 'console.log(require("node:crypto").randomBytes(12).toString("hex"))')
    port=$(node -e 'const s=require("node:net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
    printf '%s\n' "$password" > "$dir/pwfile"
    [ "$(id -u)" = 0 ] && chown postgres "$dir/pwfile"
    as_pg "$bin/initdb" -D "$dir/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
      --pwfile="$dir/pwfile" -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 ||
      { cat "$dir/initdb.log" >&2; exit 1; }
    rm -f "$dir/pwfile"
    mkdir -p "$dir/sock"
    [ "$(id -u)" = 0 ] && chown postgres "$dir/sock"
    # fsync stays on: the store's guarantees are what the tests check.
    printf '%s\n' "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir/sock -c max_connections=200" > "$dir/opts"
    as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o "$(cat "$dir/opts")" \
      start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    echo "postgres://postgres:$password@127.0.0.1:$port/postgres"
    ;;
  server-stop)
    as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    ;;
  server-start)
    as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o "$(cat "$dir/opts")" \
      start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    ;;
  stop)
    if [ -d "$dir/data" ]; then as_pg "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true; fi
    rm -rf "$dir"
    ;;
  *)
    echo "usage: pg-test-cluster.sh start|stop|server-stop|server-start DIR" >&2
    exit 2
    ;;
esac
