"""The hooks that decide against a real `postern serve` (SQLite in a temp dir, mail as .eml files):
a loopback hook server verifies each call with the `standardwebhooks` PyPI library (the reference
library of standardwebhooks.com) and answers from a script per hook type; PyPI's authlib, as a
relying party, validates the ID token that carries the hook's claims. Run by hooks.sh.
"""
import base64
import json
import os
import secrets
import threading
import time
import http.server

import pytest
import standardwebhooks

from oidc_authlib_test import ADMIN, LIMITS_OFF, WEB_REDIRECT, Browser, Postern, RelyingParty, ask_for_mail, consented, \
    redirected_to, signed_in_by_link  # noqa: E402
from postern_daemon import Daemon, action_link, free_port, six_digits  # noqa: E402

SECRET = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
STRANGER = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
TIMEOUT_MS = 800


def unique(tag):
    return f"{tag}-{secrets.token_hex(4)}@example.com"


class HookServer:
    """The operator's backend: verifies each call, records it, answers what `answers[type]` says
    (a dict to send as JSON, or "hang" to never answer)."""

    def __init__(self):
        self.calls = []
        self.unverified = []
        self.lock = threading.Lock()
        self.answers = {}
        self.release = threading.Event()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                headers = {k.lower(): v for k, v in self.headers.items()}
                try:
                    payload = standardwebhooks.Webhook(SECRET).verify(body, headers)
                    try:
                        standardwebhooks.Webhook(STRANGER).verify(body, headers)
                        raise AssertionError("verified under a secret nobody holds")
                    except standardwebhooks.WebhookVerificationError:
                        pass
                except Exception as error:  # noqa: BLE001 - any refusal is recorded and answered 401
                    with server.lock:
                        server.unverified.append(repr(error))
                    self.send_response(401)
                    self.end_headers()
                    return
                with server.lock:
                    server.calls.append(payload)
                    default = {"claims": {}} if payload["type"] == "token_claims" else {"decision": "allow"}
                    answer = server.answers.get(payload["type"], default)
                if answer == "hang":
                    server.release.wait(60)
                    return
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.port = free_port()
        self.http = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.http.daemon_threads = True
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def types(self):
        with self.lock:
            return [call["type"] for call in self.calls]

    def script(self, **answers):
        with self.lock:
            self.answers = dict(answers)

    def stop(self):
        self.release.set()
        self.http.shutdown()


@pytest.fixture(scope="module")
def hooks():
    server = HookServer()
    yield server
    server.stop()
    assert server.unverified == [], server.unverified


@pytest.fixture(scope="module")
def postern(hooks):
    work = os.environ.get("E2E_WORK") or os.path.join("/tmp", "postern-hooks-" + secrets.token_hex(4))
    os.makedirs(work, exist_ok=True)
    secret_file = os.path.join(work, "hooks.secret")
    with open(secret_file, "w") as f:
        f.write(SECRET + "\n")
    daemon = Daemon(work, "hooks", *LIMITS_OFF, "--admin-token", ADMIN,
                    "--hook-before-sign-up", hooks.url("/up"), "--hook-before-sign-in", hooks.url("/in"),
                    "--hook-token-claims", hooks.url("/claims"), "--hook-secret-file", secret_file,
                    "--hook-timeout", str(TIMEOUT_MS))
    try:
        provider = Postern(daemon)
    except BaseException:
        daemon.stop()
        raise
    yield provider
    assert daemon.stop() == 0, open(daemon.log_path).read()[-4000:]
    log = open(daemon.log_path).read()
    assert SECRET not in log and SECRET[6:] not in log, "the hook secret is in the daemon's log"
    for secret in provider.secrets:
        assert secret not in log, "a client secret, code or token is in the daemon's log"


def claims_of(jwt_text):
    payload = jwt_text.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def sign_in_by_code(daemon, address):
    status, answer, _ = daemon.post("/v1/email-link/send", {"email": address})
    assert status == 202, answer
    code = six_digits(daemon.mailbox.next(address))
    return daemon.post("/v1/email-link/complete", {"email": address, "code": code})


def test_sign_up_then_sign_in_ask_their_hooks_signed_and_the_claims_reach_the_id_token(postern, hooks):
    hooks.script(token_claims={"claims": {"tenant": "acme", "roles": ["editor"]}})
    address = unique("ann")
    before = len(hooks.types())
    status, login, _ = sign_in_by_code(postern.daemon, address)
    assert status == 200, login
    assert login["isNewUser"] is True
    assert hooks.types()[before:] == ["before_sign_up", "token_claims"], hooks.types()
    up = hooks.calls[before]
    assert up["data"] == {"uid": login["uid"], "email": address, "method": "emailLink", "isNewUser": True}, up
    claims = claims_of(login["session"]["idToken"] if "session" in login else login["idToken"])
    assert claims["tenant"] == "acme" and claims["roles"] == ["editor"] and claims["sub"] == login["uid"], claims
    status, again, _ = sign_in_by_code(postern.daemon, address)
    assert status == 200 and again["isNewUser"] is False, again
    assert hooks.types()[-2:] == ["before_sign_in", "token_claims"], hooks.types()


