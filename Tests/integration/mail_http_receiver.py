"""An HTTP mail provider for mail-http.sh: verifies every POST with the `standardwebhooks` PyPI
library under each secret given, checks the body's shape, and answers as scripted: 503 for the
first --fail-seconds, 422 for recipients starting with --reject-prefix, else 202 Accepted (the
answer Kratos counted as a failure). Accepted messages are written to --out as
<webhook-id>-<recipient>.eml (the decoded raw message); every POST is logged as one line
`<status> <webhook-id> <recipient>` to stdout. Signature failures answer 400 and log `bad …`."""
import argparse
import base64
import http.server
import json
import os
import sys
import time

import standardwebhooks

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--out", required=True)
parser.add_argument("--secret", action="append", required=True)
parser.add_argument("--fail-seconds", type=float, default=0)
parser.add_argument("--reject-prefix", default="reject")
args = parser.parse_args()
os.makedirs(args.out, exist_ok=True)
started = time.monotonic()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def answer(self, status, wid, rcpt):
        body = b'{"ok":true}' if status < 300 else b'{"error":"scripted"}'
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        print(f"{status} {wid} {rcpt}", flush=True)

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            for secret in args.secret:
                payload = standardwebhooks.Webhook(secret).verify(raw, headers)
            assert headers["content-type"] == "application/json", headers
            assert set(payload) == {"type", "messageId", "from", "to", "raw"}, payload
            assert payload["type"] == "mail.send" and payload["messageId"] == headers["webhook-id"]
            mime = base64.b64decode(payload["raw"], validate=True)
            assert f"Message-ID: <{payload['messageId']}>".encode() in mime, "the raw message is not the one signed for"
            assert f"To: {payload['to'][0]}".encode() in mime or payload["to"][0].encode() in mime
        except Exception as error:  # noqa: BLE001 — any failure is a refused POST
            print(f"bad {error!r}", flush=True)
            self.answer(400, headers.get("webhook-id", "-"), "-")
            return
        rcpt = payload["to"][0]
        if time.monotonic() - started < args.fail_seconds:
            self.answer(503, payload["messageId"], rcpt)
        elif rcpt.startswith(args.reject_prefix):
            self.answer(422, payload["messageId"], rcpt)
        else:
            safe = payload["messageId"].replace("/", "_").replace("@", "_at_")
            with open(os.path.join(args.out, f"{safe}-{rcpt}.eml"), "wb") as f:
                f.write(mime)
            self.answer(202, payload["messageId"], rcpt)


server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
print("listening", flush=True)
try:
    server.serve_forever()
except KeyboardInterrupt:
    sys.exit(0)
