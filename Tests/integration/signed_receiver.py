"""One Standard Webhooks receiver for the integration tests (the webhooks, the SMS JSON provider,
the HTTP mail provider, the bounces' mail.bounced): an HTTP endpoint on 127.0.0.1 that verifies
every POST with the `standardwebhooks` PyPI library (the reference library of
standardwebhooks.com) under each secret it holds — each alone must verify, and there is one
signature per secret — checks it came as `Content-Type: application/json`, and that a secret it
does not hold does not verify it (the check is real). What verifies goes to `on_verified`; what
does not is recorded in `rejected` (and goes to `on_refused`).

Run as a script (`signed_receiver.py PORT SECRET`) it prints `listening`, then each verified
event as one JSON line `{"type": …, "data": …}` and each refusal as `bad …` (bounces.sh).
"""
import base64
import http.server
import json
import os
import sys
import threading

import standardwebhooks

from postern_daemon import free_port

# A secret no sender holds: a body it verifies was not signed for real.
STRANGER = "whsec_" + base64.b64encode(os.urandom(32)).decode()


class SignedReceiver:
    """A Standard Webhooks endpoint at `url`, listening from construction (`down()` closes the
    port: connections are refused; `up()` listens on it again; `close()` is `down()`).

    - `secrets`: each must verify every POST alone (assign `receiver.secrets` to rotate).
    - `check(headers, payload)`: raises for a verified POST the test refuses all the same.
    - `on_verified(headers, payload, body)`: what to answer, a status or (status, JSON body);
      204 by default.
    - `on_refused(headers, error)`: likewise for a refused POST; `refused_status` by default.
    """

    def __init__(self, secrets, port=None, path="/hooks", on_verified=None, on_refused=None, check=None,
                 refused_status=400, protocol_version="HTTP/1.0"):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}{path}"
        self.lock = threading.Lock()
        self.secrets = list(secrets)
        self.rejected = []  # repr of why each refused POST was refused
        self.on_verified = on_verified or (lambda headers, payload, body: 204)
        self.on_refused = on_refused or (lambda headers, error: refused_status)
        self.check = check or (lambda headers, payload: None)
        self.protocol_version = protocol_version
        self.server = None
        self.up()

    def verify(self, body, headers):
        """The payload of a POST that verifies under every secret held; raises otherwise."""
        with self.lock:
            held = list(self.secrets)
        payload = None
        for secret in held:
            payload = standardwebhooks.Webhook(secret).verify(body, headers)
        assert headers.get("content-type") == "application/json", headers.get("content-type")
        signatures = headers.get("webhook-signature", "").split(" ")
        assert len(signatures) == len(held), f"{len(signatures)} signatures for {len(held)} secrets"
        try:
            standardwebhooks.Webhook(STRANGER).verify(body, headers)
        except standardwebhooks.WebhookVerificationError:
            return payload
        raise AssertionError("verified under a secret nobody holds")

    def handler(self):
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = receiver.protocol_version

            def log_message(self, *args):
                pass

            def answer(self, result):
                status, data = result if isinstance(result, tuple) else (result, None)
                body = b"" if data is None else json.dumps(data).encode()
                try:
                    self.send_response(status)
                    if data is not None:
                        self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the sender is gone (killed mid-call)

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                headers = {k.lower(): v for k, v in self.headers.items()}
                try:
                    payload = receiver.verify(body, headers)
                    receiver.check(headers, payload)
                except Exception as error:  # noqa: BLE001 — any failure is a refused POST
                    with receiver.lock:
                        receiver.rejected.append(repr(error))
                    return self.answer(receiver.on_refused(headers, error))
                self.answer(receiver.on_verified(headers, payload, body))

        return Handler

    def up(self):
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), self.handler())
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def down(self):
        self.server.shutdown()
        self.server.server_close()

    close = down

    def serve_until_interrupted(self):
        """For a receiver run as its own process: says `listening`, then serves until SIGINT or
        SIGTERM (postern_daemon turns it into KeyboardInterrupt)."""
        print("listening", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            self.down()


_log_lock = threading.Lock()


def log_line(line):
    """Writes `line` to stdout whole: print() writes the text and its newline apart, and the
    server's threads then ran two lines into one ("202 id user5@…202 id user6@…")."""
    with _log_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def _log_events(port, secret):
    def verified(headers, payload, body):
        log_line(json.dumps({"type": payload["type"], "data": payload["data"]}))
        return 204

    def refused(headers, error):
        log_line(f"bad {error!r}")
        return 400

    SignedReceiver([secret], port=port, on_verified=verified, on_refused=refused).serve_until_interrupted()


if __name__ == "__main__":
    _log_events(int(sys.argv[1]), sys.argv[2])
