"""An HTTP mail provider for mail-http.sh: verifies every POST with the `standardwebhooks` PyPI
library under each secret given, checks the body's shape, and answers as scripted: 503 for the
first --fail-seconds, 422 for recipients starting with --reject-prefix, else 202 Accepted (the
answer Kratos counted as a failure). Accepted messages are written to --out as
<webhook-id>-<recipient>.eml (the decoded raw message); every POST is logged as one line
`<status> <webhook-id> <recipient>` to stdout. Signature failures answer 400 and log `bad …`."""
import argparse
import base64
import os
import time

from signed_receiver import SignedReceiver, log_line as log

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--out", required=True)
parser.add_argument("--secret", action="append", required=True)
parser.add_argument("--fail-seconds", type=float, default=0)
parser.add_argument("--reject-prefix", default="reject")
args = parser.parse_args()
os.makedirs(args.out, exist_ok=True)
started = time.monotonic()


def check(headers, payload):
    """The body's shape: a mail.send of the raw message signed for."""
    assert set(payload) == {"type", "messageId", "from", "to", "raw"}, payload
    assert payload["type"] == "mail.send" and payload["messageId"] == headers["webhook-id"]
    mime = base64.b64decode(payload["raw"], validate=True)
    assert f"Message-ID: <{payload['messageId']}>".encode() in mime, "the raw message is not the one signed for"
    assert f"To: {payload['to'][0]}".encode() in mime or payload["to"][0].encode() in mime


def answer(status, wid, rcpt):
    log(f"{status} {wid} {rcpt}")
    return status, ({"ok": True} if status < 300 else {"error": "scripted"})


def verified(headers, payload, body):
    rcpt = payload["to"][0]
    if time.monotonic() - started < args.fail_seconds:
        return answer(503, payload["messageId"], rcpt)
    if rcpt.startswith(args.reject_prefix):
        return answer(422, payload["messageId"], rcpt)
    safe = payload["messageId"].replace("/", "_").replace("@", "_at_")
    with open(os.path.join(args.out, f"{safe}-{rcpt}.eml"), "wb") as f:
        f.write(base64.b64decode(payload["raw"]))
    return answer(202, payload["messageId"], rcpt)


def refused(headers, error):
    log(f"bad {error!r}")
    return answer(400, headers.get("webhook-id", "-"), "-")


SignedReceiver(args.secret, port=args.port, path="/mail", on_verified=verified, on_refused=refused, check=check,
               protocol_version="HTTP/1.1").serve_until_interrupted()
