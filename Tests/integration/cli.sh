#!/usr/bin/env bash
# The command line as people meet it: --help everywhere, exit codes (64 usage, 65 bad input),
# settings from flags, environment and a JSON file, send-link and handle-link without a daemon.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
postern=${POSTERN_BIN:-$root/.build/debug/postern}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export POSTERN_TEMPLATES="$root/templates"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_exit() { # CODE command...
  local want=$1; shift
  set +e; "$@" >out.txt 2>err.txt; local got=$?; set -e
  [ "$got" -eq "$want" ] || { cat out.txt err.txt >&2; fail "$* exited $got, want $want"; }
}

for command in "" serve send-link handle-link templates keys outbox users maintenance; do
  expect_exit 0 "$postern" $command --help
  grep -q "Usage: postern" out.txt || fail "postern $command --help has no usage line"
  grep -q -- "--config FILE" out.txt || fail "postern $command --help does not list the settings"
done
expect_exit 64 "$postern"
expect_exit 64 "$postern" frobnicate
expect_exit 64 "$postern" send-link --email a@example.com
expect_exit 64 "$postern" send-link --action sign-in --email a@example.com --no-such-flag 1
expect_exit 64 "$postern" keys list --workers 300
grep -q -- "--workers" err.txt || fail "a bad setting is not named"
# Each command takes its own options and the settings it reads: another's is named as such.
expect_exit 64 "$postern" users import users.json --from supabase --workers 8
grep -q -- '--workers is an option of `postern serve`, not of `postern users import`' err.txt || fail "a serve option on users import: $(cat err.txt)"
expect_exit 64 "$postern" serve --email a@example.com
grep -q -- '--email is an option of `postern send-link`' err.txt || fail "a send-link option on serve: $(cat err.txt)"
expect_exit 64 "$postern" templates check --no-such-switch
grep -q -- 'unknown option --no-such-switch' err.txt || fail "an unknown option: $(cat err.txt)"
"$postern" serve --help >out.txt
grep -q -- "--workers N" out.txt || fail "serve --help does not list --workers"
"$postern" users --help >out.txt
! grep -q -- "--workers" out.txt || fail "users --help lists --workers, which users never reads"
grep -q -- "--scrypt-log-n N" out.txt || fail "users --help does not list --scrypt-log-n"

# Settings precedence, seen through `templates check`, which reads only --templates.
echo '{"templates": "/nonexistent-from-file"}' > config.json
expect_exit 65 env -u POSTERN_TEMPLATES "$postern" templates check --config config.json
grep -q "nonexistent-from-file" err.txt || fail "the config file was not read"
expect_exit 65 env POSTERN_TEMPLATES=/nonexistent-from-env "$postern" templates check --config config.json
grep -q "nonexistent-from-env" err.txt || fail "the environment does not beat the file"
expect_exit 0 env POSTERN_TEMPLATES=/nonexistent-from-env "$postern" templates check --config config.json --templates "$root/templates"
echo '{"no-such-key": 1}' > bad.json
expect_exit 64 "$postern" keys list --config bad.json

# A broken template stops everything that sends mail, at start, with the place named.
cp -r "$root/templates" broken
printf 'Hello {{nonsense}}\n' > broken/en/sign-in.txt
expect_exit 65 "$postern" templates check --templates broken
grep -q "sign-in.txt" out.txt || fail "templates check does not name the file"
expect_exit 64 "$postern" serve --templates broken --listen 127.0.0.1:1
expect_exit 64 "$postern" serve --smtp-url "smtp://user@" --listen 127.0.0.1:1
# A broken page template too, and templates check names it.
cp -r "$root/templates" broken-page
printf '<p>{{message}} {{link}}</p>\n' > broken-page/en/page-error.html
expect_exit 65 "$postern" templates check --templates broken-page
grep -q "page-error.html:1:.*'link'" out.txt || fail "templates check does not name the page template: $(cat out.txt)"
expect_exit 64 "$postern" serve --templates broken-page --listen 127.0.0.1:1

# The product in previews: templates render knows --app-name and --support-email, mails and pages.
expect_exit 0 "$postern" templates render --action password-changed --format html --app-name 'A&B <Co>' --support-email help@example.com
grep -q 'A&amp;B &lt;Co&gt;' out.txt || fail "render --format html does not escape the app name"
grep -q 'help@example.com' out.txt || fail "render does not show the support address"
expect_exit 0 env POSTERN_APP_NAME='A&B <Co>' "$postern" templates render --action password-changed
grep -q 'A&B <Co>' out.txt || fail "render (text) does not show the app name from the environment"
expect_exit 0 "$postern" templates render --page error --locale de --app-name 'A&B <Co>'
grep -q '<html lang="de">' out.txt && grep -q 'A&amp;B &lt;Co&gt;' out.txt || fail "render --page: $(cat out.txt)"
expect_exit 64 "$postern" templates render --page nonsense
expect_exit 64 "$postern" templates render --page error --action sign-in
expect_exit 64 "$postern" serve --app-name "" --listen 127.0.0.1:1
grep -q -- "--app-name" err.txt || fail "an empty app name is not named"
expect_exit 64 "$postern" serve --support-email "nobody" --listen 127.0.0.1:1
expect_exit 64 env POSTERN_APPLE_APP_IDS=com.example.app "$postern" serve --listen 127.0.0.1:1
grep -q "POSTERN_APPLE_APP_IDS" err.txt || fail "a bad app ID is not named"

