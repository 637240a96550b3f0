#!/usr/bin/env bash
# /openapi.json matches the router, both ways. Starts `postern serve` (debug build) on a free port
# in an empty directory and checks:
#   - the document is valid OpenAPI (openapi-spec-validator);
#   - every path + method in it is routed: a request (path parameters filled with dummy values,
#     no credentials, an empty JSON object as body) is not answered 404 NOT_FOUND or 405;
#   - every route the server has is in it: each endpoint of API.md's table, and each
#     `Route(method:path:)` in Sources/PosternServer;
#   - nothing else is routed: paths outside the document answer 404 NOT_FOUND, and methods a
#     documented path does not list answer 405 METHOD_NOT_ALLOWED with an Allow header.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
postern="$root/.build/debug/postern"
python="${POSTERN_PYTHON:-python}"
work=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
port=$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

# An admin token and apps, so the admin routes and the apps' association files exist (without
# them they answer 404 by design).
fingerprint=$(printf 'AB:%.0s' $(seq 31))AB
# The delivery-event intakes too (they answer 404 until their provider is configured).
echo "postmark:openapi-test-postmark-password" >postmark.txt
echo "whsec_$(printf 'k%.0s' $(seq 32) | base64)" >delivery-secret.txt
"$postern" serve --listen "127.0.0.1:$port" --admin-token "openapi-test-admin-token" \
  --apple-app-ids ABCDE12345.com.example.app --android-apps "com.example.app:$fingerprint" \
  --ses-topic-arns arn:aws:sns:us-east-1:123456789012:postern --postmark-webhook-credentials-file postmark.txt \
  --delivery-webhook-secret-file delivery-secret.txt \
  --metrics-listen off 2>serve.log &
pid=$!
for _ in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.1; done

# Routes declared in the server's source: "METHOD PATH" per line.
grep -rhoE 'Route\(\s*method: "[A-Z]+", path: ("[^"]+"|path)' "$root/Sources/PosternServer" |
  sed -E 's/.*method: "([A-Z]+)", path: "?([^"]*)"?/\1 \2/; s/ path$/ \/openapi.json/' | sort -u >source-routes.txt

"$python" - "http://127.0.0.1:$port" source-routes.txt <<'PY'
import http.client
import json
import sys
import urllib.parse

base, source_routes = sys.argv[1], sys.argv[2]
host = urllib.parse.urlsplit(base)
failures = []


def call(method, path, body=None):
    connection = http.client.HTTPConnection(host.hostname, host.port, timeout=10)
    headers = {}
    if body is not None:
        headers["Content-Type"] = "application/json"
    connection.request(method, path, body=body, headers=headers)
    response = connection.getresponse()
    data = response.read()
    connection.close()
    code = None
    try:
        code = json.loads(data)["error"]["code"]
    except Exception:
        pass
    return response.status, code, response.getheader("Allow")


status, _, _ = call("GET", "/openapi.json")
assert status == 200, f"/openapi.json answered {status}"
connection = http.client.HTTPConnection(host.hostname, host.port, timeout=10)
connection.request("GET", "/openapi.json")
document = json.loads(connection.getresponse().read())

try:
    from openapi_spec_validator import validate
except ImportError:
    failures.append("openapi-spec-validator is not installed (pip install -r Tests/requirements.txt)")
else:
    try:
        validate(document)
    except Exception as error:  # the validator's own error types vary by version
        failures.append(f"the document is not valid OpenAPI: {error}")

METHODS = {"get", "put", "post", "delete", "patch", "options", "head", "trace"}
documented = {(method.upper(), path) for path, item in document["paths"].items() for method in item if method in METHODS}
print(f"{len(documented)} operations in the document")


def concrete(path):
    return path.replace("{uid}", "dummy-uid").replace("{id}", "1").replace("{", "").replace("}", "")


# 1. Everything in the document is routed.
for method, path in sorted(documented):
    body = "{}" if method in ("POST", "PATCH", "PUT") else None
    status, code, _ = call(method, concrete(path), body)
    if status == 405 or (status == 404 and code == "NOT_FOUND"):
        failures.append(f"documented {method} {path} is not routed: {status} {code}")

# 2. Every route of the server is in the document: API.md's table and the source's route table.
api_md = """
POST /v1/accounts/anonymous
POST /v1/email-link/send
POST /v1/email-link/complete
POST /v1/password/sign-up
POST /v1/password/sign-in
POST /v1/password/reset
POST /v1/actions/inspect
POST /v1/actions/apply
POST /v1/token
POST /v1/sign-out
GET /v1/me
PATCH /v1/me
DELETE /v1/me
POST /v1/me/password
POST /v1/me/email
POST /v1/me/verify-email
POST /v1/admin/links
GET /v1/admin/users
DELETE /v1/admin/users/{uid}
PATCH /v1/admin/users/{uid}
GET /v1/admin/outbox
POST /v1/admin/outbox/{id}/retry
GET /action
POST /action
GET /healthz
GET /readyz
GET /metrics
GET /.well-known/jwks.json
GET /openapi.json
"""
# Added by issue 12 (links that open the app).
api_md += """
GET /.well-known/apple-app-site-association
GET /.well-known/assetlinks.json
"""
expected = {tuple(line.split()) for line in api_md.strip().splitlines() if line.strip()}
for method, path in sorted(expected - documented):
    failures.append(f"API.md's {method} {path} is not in the document")
source = {tuple(line.split()) for line in open(source_routes) if line.strip()}
if len(source) < len(expected):
    failures.append(f"only {len(source)} routes found in Sources/PosternServer: the grep no longer matches Route(...)")
for method, path in sorted(source - documented):
    failures.append(f"the server routes {method} {path}, the document does not list it")

# 3. Nothing outside the document is routed.
for path in ["/", "/v1", "/v1/nope", "/v1/email-link", "/v1/email-link/send/extra", "/v2/email-link/send",
             "/healthz/x", "/openapi.yaml", "/v1/admin/users/a/b", "/v1/admin/outbox/1/x", "/.well-known/other"]:
    for method in ["GET", "POST"]:
        status, code, _ = call(method, path, "{}" if method == "POST" else None)
        if not (status == 404 and code == "NOT_FOUND"):
            failures.append(f"undocumented {method} {path} answered {status} {code}, want 404 NOT_FOUND")
paths = {path for _, path in documented}
for path in sorted(paths):
    listed = {method for method, p in documented if p == path}
    for method in ["GET", "POST", "PUT", "PATCH", "DELETE"]:
        if method in listed:
            continue
        status, code, allow = call(method, concrete(path), "{}" if method != "GET" else None)
        if status != 405 or code != "METHOD_NOT_ALLOWED":
            failures.append(f"{method} {path} (not in the document) answered {status} {code}, want 405")
        elif allow is None or {m.strip() for m in allow.split(",")} != listed:
            failures.append(f"{method} {path}: Allow {allow!r}, want {sorted(listed)}")

if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print(f"both ways: {len(documented)} documented operations routed; {len(expected)} API.md endpoints and "
      f"{len(source)} source routes documented; unknown paths 404, unlisted methods 405")
PY
echo "openapi: ok"
