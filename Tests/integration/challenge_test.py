"""The challenge on the public requests that send mail or SMS (issue 47 point 3) against a real
`postern serve` (SQLite in a temp dir, mail as .eml files, SMS to sms_test.py's fake Twilio), with
solvers no one here wrote: PyPI's `altcha` (2.3.0, `solve_challenge_v1`) and the real ALTCHA
widget (2.3.0, as django-altcha bundles it) in headless Chromium; and a loopback HTTPS siteverify
server speaking Turnstile's documented shape for `--captcha turnstile`. Run by challenge.sh.

- `--challenge always`: no solution, a tampered one (number, salt, its expiry, signature,
  challenge, algorithm, the number's type) and a payload that is not base64 of a JSON object are
  all CHALLENGE_REQUIRED and queue nothing; the library's solution of `GET /v1/challenge` → 202
  and exactly one mail; the same solution again (on any endpoint) → CHALLENGE_REQUIRED; one past
  its `expires` (`--challenge-lifetime 1`, the clock waited out by polling) → CHALLENGE_REQUIRED.
- The bot run over send-link, sign-up, reset and phone sign-in: no mail or SMS leaves without a
  solved challenge, and a solution used twice is refused (the outbox's rows and the SMS counter
  unchanged by every refusal; one mail or SMS per solution).
- `--challenge when-limited --challenge-ip-per-hour 3` behind `--trusted-proxies`: three requests
  an IP pass, the fourth must solve; two X-Forwarded-For addresses count apart; the answers are
  byte for byte the same for an address with an account and one without.
- The widget in Chromium: its payload, read from the form field `altcha`, → 202 and one mail.
- `--captcha turnstile`: a good token → 202 (the service got the secret, the token and the client's
  IP), a bad or reused one → CHALLENGE_REQUIRED, the service down → 503 UNAVAILABLE; the secret is
  never in the log.
"""
import base64
import hashlib
import http.server
import json
import os
import secrets
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
from altcha import solve_challenge_v1

from altcha_widget import WidgetPage
from phones_test import NUMBER, TWILIO, Phones, code_of
from postern_daemon import HTTP, Daemon, free_port, six_digits, start_chromium, stop_chromium, wait_for
from smtp_server import make_certificates

LIMITS_OFF = ("--mail-interval", "0", "--mail-per-hour", "0", "--mail-domain-per-hour", "0", "--mail-per-hour-total", "0",
              "--ip-per-minute", "0")
PASSWORD = "correct horse battery staple 47"
SITE_KEY = "0x4AAAAAAA-test-site-key"
CAPTCHA_SECRET = "0x4AAAAAAA-secret-" + secrets.token_hex(16)


def unique(tag):
    return f"{tag}-{secrets.token_hex(4)}@example.com"


def work_dir():
    return os.environ["E2E_WORK"]


def offer(daemon):
    """`GET /v1/challenge`: the proof of work to solve."""
    status, answer, _ = daemon.get("/v1/challenge")
    assert status == 200, (status, answer)
    assert answer["kind"] == "altcha" and answer["algorithm"] == "SHA-256", answer
    assert isinstance(answer["maxnumber"], int) and answer["maxnumber"] > 0, answer
    return answer


def solution_fields(challenge):
    """The ALTCHA payload's fields for `challenge`, solved by PyPI's altcha."""
    solved = solve_challenge_v1(challenge["challenge"], challenge["salt"], challenge["algorithm"], challenge["maxnumber"])
    assert solved is not None, "altcha found no number up to maxnumber"
    return {"algorithm": challenge["algorithm"], "challenge": challenge["challenge"], "number": solved.number,
            "salt": challenge["salt"], "signature": challenge["signature"], "took": int(solved.took * 1000)}


def encode(fields):
    """ALTCHA's payload: base64 (standard, as btoa) of the JSON object."""
    return base64.b64encode(json.dumps(fields).encode()).decode()


def solved(daemon):
    return encode(solution_fields(offer(daemon)))


def required(status, answer, kind="altcha"):
    """A 400 CHALLENGE_REQUIRED naming what to solve."""
    assert status == 400, (status, answer)
    error = answer["error"]
    assert error["code"] == "CHALLENGE_REQUIRED", answer
    assert error["challenge"] == kind and error["challengeUrl"] == "/v1/challenge", answer


def outbox_rows(daemon):
    """Every row of the mail outbox, whatever its state: a refused request adds none."""
    return sum(v for k, v in daemon.metrics().items() if k.startswith("postern_outbox_messages{"))


