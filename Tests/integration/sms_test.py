"""SMS delivery (issue 17, points 2 and 4) against a real `postern serve`: SQLite in a temp dir,
and a fake Twilio the test starts — a local HTTPS server (its certificate from a CA made here,
trusted through --sms-ca-file: certificate checks stay on) that speaks Twilio's Messages API:
it checks the path, HTTP Basic (account SID and auth token) and the form fields, and answers
Twilio's JSON. Run by sms.sh, which checks that every test ran and none skipped.

- provider 503 then 201: exactly one SMS sent, recorded as sent with Twilio's sid;
- provider 400 with Twilio error 21211: dead at once, the code kept (`postern sms status`);
- without the CA the certificate is refused and nothing is sent;
- the generic JSON provider's signature verifies with the `standardwebhooks` PyPI library;
- the auth token and the whole number reach no log line and no finished row.

Environment: POSTERN_BIN (the postern binary), E2E_WORK (a temp dir; pytest_lib.bash sets both).
"""
import base64
import http.server
import json
import os
import sqlite3
import ssl
import subprocess
import threading
import urllib.parse

import pytest

from postern_daemon import LOOPBACK_TARGETS, POSTERN, UNFINISHED, Daemon, free_port, http_request, wait_for
from signed_receiver import SignedReceiver
from smtp_server import make_certificates

SID = "AC" + "0123456789abcdef" * 2
TOKEN = "tw-auth-token-0f9e8d7c6b5a"
FROM = "+15005550006"
JSON_SECRET = "whsec_" + base64.b64encode(b"the sms gateway's secret, 32 b.").decode()