# send-link and handle-link on the embedded defaults, no daemon.
expect_exit 0 "$postern" send-link --action sign-in --email Ann@Example.com --print
link=$(head -1 out.txt)
case "$link" in http://127.0.0.1:8080/action\?mode=signIn\&oobCode=*) ;; *) fail "unexpected link $link";; esac
ls mail-out/*.eml >/dev/null || fail "no .eml written"
expect_exit 0 "$postern" handle-link --inspect "Sign in: <$link>"
grep -q "signIn link for Ann@example.com" out.txt || fail "inspect: $(cat out.txt)"
printf 'Forwarded message:\n> %s\n' "$link" > pasted.txt
expect_exit 0 "$postern" handle-link --json < pasted.txt
python3 -c 'import json,sys; d=json.load(open("out.txt")); assert d["isNewUser"] is True and d["session"]["idToken"], d'
expect_exit 65 "$postern" handle-link "$link"
grep -q "This link was already used.*(LINK_USED)" err.txt || fail "a replay does not say it was used: $(cat err.txt)"
# Why a link failed: two links for one address, the newer used: the older says superseded; a
# tampered one says only invalid (never used or superseded).
expect_exit 0 "$postern" send-link --action sign-in --email bob@example.com --print
older=$(head -1 out.txt)
expect_exit 0 "$postern" send-link --action sign-in --email bob@example.com --print
newer=$(head -1 out.txt)
expect_exit 0 "$postern" handle-link "$newer"
expect_exit 65 "$postern" handle-link "$older"
grep -q "A newer link for the same address was used.*(LINK_SUPERSEDED)" err.txt || fail "superseded is not said: $(cat err.txt)"
expect_exit 65 "$postern" handle-link --inspect "$older"
grep -q "(LINK_SUPERSEDED)" err.txt || fail "inspect does not say superseded: $(cat err.txt)"
tampered=$(python3 -c 'import sys; l=sys.argv[1]; i=l.index("oobCode=")+8+70; print(l[:i]+("B" if l[i]=="A" else "A")+l[i+1:])' "$older")
expect_exit 65 "$postern" handle-link "$tampered"
grep -q "(INVALID_OOB_CODE)" err.txt || fail "a tampered link is not the generic answer: $(cat err.txt)"
expect_exit 65 "$postern" handle-link "https://evil.example.net/action?mode=signIn&oobCode=abc"
expect_exit 65 "$postern" send-link --action reset-password --email nobody@example.com
expect_exit 65 "$postern" send-link --action sign-in --email "not an address"
expect_exit 0 "$postern" send-link --action reset-password --email ann@example.com --print
reset=$(head -1 out.txt)
echo "a new password 1" | "$postern" handle-link "$reset" --new-password-stdin >out.txt 2>err.txt || fail "reset: $(cat err.txt)"
grep -qi "password of ann@example.com was changed" out.txt || fail "reset: $(cat out.txt)"
expect_exit 0 "$postern" users show --email ann@example.com --json
python3 -c 'import json; d=json.load(open("out.txt")); assert d["providers"]==["emailLink","password"], d'
expect_exit 0 "$postern" outbox status --json
python3 -c 'import json; d=json.load(open("out.txt")); assert d["counts"]["sent"]>=3, d'
expect_exit 0 "$postern" users disable --email ann@example.com
expect_exit 0 "$postern" keys rotate --purpose action-code
expect_exit 0 "$postern" keys list --json
python3 -c 'import json; d=json.load(open("out.txt")); assert sorted(k["status"] for k in d if k["purpose"]=="action-code")==["active","retired"], d'
expect_exit 0 "$postern" keys rotate --purpose id-token-rsa
expect_exit 0 "$postern" keys list --json
python3 -c 'import json; d=json.load(open("out.txt")); assert sorted(k["status"] for k in d if k["purpose"]=="id-token-rsa")==["active","retired"], d'
# Housekeeping for cron: one round now, what it removed per table; expired rows go, live ones stay.
expect_exit 64 "$postern" maintenance
expect_exit 64 "$postern" maintenance sweep
expect_exit 64 "$postern" maintenance run --retention-days 0
grep -q -- "--retention-days" err.txt || fail "a bad retention is not named"
python3 - <<'PY'
import sqlite3
db = sqlite3.connect("postern.db")
db.execute("INSERT INTO consumed_codes VALUES (randomblob(32), 1000)")
db.execute("INSERT INTO consumed_codes VALUES (randomblob(32), 4000000000)")
db.executemany("INSERT INTO rate_events VALUES (randomblob(16), ?)", [(1000,), (1000,), (4000000000,)])
db.commit()
PY
expect_exit 0 "$postern" maintenance run --json
python3 -c 'import json; d=json.load(open("out.txt")); r=d["removed"]; assert r["consumed_codes"]==1 and r["rate_events"]==2 and d["total"]==3 and d["skipped"] is False, d'
python3 -c 'import sqlite3; db=sqlite3.connect("postern.db"); assert db.execute("SELECT count(*) FROM consumed_codes WHERE expires_at = 4000000000").fetchone()[0] == 1; assert db.execute("PRAGMA auto_vacuum").fetchone()[0] == 2'
expect_exit 0 "$postern" maintenance run
grep -q "^removed 0 row(s)" out.txt || fail "a second round removed something: $(cat out.txt)"
grep -q "^consumed_codes	0" out.txt || fail "maintenance run does not list the tables: $(cat out.txt)"
echo "cli: ok"