def sms_queued(daemon):
    return sum(v for k, v in daemon.metrics().items() if k.startswith('postern_sms_total{event="queued"'))


def challenges(daemon):
    """postern_challenges_total by outcome."""
    metrics = daemon.metrics()
    return {o: metrics.get(f'postern_challenges_total{{outcome="{o}"}}', 0) for o in ("asked", "solved", "refused")}


def drained(daemon):
    return daemon.unfinished("postern_outbox_messages") == 0


def exactly_one_mail(daemon, email, earlier=0):
    """The one mail to `email` arrives, and once the outbox has nothing left to send, it is the only
    one beside the `earlier` mails to that address."""
    message = daemon.mailbox.next(email)
    wait_for(lambda: drained(daemon), 30, "the outbox to drain")
    assert daemon.mailbox.count_for(email) == earlier + 1, f"more than one new mail to {email}"
    return message


def raw_post(daemon, path, body, headers=None):
    """(status, body bytes, Content-Type): for answers compared byte for byte."""
    request = urllib.request.Request(daemon.public_url + path, data=json.dumps(body).encode(), method="POST")
    request.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with HTTP.open(request, timeout=30) as answer:
            return answer.status, answer.read(), answer.headers.get("Content-Type")
    except urllib.error.HTTPError as error:
        return error.code, error.read(), error.headers.get("Content-Type")


def refusal_reasons(daemon):
    """Why each refused solution was refused, in order (the operator's log; the answers are all alike)."""
    reasons = []
    for line in open(daemon.log_path).read().splitlines():
        entry = json.loads(line)
        if entry.get("msg") == "request refused" and entry.get("code") == "CHALLENGE_REQUIRED":
            reasons.append(entry["detail"].removeprefix("challenge solution refused: "))
    return reasons


def stopped(daemon):
    assert daemon.stop() == 0, open(daemon.log_path).read()[-4000:]


def make_account(daemon, email, headers=None):
    """An account for `email`, by the mailed code (a solution with it when the daemon asks for one)."""
    body = {"email": email}
    status, answer, _ = daemon.post("/v1/email-link/send", body, headers=headers)
    if status == 400:
        required(status, answer)
        body["challengeSolution"] = solved(daemon)
        status, answer, _ = daemon.post("/v1/email-link/send", body, headers=headers)
    assert status == 202, (status, answer)
    code = six_digits(daemon.mailbox.next(email))
    status, answer, _ = daemon.post("/v1/email-link/complete", {"email": email, "code": code})
    assert status == 200, (status, answer)


@pytest.fixture(scope="module", autouse=True)
def twilio_lifetime():
    yield
    if TWILIO:
        assert TWILIO["fake"].refused == [], TWILIO["fake"].refused
        TWILIO["fake"].close()