class FakeTwilio:
    """Twilio's Messages API on loopback HTTPS. `script[number]` is the list of statuses to answer
    that number with, in order (then 201). Every request is recorded."""

    def __init__(self, tls_dir):
        self.port = free_port()
        self.base_url = f"https://127.0.0.1:{self.port}"
        self.lock = threading.Lock()
        self.requests = []   # (To, status answered, form)
        self.refused = []    # why a request was refused (auth, shape)
        self.script = {}
        paths = make_certificates(tls_dir)
        self.ca = paths["ca.pem"]
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status == 429:
                    self.send_header("Retry-After", "1")
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path != f"/2010-04-01/Accounts/{SID}/Messages.json":
                    fake.refused.append(f"path {self.path}")
                    return self.answer(404, {"code": 20404, "message": "not found", "status": 404})
                expected = "Basic " + base64.b64encode(f"{SID}:{TOKEN}".encode()).decode()
                if self.headers.get("Authorization") != expected:
                    fake.refused.append("auth")
                    return self.answer(401, {"code": 20003, "message": "Authenticate", "status": 401})
                if not (self.headers.get("Content-Type") or "").startswith("application/x-www-form-urlencoded"):
                    fake.refused.append("content type")
                    return self.answer(400, {"code": 21601, "message": "bad content type", "status": 400})
                form = urllib.parse.parse_qs(raw.decode(), strict_parsing=True, keep_blank_values=True)
                if set(form) not in ({"To", "From", "Body"}, {"To", "MessagingServiceSid", "Body"}) or any(len(v) != 1 for v in form.values()):
                    fake.refused.append(f"fields {sorted(form)}")
                    return self.answer(400, {"code": 21604, "message": "missing field", "status": 400})
                to = form["To"][0]
                with fake.lock:
                    queue = fake.script.get(to, [])
                    status = queue.pop(0) if queue else 201
                    fake.requests.append((to, status, {k: v[0] for k, v in form.items()}))
                if status == 201:
                    return self.answer(201, {"sid": "SM" + os.urandom(16).hex(), "status": "queued", "to": to, "body": form["Body"][0]})
                if status == 400:
                    return self.answer(400, {"code": 21211, "message": f"The 'To' number {to} is not a valid phone number.", "status": 400})
                return self.answer(status, {"code": 20500, "message": "Internal error", "status": status})

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(paths["server.pem"], paths["server.key"])
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def to(self, number):
        with self.lock:
            return [r for r in self.requests if r[0] == number]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def work():
    path = os.path.join(os.environ["E2E_WORK"], "sms")
    os.makedirs(path, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def twilio(work):
    fake = FakeTwilio(os.path.join(work, "tls"))
    yield fake
    fake.close()


@pytest.fixture(scope="module")
def token_file(work):
    path = os.path.join(work, "twilio-token")
    with open(path, "w") as f:
        f.write(TOKEN + "\n")
    return path


def twilio_args(twilio, token_file, ca=True):
    args = [
        "--sms-transport", f"twilio:{SID}", "--sms-twilio-base-url", twilio.base_url, "--sms-twilio-auth-token-file", token_file,
        "--sms-from", FROM, "--default-region", "DE", "--sms-countries", "DE,US", "--sms-retry-base", "1", *LOOPBACK_TARGETS,
    ]
    return args + (["--sms-ca-file", twilio.ca] if ca else [])


@pytest.fixture(scope="module")
def daemon(work, twilio, token_file):
    d = Daemon(work, "daemon", *twilio_args(twilio, token_file))
    yield d
    assert d.stop() == 0


def cli(daemon, *args, extra=()):
    """Runs `postern sms …` on the daemon's database and settings."""
    result = subprocess.run(
        [POSTERN, "sms", *args, "--database", daemon.database, "--public-url", daemon.public_url, *extra],
        cwd=daemon.work, capture_output=True, text=True, timeout=60)
    return result


def status(daemon, twilio, token_file):
    result = cli(daemon, "status", "--json", extra=twilio_args(twilio, token_file))
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def settled(daemon, twilio, token_file):
    """Whether the daemon has no SMS left to act on (`postern sms status`): its worker sends only a
    message it holds claimed, taken from those queued or retrying, and records the outcome after
    the provider answered, which the fake records first. So with none of them left, every request
    the daemon made is in `twilio.requests` and it makes no other."""
    counts = status(daemon, twilio, token_file)["counts"]
    return sum(counts[state] for state in UNFINISHED) == 0


def rows(daemon):
    with sqlite3.connect(daemon.database) as db:
        return db.execute("SELECT id, state, recipient, country_code, attempts, last_reply FROM sms_outbox ORDER BY id").fetchall()


def test_503_then_201_is_sent_exactly_once(daemon, twilio, token_file):
    number = "+4915112340001"
    twilio.script[number] = [503]
    queued = cli(daemon, "test", "0151 12340001", extra=twilio_args(twilio, token_file))
    assert queued.returncode == 0, queued.stderr
    assert "+49…" in queued.stdout and "12340001" not in queued.stdout, queued.stdout
    wait_for(lambda: any(r[1] == "sent" for r in rows(daemon)), 30, "the SMS to be sent")
    got = twilio.to(number)
    assert [status for _, status, _ in got] == [503, 201], got
    form = got[-1][2]
    assert form["From"] == FROM and form["To"] == number
    assert form["Body"].endswith("\n\n@127.0.0.1 #000000"), form["Body"]
    assert "Postern" in form["Body"]
    (row,) = [r for r in rows(daemon) if r[1] == "sent"]
    assert row[2] is None, "the number is erased once sent"
    assert row[3] == "49" and row[4] == 2 and row[5].startswith("HTTP 201 SM"), row
    # Nothing more is sent later: the daemon has no SMS left to send.
    wait_for(lambda: settled(daemon, twilio, token_file), 30, "no SMS left to send")
    assert len(twilio.to(number)) == 2
    assert twilio.refused == []
    log = open(daemon.log_path).read()
    assert TOKEN not in log and number not in log and "15112340001" not in log, "no token or number in the log"
    assert '"country":"+49"' in log.replace(" ", "")


def test_400_is_dead_with_the_provider_code_kept(daemon, twilio, token_file):
    number = "+14155550142"
    twilio.script[number] = [400]
    queued = cli(daemon, "test", number, extra=twilio_args(twilio, token_file))
    assert queued.returncode == 0, queued.stderr
    wait_for(lambda: any(r[1] == "dead" for r in rows(daemon)), 30, "the SMS to be dead")
    assert [s for _, s, _ in twilio.to(number)] == [400], "a 4xx is not retried"
    body = status(daemon, twilio, token_file)
    dead = [m for m in body["latest"] if m["state"] == "dead"]
    assert len(dead) == 1 and dead[0]["lastReply"] == "HTTP 400 code 21211" and dead[0]["country"] == "+1", body
    assert body["counts"]["dead"] == 1 and body["counts"]["sent"] == 1, body
    text = cli(daemon, "status", extra=twilio_args(twilio, token_file)).stdout
    assert "HTTP 400 code 21211" in text and number not in text and "4155550142" not in text
    with sqlite3.connect(daemon.database) as db:
        assert db.execute("SELECT count(*) FROM sms_outbox WHERE recipient IS NOT NULL").fetchone()[0] == 0


def test_metrics_count_by_country_code_only(daemon):
    code, text, _ = http_request(f"http://127.0.0.1:{daemon.metrics_port}", "GET", "/metrics")
    text = text.decode()
    assert code == 200
    assert 'postern_sms_total{event="sent",country="49"} 1' in text, text
    assert 'postern_sms_total{event="dead",country="1"} 1' in text
    assert 'postern_sms_caps_hit_total{cap="global_daily"} 0' in text
    assert "4155550142" not in text and "15112340001" not in text


def test_country_outside_the_list_and_a_bad_number_are_refused_without_echo(daemon, twilio, token_file):
    before = len(twilio.requests)
    refused = cli(daemon, "test", "+447911123456", extra=twilio_args(twilio, token_file))
    assert refused.returncode == 65, (refused.returncode, refused.stderr)
    assert "country" in refused.stderr and "7911123456" not in refused.stderr
    bad = cli(daemon, "test", "+49 151 1234 5678 9012 34", extra=twilio_args(twilio, token_file))
    assert bad.returncode == 64 and "15 digits" in bad.stderr and "9012" not in bad.stderr, bad.stderr
    letters = cli(daemon, "test", "+1-800-FLOWERS", extra=twilio_args(twilio, token_file))
    assert letters.returncode == 64 and "FLOWERS" not in letters.stderr, letters.stderr
    # Nothing reaches the provider: none was queued (or it would be sent before this holds).
    wait_for(lambda: settled(daemon, twilio, token_file), 30, "no SMS left to send")
    assert len(twilio.requests) == before


def test_now_sends_directly_and_certificate_checks_stay_on(daemon, twilio, token_file):
    number = "+4915112340002"
    sent = cli(daemon, "test", number, "--now", extra=twilio_args(twilio, token_file))
    assert sent.returncode == 0, sent.stderr
    assert sent.stdout.startswith("HTTP 201 SM") and "GSM-7, 1 segment(s)" in sent.stdout, sent.stdout
    assert TOKEN not in sent.stdout + sent.stderr and number not in sent.stdout
    assert [s for _, s, _ in twilio.to(number)] == [201]
    # Without the CA file the fake's certificate is not trusted: nothing reaches it.
    untrusted = cli(daemon, "test", "+4915112340003", "--now", extra=twilio_args(twilio, token_file, ca=False))
    assert untrusted.returncode == 69, untrusted.stdout
    assert "certificate" in untrusted.stdout.lower() or "ssl" in untrusted.stdout.lower(), untrusted.stdout
    assert twilio.to("+4915112340003") == []
    # A wrong token: Twilio's 401 with its code, dead (not retried), the token never printed.
    wrong = os.path.join(os.path.dirname(token_file), "wrong-token")
    with open(wrong, "w") as f:
        f.write("not-the-token\n")
    args = twilio_args(twilio, token_file)
    args[args.index(token_file)] = wrong
    refused = cli(daemon, "test", "+4915112340004", "--now", extra=args)
    assert refused.returncode == 69 and refused.stdout.startswith("HTTP 401 code 20003"), refused.stdout
    assert "not-the-token" not in refused.stdout + refused.stderr
    assert twilio.refused == ["auth"]
    twilio.refused.clear()


class SignedGateway(SignedReceiver):
    """A generic SMS gateway: verifies each POST (``SignedReceiver``), records it, answers 202
    (401 for one that does not verify)."""

    def __init__(self):
        self.verified = []
        super().__init__([JSON_SECRET], path="/send", on_verified=self.record, refused_status=401)

    def record(self, headers, payload, body):
        with self.lock:
            self.verified.append((headers["webhook-id"], payload))
        return 202


def test_generic_json_provider_is_signed_as_standard_webhooks(daemon, work):
    gateway = SignedGateway()
    try:
        secret_file = os.path.join(work, "sms-json-secret")
        with open(secret_file, "w") as f:
            f.write(JSON_SECRET + "\n")
        args = ["--sms-transport", f"json:{gateway.url}", "--sms-json-secret-file", secret_file, "--sms-countries", "DE",
                *LOOPBACK_TARGETS]
        sent = cli(daemon, "test", "+4915112340005", "--now", extra=args)
        assert sent.returncode == 0, (sent.stdout, sent.stderr)
        assert sent.stdout.startswith("HTTP 202"), sent.stdout
        assert gateway.rejected == [], gateway.rejected
        ((webhook_id, payload),) = gateway.verified
        assert webhook_id.startswith("cli-")
        assert payload["to"] == "+4915112340005" and payload["reference"] == webhook_id
        assert payload["body"].endswith("@127.0.0.1 #000000")
        # Without a secret file the transport does not start: a setting error, nothing sent.
        missing = cli(daemon, "test", "+4915112340006", "--now", extra=["--sms-transport", f"json:{gateway.url}", "--sms-countries", "DE",
                                                                            *LOOPBACK_TARGETS])
        assert missing.returncode == 64 and "--sms-json-secret-file" in missing.stderr, missing.stderr
        assert len(gateway.verified) == 1
    finally:
        gateway.close()


def test_a_waiting_number_is_sealed_in_the_database(daemon, twilio, token_file):
    number = "+4915112340009"
    twilio.script[number] = [503] * 3
    queued = cli(daemon, "test", number, extra=twilio_args(twilio, token_file))
    assert queued.returncode == 0, queued.stderr
    wait_for(lambda: len(twilio.to(number)) >= 1, 30, "a first attempt")
    with sqlite3.connect(daemon.database) as db:
        (sealed,) = db.execute("SELECT recipient FROM sms_outbox WHERE state != 'sent' AND state != 'dead'").fetchone()
    assert sealed is not None and b"15112340009" not in bytes(sealed), "sealed while it may still be sent"
    for path in (daemon.database, daemon.database + "-wal"):
        if os.path.exists(path):
            with open(path, "rb") as f:
                assert b"15112340009" not in f.read(), f"the number is in the clear in {path}"
    wait_for(lambda: [s for _, s, _ in twilio.to(number)] == [503, 503, 503, 201], 60, "the retries, then the 201")
    wait_for(lambda: all(r[2] is None for r in rows(daemon)), 10, "the number erased")
