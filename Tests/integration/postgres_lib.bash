# Shared by the integration scripts that run against PostgreSQL (sourced; not a test itself).
# postgres_server: postgres_conn is the server POSTERN_TEST_POSTGRES names (scripts/test starts
# one for the whole run), else a throwaway one this script starts with scripts/postgres.
# postgres_stop (call it from the script's EXIT trap) stops that throwaway one, and only it.
# postgres_database PREFIX: prints the connection string of a new, empty database PREFIX_<unique>
# on that server (call it as `db=$(postgres_database x)`, not inside `export`, so a failure stops
# the script).
# postgres_for_pytest PREFIX VAR (after pytest_lib.bash): the EXIT trap ends what pytest started,
# then stops the throwaway server; a new database PREFIX_<unique> is exported in VAR.
postgres_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
postgres_dir=
postgres_conn=

postgres_server() {
  postgres_conn="${POSTERN_TEST_POSTGRES:-}"
  [ -z "$postgres_conn" ] || return 0
  local started
  started=$("$postgres_root/scripts/postgres" start)
  postgres_dir=$(sed -n 1p <<<"$started")
  postgres_conn=$(sed -n 2p <<<"$started")
}

postgres_stop() {
  [ -z "$postgres_dir" ] || "$postgres_root/scripts/postgres" stop "$postgres_dir"
  postgres_dir=
}

postgres_database() {
  local name="$1_$(date +%s%N)_$RANDOM"
  psql "$postgres_conn" -qAt -v ON_ERROR_STOP=1 -c "CREATE DATABASE $name" >/dev/null || return 1
  echo "$postgres_conn dbname=$name"
}

postgres_for_pytest() {
  trap 'pytest_cleanup; postgres_stop' EXIT
  postgres_server
  local database
  database=$(postgres_database "$1")
  export "$2=$database"
}