def test_always_refuses_missing_tampered_and_malformed_solutions():
    daemon = Daemon(work_dir(), "always", *LIMITS_OFF, "--challenge", "always")
    try:
        email = unique("pow")
        status, answer, _ = daemon.post("/v1/email-link/send", {"email": email})
        required(status, answer)
        assert outbox_rows(daemon) == 0

        challenge = offer(daemon)
        fields = solution_fields(challenge)
        expires = int(challenge["salt"].split("?expires=")[1].rstrip("&"))
        assert 0 < expires - time.time() <= 301, challenge["salt"]

        def forged(**change):
            return encode({**fields, **change})

        other_salt = ("0" if challenge["salt"][0] != "0" else "1") + challenge["salt"][1:]
        later_salt = challenge["salt"].split("?")[0] + f"?expires={expires + 86400}&"
        # A challenge of the client's own making, signed with the signature of Postern's.
        own_salt = secrets.token_hex(12) + f"?expires={expires}&"
        own_challenge = hashlib.sha256((own_salt + "7").encode()).hexdigest()
        # Each with the reason the operator's log gives (the client is told only to solve a new one).
        refused = {
            "number + 1": (forged(number=fields["number"] + 1), "wrong"),
            "another salt": (forged(salt=other_salt), "wrong"),
            "a later expiry": (forged(salt=later_salt), "wrong"),
            "another signature": (forged(signature=("0" if fields["signature"][0] != "0" else "1") + fields["signature"][1:]), "wrong"),
            "the client's own challenge": (forged(challenge=own_challenge, salt=own_salt, number=7), "wrong"),
            "SHA-1": (forged(algorithm="SHA-1"), "unsupported"),
            "a salt of another shape": (forged(salt=challenge["salt"] + "x=1&"), "unsupported"),
            "the number as a string": (forged(number=str(fields["number"])), "malformed"),
            "no signature": (encode({k: v for k, v in fields.items() if k != "signature"}), "malformed"),
            "not base64": ("%%% not base64 %%%", "malformed"),
            "base64 of not JSON": (base64.b64encode(b"number=1&salt=2").decode(), "malformed"),
            "base64 of a JSON array": (base64.b64encode(json.dumps(list(fields.values())).encode()).decode(), "malformed"),
            # Empty is no solution at all: asked, not refused.
            "empty": ("", None),
        }
        for why, (payload, _) in refused.items():
            status, answer, _ = daemon.post("/v1/email-link/send", {"email": email, "challengeSolution": payload})
            assert status == 400 and answer["error"]["code"] == "CHALLENGE_REQUIRED", (why, status, answer)
            required(status, answer)
        assert outbox_rows(daemon) == 0, "a refused request queued a mail"

        # The refusals used nothing up: the genuine solution of the same challenge passes, once.
        status, answer, _ = daemon.post("/v1/email-link/send", {"email": email, "challengeSolution": encode(fields)})
        assert (status, answer) == (202, {"status": "sent"}), (status, answer)
        status, answer, _ = daemon.post("/v1/email-link/send", {"email": email, "challengeSolution": encode(fields)})
        required(status, answer)
        exactly_one_mail(daemon, email)
        assert outbox_rows(daemon) == 1
        # Asked: no solution, and the empty one; refused: every other above and the second use.
        assert challenges(daemon) == {"asked": 2, "solved": 1, "refused": len(refused) - 1 + 1}
        expected = [reason for _, reason in refused.values() if reason] + ["used"]
        assert refusal_reasons(daemon) == expected, refusal_reasons(daemon)
    finally:
        stopped(daemon)


def test_a_solution_past_its_expiry_is_refused():
    daemon = Daemon(work_dir(), "expiry", *LIMITS_OFF, "--challenge", "always", "--challenge-lifetime", "1")
    try:
        email = unique("late")
        challenge = offer(daemon)
        expires = int(challenge["salt"].split("?expires=")[1].rstrip("&"))
        assert expires - time.time() <= 2, challenge["salt"]
        payload = encode(solution_fields(challenge))
        # The daemon accepts up to its `expires` second: wait until the clock is past it.
        wait_for(lambda: time.time() >= expires + 1, 10, "the challenge's expiry to pass")
        status, answer, _ = daemon.post("/v1/email-link/send", {"email": email, "challengeSolution": payload})
        required(status, answer)
        assert outbox_rows(daemon) == 0
        assert refusal_reasons(daemon) == ["expired"], refusal_reasons(daemon)
    finally:
        stopped(daemon)


def test_bot_run_no_mail_or_sms_without_a_solved_challenge_and_no_solution_twice():
    """The must-show: with the challenge on, no mail leaves without a solved challenge and a
    solution used twice is refused, over send-link, sign-up, reset and phone sign-in."""
    daemon = Phones(work_dir(), "bot", "--challenge", "always", "--phone-sign-in")
    try:
        holder = unique("holder")
        make_account(daemon, holder)
        rows = outbox_rows(daemon)
        requests = [
            ("/v1/email-link/send", {"email": unique("link")}, "mail"),
            ("/v1/password/sign-up", {"email": unique("signup"), "password": PASSWORD}, "mail"),
            ("/v1/password/reset", {"email": holder}, "mail"),
            ("/v1/phone/send", {"phoneNumber": NUMBER}, "sms"),
        ]
        garbage = ["", "x", base64.b64encode(b"{}").decode(), solved(daemon).replace("A", "B", 1)]
        spent = []
        for path, body, kind in requests:
            # The bot: many requests without a solution or with junk; none queues anything.
            for index in range(8):
                attempt = dict(body)
                if index >= 4:
                    attempt["challengeSolution"] = garbage[index - 4]
                status, answer, _ = daemon.post(path, attempt)
                required(status, answer)
            assert outbox_rows(daemon) == rows and sms_queued(daemon) == 0, f"{path}: a refused request queued"

            # Solved once: it passes, once.
            payload = solved(daemon)
            status, answer, _ = daemon.post(path, {**body, "challengeSolution": payload})
            assert status == 202, (path, status, answer)
            status, answer, _ = daemon.post(path, {**body, "challengeSolution": payload})
            required(status, answer)
            # A solution spent on another endpoint is spent here too.
            for earlier in spent:
                status, answer, _ = daemon.post(path, {**body, "challengeSolution": earlier})
                required(status, answer)
            spent.append(payload)
            if kind == "mail":
                rows += 1
                assert outbox_rows(daemon) == rows, f"{path}: want exactly one more row in the outbox"
            else:
                assert sms_queued(daemon) == 1, "want exactly one SMS queued"

        for path, body, kind in requests:
            if kind == "mail":
                # The holder had the mail of its own sign-in before.
                exactly_one_mail(daemon, body["email"], earlier=1 if body["email"] == holder else 0)
            else:
                code_of(daemon.sms.next(NUMBER))
        wait_for(lambda: sum(v for k, v in daemon.metrics().items() if k.startswith('postern_sms_total{event="sent"')) == 1,
                 30, "the SMS to be sent")
        assert [to for to, _, _ in TWILIO["fake"].requests].count(NUMBER) == 1, "want one SMS to the number"
        counts = challenges(daemon)
        # The account's own sign-in solved one too.
        assert counts["solved"] == 1 + len(requests), counts
        assert counts["refused"] >= len(requests) * 5, counts
    finally:
        stopped(daemon)


