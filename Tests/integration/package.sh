#!/usr/bin/env bash
# The Debian package on this machine, as an operator meets it (root; systemd is not the init here,
# so the unit's own ExecStart is read and run as its User=, in its WorkingDirectory=, with a
# $NOTIFY_SOCKET this script listens on):
#   1. scripts/package builds this checkout's package, and the previous release's from its commit
#      (the last line of packaging/releases whose version is not this VERSION; tags do not travel
#      with every clone), exported with git archive into .build/previous/vVERSION, built once and
#      kept there, packaged with this checkout's scripts/package;
#   2. the previous package installed: the postern user, /var/lib/postern 0700, the conffile
#      0640 root:postern; its daemon makes accounts and sessions by sign-in, an added webhook
#      endpoint with events queued for it (its host does not resolve), and a mail queued while the
#      relay is down;
#   3. the upgrade (dpkg -i): the daemon tells systemd READY=1, and everything is found: the
#      sessions refresh, the queued mail is delivered and its link signs in, the endpoint and its
#      events are there; a new sign-in; check-config passes; SIGTERM gives STOPPING=1;
#   4. lintian (no error; warnings printed), systemd-analyze verify (clean) and security (the
#      exposure at most 4.0, the table printed);
#   5. the downgrade: the previous daemon refuses the database when the schema grew, naming it
#      (with the same schema it must open it);
#   6. remove keeps /var/lib/postern, purge deletes it and says so.
# Prints the time each step took. POSTERN_PYTHON: the Python of the test tools (for urllib only).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
python=${POSTERN_PYTHON:-$root/.venv/bin/python}
walk=("$python" "$root/Tests/integration/package_walk.py")
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "package.sh installs a Debian package: run it as root"
exec 9>/var/lock/postern-package-test.lock
flock 9  # one walk at a time on a machine
if dpkg-query -W -f '${Status}' postern 2>/dev/null | grep -q "ok installed"; then
  fail "postern is installed on this machine; package.sh would replace it (dpkg --purge postern first)"
