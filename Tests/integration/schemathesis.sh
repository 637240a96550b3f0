#!/usr/bin/env bash
# schemathesis against a live `postern serve`: every operation of /openapi.json, every check
# (`--checks all`, plus schemathesis_hooks.py's), in all four phases (examples, coverage, fuzzing,
# stateful), deterministic (the same cases every run) and bounded, must end with no finding.
# The daemon runs on the embedded defaults in an empty temp dir with an admin token; the per-IP
# and per-address mail limits and the mail caps are switched off for the run (--ip-per-minute 0,
# --mail-interval 0, --mail-per-hour 0, --mail-domain-per-hour 0, --mail-per-hour-total 0), the challenge off (--challenge off), and the admin token's guess budget raised out of reach
# (--admin-token-guesses: the auth checks send every admin operation without a token and with a
# made-up one), since thousands of requests from one address are the point here; sign-in by
# phone is on (--phone-sign-in), so its two operations are tested past PHONE_SIGN_IN_DISABLED.
# SCHEMATHESIS_MAX_EXAMPLES (default 100 per operation: about 5,000 cases in 80 s here) bounds it;
# SCHEMATHESIS_SEED=N makes a random run from that seed instead, to look further than CI does.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
postern="$root/.build/debug/postern"
python="${POSTERN_PYTHON:-$root/.venv/bin/python}"
schemathesis="$(dirname "$python")/schemathesis"
[ -x "$schemathesis" ] || { echo "FAIL: schemathesis is not installed (pip install -r Tests/requirements.txt)"; exit 1; }
work=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
port=$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export POSTERN_SCHEMATHESIS_ADMIN_TOKEN="schemathesis-admin-token-$RANDOM$RANDOM"

"$postern" serve --listen "127.0.0.1:$port" --public-url "http://127.0.0.1:$port" \
  --admin-token "$POSTERN_SCHEMATHESIS_ADMIN_TOKEN" --metrics-listen off \
  --ip-per-minute 0 --mail-interval 0 --mail-per-hour 0 --mail-domain-per-hour 0 --mail-per-hour-total 0 --challenge off --admin-token-guesses 1000000 \
  --sms-countries DE --sms-number-interval 0 --sms-number-per-hour 0 --sms-ip-per-hour 0 --phone-sign-in 2>serve.log &
pid=$!
for _ in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:$port/readyz" && break; sleep 0.1; done

start=$(date +%s)
set +e
NO_PROXY='*' no_proxy='*' PYTHONPATH="$root/Tests/integration" SCHEMATHESIS_HOOKS=schemathesis_hooks \
  "$schemathesis" --config-file "$root/Tests/integration/schemathesis.toml" run "http://127.0.0.1:$port/openapi.json" \
  --checks all --max-examples "${SCHEMATHESIS_MAX_EXAMPLES:-100}" \
  $([ -n "${SCHEMATHESIS_SEED:-}" ] && echo "--seed $SCHEMATHESIS_SEED" || echo --generation-deterministic) --workers 2 --no-color --request-timeout 10 \
  >run.log 2>&1
status=$?
set -e
elapsed=$(( $(date +%s) - start ))
# The whole log stays in .build for a look at the cases (the temp dir goes).
cp run.log "$root/.build/schemathesis-run.log"
tail -n 25 run.log
if [ "$status" -ne 0 ]; then
  echo "FAIL: schemathesis exit $status after ${elapsed}s"
  echo "--- last lines of serve.log"; tail -n 20 serve.log
  exit 1
fi
if grep -q '"level":"error"\|level=error' serve.log; then
  echo "FAIL: the daemon logged errors:"; grep 'error' serve.log | head -n 20; exit 1
fi
echo "schemathesis: ok in ${elapsed}s"