def test_when_limited_asks_past_the_ip_threshold_alike_for_every_address():
    daemon = Daemon(work_dir(), "limited", *LIMITS_OFF, "--challenge", "when-limited", "--challenge-ip-per-hour", "3",
                    "--trusted-proxies", "127.0.0.1/32")

    def send(ip, email, **extra):
        return raw_post(daemon, "/v1/email-link/send", {"email": email, **extra}, {"X-Forwarded-For": ip})

    try:
        for ip in ("198.51.100.7", "198.51.100.8"):
            for index in range(3):
                status, body, _ = send(ip, unique(f"ip{index}"))
                assert (status, json.loads(body)) == (202, {"status": "sent"}), (ip, index, status, body)
            status, body, _ = send(ip, unique("fourth"))
            required(status, json.loads(body))
            late = unique("solved")
            status, body, _ = send(ip, late, challengeSolution=solved(daemon))
            assert status == 202, (ip, status, body)
            exactly_one_mail(daemon, late)
            status, body, _ = send(ip, unique("again"))
            required(status, json.loads(body))

        # An address with an account and one without: the same bytes below the threshold and past it.
        member = unique("member")
        make_account(daemon, member, headers={"X-Forwarded-For": "198.51.100.20"})
        for index in range(2):
            # One IP for the pair: both addresses meet the same count.
            ip = f"198.51.100.{30 + index}"
            first, second = send(ip, member), send(ip, unique("stranger"))
            assert first == second and first[0] == 202, (index, first, second)
        # Past the threshold: the IP made three requests; the fourth, for either address, is the same refusal.
        refusals = []
        for email in (member, unique("stranger")):
            ip = "198.51.100.50" if email == member else "198.51.100.51"
            for index in range(3):
                assert send(ip, unique("fill"))[0] == 202
            refusals.append(send(ip, email))
        assert refusals[0] == refusals[1], refusals
        required(refusals[0][0], json.loads(refusals[0][1]))
    finally:
        stopped(daemon)


def test_the_altcha_widget_in_chromium_solves_postern_s_challenge():
    daemon = Daemon(work_dir(), "widget", *LIMITS_OFF, "--challenge", "always")
    page = WidgetPage()
    driver, group = start_chromium(work_dir(), "widget")
    try:
        email = unique("widget")
        payload, took, wall = page.solve(driver, offer(daemon))
        print(f"widget: solved in {took:.0f} ms by its own count, {wall:.0f} ms from the click")
        status, answer, _ = daemon.post("/v1/email-link/send", {"email": email, "challengeSolution": payload})
        assert (status, answer) == (202, {"status": "sent"}), (status, answer)
        status, answer, _ = daemon.post("/v1/email-link/send", {"email": email, "challengeSolution": payload})
        required(status, answer)
        exactly_one_mail(daemon, email)
    finally:
        stop_chromium(driver, group)
        page.close()
        stopped(daemon)