fi
work=$(mktemp -d)
chmod 0755 "$work"
export POSTERN_WALK_SEEN=$work/seen-mail
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if dpkg-query -W -f '${Status}' postern 2>/dev/null | grep -q "installed\|config-files"; then dpkg --purge postern >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
step_start=$SECONDS
step() { echo "== package: $1 (previous step $((SECONDS - step_start)) s)"; step_start=$SECONDS; }
free_port() { "$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

step "build the packages"
if ! command -v lintian >/dev/null || ! command -v sqlite3 >/dev/null; then
  apt-get update -qq >/dev/null && apt-get install -y -qq lintian sqlite3 >/dev/null
fi
current_version=$(tr -d ' \n' <"$root/VERSION")
read -r previous_version previous_commit < <(grep -v '^#' "$root/packaging/releases" |
  awk -v current="$current_version" 'NF == 2 && $1 != current { line = $0 } END { print line }')
[ -n "${previous_commit:-}" ] || fail "packaging/releases names no release before $current_version"
git -C "$root" merge-base --is-ancestor "$previous_commit" HEAD 2>/dev/null ||
  fail "release $previous_version's commit $previous_commit is not in this clone's history (a shallow clone?)"
previous_dir=$root/.build/previous/v$previous_version
if [ ! -f "$previous_dir/src/Package.swift" ]; then
  rm -rf "$previous_dir"
  mkdir -p "$previous_dir/src"
  git -C "$root" archive "$previous_commit" | tar -x -C "$previous_dir/src"
fi
old_deb=$(OUT="$previous_dir/dist" "$root/scripts/package" --tree "$previous_dir/src" --version "$previous_version" \
  --commit "$previous_commit" | tail -1)
new_deb=$(OUT="$work/dist" "$root/scripts/package" | tail -1)
new_version=$current_version
dpkg-deb --info "$new_deb" | sed -n 's/^ Depends: /Depends: /p'

# The unit's command, user and directory, as systemd would run them.
unit=/lib/systemd/system/postern.service
unit_value() { sed -n "s/^$1=//p" "$unit" | tail -1; }
listen_port=$(free_port)
metrics_port=$(free_port)
base="http://127.0.0.1:$listen_port"
notify_socket="@postern-package-test-$$"
"${walk[@]}" notify-listen "$notify_socket" "$work/notify.log" &
pids+=($!)
# start_daemon NAME [VAR=VALUE...]: the unit's ExecStart as its User= in its WorkingDirectory=,
# with $NOTIFY_SOCKET, on free ports (the environment beats the config file); sets daemon_pid.
start_daemon() {
  local name=$1; shift
  read -r -a exec_start <<<"$(unit_value ExecStart)"
  (cd "$(unit_value WorkingDirectory)" && umask 077 && { ulimit -n "$(unit_value LimitNOFILE)" 2>/dev/null || true; }
    exec setpriv --reuid="$(unit_value User)" --regid="$(unit_value Group)" --init-groups \
      env -i PATH=/usr/bin:/bin NOTIFY_SOCKET="$notify_socket" POSTERN_LISTEN="127.0.0.1:$listen_port" \
      POSTERN_METRICS_LISTEN="127.0.0.1:$metrics_port" "$@" "${exec_start[@]}") >"$work/$name.log" 2>&1 &
  daemon_pid=$!
  pids+=("$daemon_pid")
}
wait_healthy() { # up to 30 s for GET /healthz
  for _ in $(seq 300); do
    curl -fs "$base/healthz" >/dev/null 2>&1 && return 0
    kill -0 "$daemon_pid" 2>/dev/null || { cat "$work"/*.log >&2; fail "the daemon exited"; }
    sleep 0.1
  done
  fail "the daemon did not answer /healthz"
}
stop_daemon() {
  kill -TERM "$daemon_pid"
  wait "$daemon_pid" || fail "the daemon exited $? on SIGTERM"
}
as_postern() { setpriv --reuid=postern --regid=postern --init-groups "$@"; }
count() { as_postern sqlite3 /var/lib/postern/postern.db "$1"; }
maildir=/var/lib/postern/mail-out

step "install the previous package (v$previous_version)"
dpkg -i "$old_deb" >"$work/dpkg-old.log" 2>&1 || { cat "$work/dpkg-old.log"; fail "dpkg -i $old_deb"; }
id postern >/dev/null || fail "no postern user"
[ "$(stat -c '%a %U' /var/lib/postern)" = "700 postern" ] || fail "/var/lib/postern is $(stat -c '%a %U' /var/lib/postern)"
[ "$(stat -c '%a %U:%G' /etc/postern/postern.json)" = "640 root:postern" ] || fail "the conffile is $(stat -c '%a %U:%G' /etc/postern/postern.json)"
[ ! -e /var/lib/postern/postern.key ] || fail "the package made a master key"
start_daemon old
wait_healthy
[ -s /var/lib/postern/postern.key ] || fail "the first start made no master key"
as_postern /usr/bin/postern webhooks add https://hooks.invalid/postern --config /etc/postern/postern.json >"$work/webhook.out" \
  || fail "webhooks add: $(cat "$work/webhook.out")"
endpoint=$(grep -o 'ep_[A-Za-z0-9_-]*' "$work/webhook.out" | head -1)
[ -n "$endpoint" ] || fail "no endpoint ID: $(cat "$work/webhook.out")"
alice=$("${walk[@]}" sign-in "$base" "$maildir" alice@example.com)
"${walk[@]}" sign-in "$base" "$maildir" bob@example.com >/dev/null
stop_daemon
# The relay down: the next mail waits in the queue.
start_daemon old-relay-down POSTERN_SMTP_URL="smtp+plain://127.0.0.1:$(free_port)"
wait_healthy
"${walk[@]}" send "$base" dave@example.com
for _ in $(seq 100); do [ "$(count "SELECT count(*) FROM outbox WHERE state='retrying'")" = 1 ] && break; sleep 0.1; done
stop_daemon
old_schema=$(count "PRAGMA user_version")
before_accounts=$(count "SELECT count(*) FROM accounts")
before_tokens=$(count "SELECT count(*) FROM refresh_tokens")
before_deliveries=$(count "SELECT count(*) FROM webhook_deliveries")
[ "$(count "SELECT count(*) FROM outbox WHERE state IN ('queued','retrying')")" = 1 ] || fail "dave's mail is not queued: $(count "SELECT state, last_reply FROM outbox")"
[ "$before_accounts" = 2 ] && [ "$before_deliveries" -ge 2 ] || fail "before: accounts $before_accounts, webhook deliveries $before_deliveries"
key_before=$(sha256sum /var/lib/postern/postern.key)

step "upgrade to $new_version"
dpkg -i "$new_deb" >"$work/dpkg-new.log" 2>&1 || { cat "$work/dpkg-new.log"; fail "dpkg -i $new_deb"; }
[ "$(sha256sum /var/lib/postern/postern.key)" = "$key_before" ] || fail "the upgrade changed the master key"
/usr/bin/postern --version | tee "$work/version.txt"
grep -qx "postern $new_version" "$work/version.txt" || fail "postern --version does not say $new_version"
grep -qx "commit $(git -C "$root" rev-parse HEAD)\(-dirty\)\?" "$work/version.txt" || fail "postern --version does not say the commit"
: >"$work/notify.log.mark"
start_daemon new
for _ in $(seq 300); do grep -q "^READY=1" "$work/notify.log" && break; kill -0 "$daemon_pid" 2>/dev/null || break; sleep 0.1; done
grep -q "^READY=1 | STATUS=listening on 127.0.0.1:$listen_port" "$work/notify.log" || { cat "$work/new.log"; fail "no READY=1: $(cat "$work/notify.log")"; }
curl -fs "$base/healthz" >/dev/null || fail "READY=1 before the listener answers"
new_schema=$(count "PRAGMA user_version")
[ "$new_schema" -ge "$old_schema" ] || fail "schema $old_schema became $new_schema"
grep -q "schema $new_schema (SQLite)" "$work/version.txt" || fail "postern --version does not say schema $new_schema"
session=$("${walk[@]}" refresh "$base" "$("$python" -c 'import json,sys; print(json.loads(sys.argv[1])["refreshToken"])' "$alice")")
id_token=$("$python" -c 'import json,sys; print(json.loads(sys.argv[1])["idToken"])' "$session")
[ "$("${walk[@]}" me "$base" "$id_token")" = alice@example.com ] || fail "alice's session did not survive"
"${walk[@]}" complete "$base" "$maildir" dave@example.com >/dev/null  # the mail queued before the upgrade, delivered now
as_postern /usr/bin/postern webhooks list --config /etc/postern/postern.json | grep -q "$endpoint" || fail "the webhook endpoint is gone"
"${walk[@]}" sign-in "$base" "$maildir" erin@example.com >/dev/null
[ "$(count "SELECT count(*) FROM accounts")" = $((before_accounts + 2)) ] || fail "accounts: $(count "SELECT count(*) FROM accounts")"
[ "$(count "SELECT count(*) FROM refresh_tokens")" -ge "$before_tokens" ] || fail "refresh tokens lost"
[ "$(count "SELECT count(*) FROM webhook_deliveries")" -ge "$before_deliveries" ] || fail "webhook events lost"
as_postern /usr/bin/postern check-config --config /etc/postern/postern.json >"$work/check.out" || fail "check-config: $(cat "$work/check.out")"
# Without --templates, the installed binary finds its templates under /usr/share/postern.
(cd / && as_postern /usr/bin/postern check-config --database /var/lib/postern/postern.db) >"$work/check2.out" || fail "check-config: $(cat "$work/check2.out")"
grep -q "^ok: templates: /usr/share/postern/templates$" "$work/check2.out" || fail "templates not found beside the binary: $(cat "$work/check2.out")"
stop_daemon
grep -q "^STOPPING=1" "$work/notify.log" || fail "no STOPPING=1 on SIGTERM: $(cat "$work/notify.log")"

step "lintian, systemd-analyze"
lintian --tag-display-limit 0 "$new_deb" >"$work/lintian.txt" 2>&1 || true
grep "^E:" "$work/lintian.txt" && fail "lintian found errors"
echo "lintian: $(grep -c "^W:" "$work/lintian.txt" || true) warnings"; grep "^[WI]:" "$work/lintian.txt" || true
systemd-analyze verify "$unit" >"$work/verify.txt" 2>&1 || { cat "$work/verify.txt"; fail "systemd-analyze verify"; }
[ ! -s "$work/verify.txt" ] || { cat "$work/verify.txt"; fail "systemd-analyze verify is not clean"; }
systemd-analyze security --offline=true --no-pager "$unit" >"$work/security.txt" 2>&1 || true
cat "$work/security.txt"
exposure=$(sed -n 's/.*Overall exposure level for postern.service: \([0-9.]*\).*/\1/p' "$work/security.txt")
[ -n "$exposure" ] || fail "no exposure level"
awk -v e="$exposure" 'BEGIN { exit !(e <= 4.0) }' || fail "exposure $exposure is above 4.0"

step "downgrade to v$previous_version"
dpkg -i "$old_deb" >"$work/dpkg-down.log" 2>&1 || { cat "$work/dpkg-down.log"; fail "dpkg -i (downgrade)"; }
start_daemon downgraded
if [ "$new_schema" -gt "$old_schema" ]; then
  set +e; wait "$daemon_pid"; status=$?; set -e
  [ "$status" -ne 0 ] || fail "the previous daemon opened a newer database"
  grep -q "schema is version $new_schema, newer than this postern knows ($old_schema)" "$work/downgraded.log" \
    || fail "the refusal does not name the schema: $(cat "$work/downgraded.log")"
  echo "refused: $(grep -o "the database's schema is version [^:]*" "$work/downgraded.log" | head -1)"
else
  wait_healthy  # the same schema: the previous release opens it
  stop_daemon
  echo "schema $new_schema unchanged since v$previous_version: the downgrade opens the database"
fi

step "remove, purge"
dpkg -r postern >"$work/remove.log" 2>&1 || { cat "$work/remove.log"; fail "dpkg -r"; }
[ -s /var/lib/postern/postern.db ] && [ -s /var/lib/postern/postern.key ] || fail "remove deleted the data"
dpkg --purge postern >"$work/purge.log" 2>&1 || { cat "$work/purge.log"; fail "dpkg --purge"; }
grep -q "purging: deleting /var/lib/postern" "$work/purge.log" || fail "purge did not say what it deletes: $(cat "$work/purge.log")"
[ ! -e /var/lib/postern ] && [ ! -e /etc/postern ] || fail "purge left /var/lib/postern or /etc/postern"
step "done"
echo "package: ok"