def test_authlib_validates_an_id_token_with_the_hooks_claims_in_it_and_the_access_token_too(postern, hooks):
    hooks.script(token_claims={"claims": {"tenant": "globex", "plan": {"seats": 5}}})
    client_id, secret = postern.register(name="hooks web", redirectUris=[WEB_REDIRECT], firstParty=True,
                                         scopes=["openid", "email", "profile", "offline_access"])
    web = RelyingParty(postern, client_id, secret, WEB_REDIRECT, "client_secret_basic")
    browser = Browser()
    session, url, started = web.start()
    address = unique("rp")
    _, mail = ask_for_mail(postern, browser, url, address)
    callback = redirected_to(signed_in_by_link(postern, browser, mail), WEB_REDIRECT)
    token, claims = web.finish(session, callback, started)
    assert claims["tenant"] == "globex" and claims["plan"] == {"seats": 5}, dict(claims)
    assert claims["aud"] == client_id and claims["email"] == address, dict(claims)
    assert claims_of(token["access_token"])["tenant"] == "globex"
    asked = [call for call in hooks.calls if call["type"] == "token_claims" and call["data"].get("client_id") == client_id]
    assert asked, hooks.calls[-3:]
    # A refresh asks again: the claims may change.
    hooks.script(token_claims={"claims": {"tenant": "initech"}})
    refreshed = web.session().refresh_token(postern.endpoint("token_endpoint"), refresh_token=token["refresh_token"])
    postern.secrets += [refreshed["access_token"], refreshed["id_token"], refreshed["refresh_token"]]
    assert claims_of(refreshed["id_token"])["tenant"] == "initech"


def test_deny_answers_hook_denied_on_the_api_and_the_hosted_page_shows_the_message_escaped(postern, hooks):
    hooks.script(before_sign_up={"decision": "deny", "message": "<b>Invite only</b>: ask <i>ops</i>"})
    address = unique("denied")
    status, answer, _ = sign_in_by_code(postern.daemon, address)
    assert status == 403, answer
    assert answer["error"]["code"] == "HOOK_DENIED" and answer["error"]["message"] == "<b>Invite only</b>: ask <i>ops</i>", answer
    client_id, secret = postern.register(name="hooks page", redirectUris=[WEB_REDIRECT], firstParty=True,
                                         scopes=["openid", "email"])
    web = RelyingParty(postern, client_id, secret, WEB_REDIRECT, "client_secret_basic", scope="openid email")
    browser = Browser()
    _, url, _ = web.start()
    _, mail = ask_for_mail(postern, browser, url, unique("page"))
    page = signed_in_by_link(postern, browser, mail)
    # The sign-in page again, as after a wrong password (400), saying the hook's words as text.
    assert page.status_code == 400 and 'id="retry"' in page.text, (page.status_code, page.text[:1500])
    assert "&lt;b&gt;Invite only&lt;/b&gt;: ask &lt;i&gt;ops&lt;/i&gt;" in page.text, page.text[:3000]
    assert "<b>Invite only" not in page.text


def test_a_hook_that_hangs_fails_closed_within_the_deadline_and_a_reserved_claim_is_refused(postern, hooks):
    hooks.script(before_sign_up="hang")
    address = unique("hang")
    status, answer, _ = postern.daemon.post("/v1/email-link/send", {"email": address})
    assert status == 202, answer
    code = six_digits(postern.daemon.mailbox.next(address))
    started = time.monotonic()
    status, answer, _ = postern.daemon.post("/v1/email-link/complete", {"email": address, "code": code})
    elapsed = time.monotonic() - started
    assert status == 503 and answer["error"]["code"] == "HOOK_FAILED", answer
    # The deadline is the whole call's: the hook would hold it for a minute.
    assert TIMEOUT_MS / 1000 - 0.1 <= elapsed < TIMEOUT_MS / 1000 + 3, elapsed
    # Nothing was consumed: the same code signs in once the hook answers.
    hooks.script(token_claims={"claims": {"sub": "someone-else"}})
    status, answer, _ = postern.daemon.post("/v1/email-link/complete", {"email": address, "code": code})
    assert status == 503 and answer["error"]["code"] == "HOOK_FAILED", answer
    hooks.script()
    status, login, _ = postern.daemon.post("/v1/email-link/complete", {"email": address, "code": code})
    assert status == 200 and login["isNewUser"] is True, login
    metrics = postern.daemon.metrics()
    assert metrics['postern_hook_calls_total{hook="before_sign_up",outcome="failure"}'] == 1, metrics
    assert metrics['postern_hook_calls_total{hook="token_claims",outcome="failure"}'] == 1, metrics
    log = open(postern.daemon.log_path).read()
    assert "hook failed" in log and "reserved claim sub" in log, log[-3000:]
    assert "someone-else" not in log