class FakeSiteverify:
    """Turnstile's siteverify on loopback HTTPS (a test CA): a form POST of secret, response and
    remoteip answered `{"success": …, "error-codes": […]}`; a token of `good` is accepted once,
    as Turnstile does. Every request's form is recorded."""

    def __init__(self, tls_dir):
        self.port = free_port()
        self.url = f"https://127.0.0.1:{self.port}/siteverify"
        self.lock = threading.Lock()
        self.requests = []
        self.good = set()
        self.spent = set()
        paths = make_certificates(tls_dir)
        self.ca = paths["ca.pem"]
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                form = {k: v[0] for k, v in urllib.parse.parse_qs(raw.decode(), keep_blank_values=True).items()}
                token = form.get("response", "")
                with fake.lock:
                    fake.requests.append({"path": self.path, "type": self.headers.get("Content-Type"), **form})
                    if self.path != "/siteverify" or form.get("secret") != CAPTCHA_SECRET:
                        verdict = {"success": False, "error-codes": ["invalid-input-secret"]}
                    elif token in fake.spent:
                        verdict = {"success": False, "error-codes": ["timeout-or-duplicate"]}
                    elif token in fake.good:
                        fake.spent.add(token)
                        verdict = {"success": True, "error-codes": [], "challenge_ts": "2026-01-01T00:00:00.000Z",
                                   "hostname": "127.0.0.1", "action": "", "cdata": ""}
                    else:
                        verdict = {"success": False, "error-codes": ["invalid-input-response"]}
                data = json.dumps(verdict).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(paths["server.pem"], paths["server.key"])
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def token(self):
        value = "XXXX.DUMMY.TOKEN." + secrets.token_urlsafe(24)
        with self.lock:
            self.good.add(value)
        return value

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_turnstile_siteverify_against_a_local_server():
    work = os.path.join(work_dir(), "captcha")
    os.makedirs(work, exist_ok=True)
    service = FakeSiteverify(os.path.join(work, "tls"))
    secret_file = os.path.join(work, "captcha-secret")
    with open(secret_file, "w") as f:
        f.write(CAPTCHA_SECRET + "\n")
    daemon = Daemon(work_dir(), "turnstile", *LIMITS_OFF, "--challenge", "always", "--captcha", "turnstile",
                    "--captcha-site-key", SITE_KEY, "--captcha-secret-file", secret_file, "--captcha-verify-url", service.url,
                    "--provider-ca-file", service.ca)
    closed = False
    try:
        status, answer, _ = daemon.get("/v1/challenge")
        assert (status, answer) == (200, {"kind": "turnstile", "siteKey": SITE_KEY}), (status, answer)

        email = unique("captcha")
        status, answer, _ = daemon.post("/v1/email-link/send", {"email": email})
        required(status, answer, "turnstile")
        assert answer["error"]["siteKey"] == SITE_KEY, answer
        assert service.requests == [], "no token, no question to the service"

        token = service.token()
        status, answer, _ = daemon.post("/v1/email-link/send", {"email": email, "challengeSolution": token})
        assert (status, answer) == (202, {"status": "sent"}), (status, answer)
        asked = service.requests[-1]
        assert asked["path"] == "/siteverify" and asked["type"].startswith("application/x-www-form-urlencoded"), asked
        assert (asked["secret"], asked["response"], asked["remoteip"]) == (CAPTCHA_SECRET, token, "127.0.0.1"), asked

        rows = outbox_rows(daemon)
        for why, value in (("used", token), ("unknown", "XXXX.DUMMY.TOKEN.forged"), ("blank", "not a token")):
            status, answer, _ = daemon.post("/v1/email-link/send", {"email": email, "challengeSolution": value})
            assert status == 400, (why, status, answer)
            required(status, answer, "turnstile")
        assert outbox_rows(daemon) == rows
        # The service was asked about the used and the unknown token (it said no: Turnstile's
        # timeout-or-duplicate and invalid-input-response); a token that cannot be one never left.
        assert [r["response"] for r in service.requests] == [token, token, "XXXX.DUMMY.TOKEN.forged"], service.requests
        assert refusal_reasons(daemon) == ["captchaRefused", "captchaRefused", "malformed"], refusal_reasons(daemon)
        exactly_one_mail(daemon, email)

        service.close()
        closed = True
        status, answer, _ = daemon.post("/v1/email-link/send", {"email": unique("down"), "challengeSolution": service.token()})
        assert status == 503 and answer["error"]["code"] == "UNAVAILABLE", (status, answer)
        assert outbox_rows(daemon) == rows
    finally:
        if not closed:
            service.close()
        stopped(daemon)
    log = open(daemon.log_path).read()
    assert CAPTCHA_SECRET not in log, "the CAPTCHA secret is in the daemon's log"
