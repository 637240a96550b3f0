"""End-to-end: `postern serve` on the embedded defaults (SQLite in a temp dir) with mail over
STARTTLS + AUTH to aiosmtpd (smtp_server.py, with a CA it makes), driven over HTTP, through
`postern handle-link`, and in a real headless Chromium. Run by e2e.sh (which checks that every
step ran); each step asserts what shared/API.md promises.

Environment: POSTERN_BIN (the postern binary), E2E_WORK (a temp dir for the database, the mail,
logs and screenshots; made if absent), CHROMIUM / CHROMEDRIVER (default /usr/bin/…), E2E_DATABASE
(the --database to use instead of a SQLite file there: e2e-postgres.sh gives a PostgreSQL one).
"""
import base64
import email
import email.policy
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import jwt
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
POSTERN = os.environ.get("POSTERN_BIN") or os.path.join(ROOT, ".build", "debug", "postern")
ADMIN_TOKEN = "e2e-admin-" + secrets.token_hex(8)
SMTP_USER, SMTP_PASSWORD = "postern", "e2e:" + secrets.token_hex(6)
APP_CONTINUE = "https://app.example.com/finish"
# The operator's product (--app-name, --support-email): specials on purpose, the page must escape them.
APP_NAME = "Acme & Co <Beta>"
SUPPORT_EMAIL = "help@acme.example"
MAIL_WAIT = 20  # seconds a mail may take to arrive

# Loopback only (no proxy from the environment, for this process — Selenium's client included —
# and what it starts), SIGTERM unwinding like Ctrl-C, and the process helpers: postern_daemon.
from postern_daemon import (HTTP, free_port, http_request, remember_group, six_digits, start_chromium, start_serve,  # noqa: E402
                            stop_chromium, wait_for)

# Every step records itself here; the last test checks that all of them ran.
STEPS_DONE = []


def unique(tag):
    return f"{tag}-{secrets.token_hex(4)}@example.com"


# ---------------------------------------------------------------------------------------------
# Processes: the SMTP server, the daemon, the browser. Each fixture stops what it started.


class Mailbox:
    """Reads what smtp_server.py stored: OUT/<n>-<recipient>.eml, one file per recipient."""

    def __init__(self, directory):
        self.directory = directory
        self.seen = set()

    def _files(self, rcpt):
        try:
            names = os.listdir(self.directory)
        except FileNotFoundError:
            return []
        return sorted(n for n in names if n.endswith(f"-{rcpt}.eml"))

    def next(self, rcpt, subject_hint=None):
        """Waits for the next message to `rcpt` not yet read and returns it parsed."""
        def new():
            fresh = [n for n in self._files(rcpt) if n not in self.seen]
            return fresh[0] if fresh else None

        name = wait_for(new, MAIL_WAIT, f"a mail to {rcpt}")
        self.seen.add(name)
        with open(os.path.join(self.directory, name), "rb") as f:
            raw = f.read()
        msg = email.message_from_bytes(raw, policy=email.policy.default)
        assert msg["To"].addresses[0].addr_spec == rcpt, msg["To"]
        assert msg.get_content_type() == "multipart/alternative", msg.get_content_type()
        return msg

    def none_for(self, rcpt):
        return not [n for n in self._files(rcpt) if n not in self.seen]


def text_of(msg):
    return msg.get_body(("plain",)).get_content()


def action_link(msg, public_url, mode):
    """The one action link of `mode` in the text part."""
    text = text_of(msg)
    links = set(re.findall(re.escape(public_url) + r"/action\?[^\s<>\"]+", text))
    assert len(links) == 1, f"want one action link in the text part, found {links}:\n{text}"
    link = links.pop()
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)
    assert query["mode"] == [mode], (mode, link)
    assert query["oobCode"][0], link
    # The link carries no address and no other personal data.
    assert "@" not in urllib.parse.unquote(link) and "email" not in query, link
    html = msg.get_body(("html",)).get_content()
    assert link.replace("&", "&amp;") in html or link in html, "the HTML part lacks the link"
    return link


def safe_links(link):
    """The link as Microsoft Defender for Office 365 rewrites it."""
    return ("https://nam12.safelinks.protection.outlook.com/?url=" + urllib.parse.quote(link, safe="")
            + "&data=05%7C02%7Cuser%40example.com%7C5c2f0e0a2b1f4a6e9d8c08dc7b3e2a11%7C72f988bf86f141af91ab2d7cd011db47"
              "%7C0%7C0%7C638512345678901234%7CUnknown%7CTWFpbGZsb3d8eyJWIjoiMC4wLjAwMDAifQ%3D%3D%7C0%7C%7C%7C"
            + "&sdata=k3bq0Yy7gS%2FpX0xHn5b9o1l2m3n4o5p6q7r8s9t0u1v%3D&reserved=0")


class SMTPServer:
    def __init__(self, work):
        self.port = free_port()
        self.out = os.path.join(work, "smtp", "out")
        self.tls = os.path.join(work, "smtp", "tls")
        self.log_path = os.path.join(work, "smtp", "server.log")
        os.makedirs(os.path.dirname(self.log_path), exist_ok=True)
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "smtp_server.py"), "--port", str(self.port), "--out", self.out,
             "--tls-dir", self.tls, "--auth", f"{SMTP_USER}:{SMTP_PASSWORD}"],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        remember_group(self.process.pid)
        wait_for(lambda: self.process.poll() is not None or "listening" in open(self.log_path).read(), 30,
                 "the SMTP server")
        assert self.process.poll() is None, open(self.log_path).read()
        self.ca = os.path.join(self.tls, "ca.pem")
        self.mailbox = Mailbox(self.out)

    def stop(self):
        stop_process(self.process)
        self.log.close()


def stop_process(process, timeout=10):
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


class Postern:
    def __init__(self, work, smtp):
        self.work = work
        self.port = free_port()
        self.public_url = f"http://127.0.0.1:{self.port}"
        self.database = os.environ.get("E2E_DATABASE") or os.path.join(work, "postern.db")
        password_file = os.path.join(work, "smtp-password")
        with open(password_file, "w") as f:
            f.write(SMTP_PASSWORD + "\n")
        os.chmod(password_file, 0o600)
        # The settings handle-link needs to read the same store and accept the same links.
        self.shared = ["--database", self.database, "--public-url", self.public_url,
                       "--allowed-continue-hosts", "app.example.com,127.0.0.1"]
        self.serve_args = [
            POSTERN, "serve", *self.shared, "--listen", f"127.0.0.1:{self.port}",
            "--smtp-url", f"smtp://{SMTP_USER}@127.0.0.1:{smtp.port}", "--smtp-password-file", password_file,
            "--smtp-ca-file", smtp.ca, "--mail-from", "Postern <no-reply@example.com>",
            "--app-name", APP_NAME, "--support-email", SUPPORT_EMAIL,
            "--admin-token", ADMIN_TOKEN, "--mail-interval", "0", "--mail-per-hour", "0", "--mail-domain-per-hour", "0", "--mail-per-hour-total", "0", "--challenge", "off", "--ip-per-minute", "0",
            # No metrics listener: parallel runs must not race for its default port.
            "--metrics-listen", "off",
        ]
        self.log_path = os.path.join(work, "serve.log")
        # cwd is the temp dir, so nothing else (mail-out/, a default database) lands in the repo.
        self.process, self.log = start_serve(self.serve_args, work, self.log_path, self.public_url)

    def request(self, method, path, body=None, token=None, headers=None):
        return http_request(self.public_url, method, path, body=body, token=token, headers=headers)

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, {} if body is None else body, **kw)

    def cli(self, *args, stdin=None):
        """Runs `postern ARGS… --database … --public-url …` against the daemon's store."""
        p = subprocess.run([POSTERN, *args, *self.shared], cwd=self.work, input=stdin, capture_output=True,
                           text=True, timeout=60)
        return p.returncode, p.stdout, p.stderr

    def stop(self):
        code = stop_process(self.process, timeout=20)
        self.log.close()
        return code


@pytest.fixture(scope="module")
def work():
    given = os.environ.get("E2E_WORK")
    path = given or tempfile.mkdtemp(prefix="postern-e2e-")
    os.makedirs(path, exist_ok=True)
    print(f"\nwork dir: {path}")
    yield path
    if not given and os.environ.get("E2E_KEEP") != "1":
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def smtp(work):
    server = SMTPServer(work)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def postern(work, smtp):
    daemon = Postern(work, smtp)
    yield daemon
    code = daemon.stop()
    log = open(daemon.log_path).read()
    # Graceful stop on SIGTERM; logs are JSON lines and never hold a code, token or password.
    assert code == 0, f"postern serve exited {code} on SIGTERM:\n{log[-4000:]}"
    for line in log.splitlines():
        json.loads(line)
    assert SMTP_PASSWORD not in log and ADMIN_TOKEN not in log, "a secret reached the log"
    assert "oobCode=" not in log, "a link reached the log"


@pytest.fixture(scope="module")
def browser(work):
    driver, group = start_chromium(work)
    yield driver
    stop_chromium(driver, group)


# ---------------------------------------------------------------------------------------------
# Helpers for assertions shared by the steps.


def check_session(session, *, anonymous, email_address=None):
    assert set(session) >= {"uid", "idToken", "refreshToken", "expiresIn", "isAnonymous", "email"}, session
    assert session["isAnonymous"] is anonymous, session
    assert session["email"] == email_address, session
    assert isinstance(session["expiresIn"], int) and session["expiresIn"] > 0, session


def check_login(login, *, uid=None, email_address, new_user, migration=None):
    assert set(login) >= {"uid", "email", "isNewUser", "session", "migration"}, login
    if uid is not None:
        assert login["uid"] == uid, (login["uid"], uid)
    assert login["email"] == email_address, login
    assert login["isNewUser"] is new_user, login
    assert login["migration"] == migration, login
    check_session(login["session"], anonymous=False, email_address=email_address)
    assert login["session"]["uid"] == login["uid"], login


def check_error(answer, status, code, expected_status):
    assert status == expected_status, (status, answer)
    assert isinstance(answer, dict) and answer["error"]["code"] == code, answer
    assert isinstance(answer["error"]["message"], str) and answer["error"]["message"], answer


def verify_id_token(postern, token, uid, **claims):
    """Checks the ES256 signature against /.well-known/jwks.json and the claims API.md lists."""
    status, jwks, _ = postern.get("/.well-known/jwks.json")
    assert status == 200 and jwks["keys"], jwks
    header = jwt.get_unverified_header(token)
    assert header["alg"] == "ES256", header
    keys = {k.key_id: k for k in jwt.PyJWKSet.from_dict(jwks).keys}
    assert header["kid"] in keys, (header, list(keys))
    decoded = jwt.decode(token, keys[header["kid"]].key, algorithms=["ES256"], audience=postern.public_url,
                         issuer=postern.public_url, options={"require": ["sub", "iat", "exp"]})
    assert decoded["sub"] == uid, decoded
    for name in ("iat", "exp", "auth_time", "email", "email_verified", "is_anonymous", "sign_in_method"):
        assert name in decoded, (name, decoded)
    assert decoded["iat"] <= time.time() + 5 < decoded["exp"], decoded
    for name, value in claims.items():
        assert decoded[name] == value, (name, decoded)
    # A token signed by someone else does not verify.
    head, payload, signature = token.split(".")
    middle = len(signature) // 2
    forged = ".".join([head, payload, signature[:middle] + ("A" if signature[middle] != "A" else "B") + signature[middle + 1:]])
    with pytest.raises(jwt.InvalidTokenError):
        jwt.decode(forged, keys[header["kid"]].key, algorithms=["ES256"], audience=postern.public_url)
    return decoded


def send_link(postern, address, id_token=None, continue_url=None):
    body = {"email": address}
    if id_token:
        body["idToken"] = id_token
    if continue_url:
        body["continueUrl"] = continue_url
    status, answer, _ = postern.post("/v1/email-link/send", body)
    assert (status, answer) == (202, {"status": "sent"}), (status, answer)


def sign_in_by_link(postern, smtp, address):
    """A plain email-link sign-in (no session presented): the LoginDescriptor."""
    send_link(postern, address)
    link = action_link(smtp.mailbox.next(address), postern.public_url, "signIn")
    status, login, _ = postern.post("/v1/email-link/complete", {"link": link})
    assert status == 200, login
    return login


def sign_up(postern, smtp, address, password):
    """Verify-first password sign-up completed through the mailed link on the device that signed
    up (the PKCE verifier, so the password applies): the LoginDescriptor."""
    verifier = secrets.token_urlsafe(32)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    status, answer, _ = postern.post("/v1/password/sign-up",
                                     {"email": address, "password": password, "codeChallenge": challenge})
    assert (status, answer) == (202, {"status": "verification_sent"}), (status, answer)
    msg = smtp.mailbox.next(address)
    link = action_link(msg, postern.public_url, "signIn")
    status, login, _ = postern.post("/v1/email-link/complete", {"link": link, "codeVerifier": verifier})
    assert status == 200 and login["needsPassword"] is False, login
    return login, msg


def password_sign_in(postern, address, password):
    return postern.post("/v1/password/sign-in", {"email": address, "password": password})[:2]


def check_page_headers(headers):
    assert headers.get("Referrer-Policy") == "no-referrer", dict(headers)
    assert headers.get("X-Frame-Options") == "DENY", dict(headers)
    caching = headers.get_all("Cache-Control") or []
    assert len(caching) == 1 and "no-store" in caching[0], caching
    csp = headers.get("Content-Security-Policy") or ""
    directives = {}
    for part in csp.split(";"):
        words = part.split()
        if words:
            directives[words[0].lower()] = words[1:]
    assert directives, f"no CSP: {dict(headers)}"
    scripts = directives.get("script-src", directives.get("default-src"))
    assert scripts is not None, f"the CSP does not restrict scripts: {csp}"
    assert "'unsafe-inline'" not in scripts and "'unsafe-eval'" not in scripts and "*" not in scripts, csp


def check_branding(browser):
    """The page Chromium shows names the operator's product (title, above the heading, footer)
    and the support address, the specials of the name shown as text, not parsed as markup."""
    from selenium.webdriver.common.by import By

    assert browser.title.startswith(APP_NAME + " – "), browser.title
    assert browser.find_element(By.ID, "product").text == APP_NAME
    footer = browser.find_element(By.ID, "footer")
    assert APP_NAME in footer.text and SUPPORT_EMAIL in footer.text, footer.text
    assert footer.find_element(By.TAG_NAME, "a").get_attribute("href") == "mailto:" + SUPPORT_EMAIL
    assert not browser.find_elements(By.TAG_NAME, "beta"), "the app name was parsed as markup"


# ---------------------------------------------------------------------------------------------
# The steps.


def test_1_anonymous_then_email_link_through_safe_links(postern, smtp):
    status, anon, _ = postern.post("/v1/accounts/anonymous", {})
    assert status == 200, anon
    check_session(anon, anonymous=True)
    verify_id_token(postern, anon["idToken"], anon["uid"], is_anonymous=True)

    address = unique("alice")
    send_link(postern, address, id_token=anon["idToken"], continue_url=APP_CONTINUE)
    msg = smtp.mailbox.next(address)
    assert msg["From"].addresses[0].addr_spec == "no-reply@example.com", msg["From"]
    assert msg["Subject"] and msg["Message-ID"] and msg["Date"], dict(msg)
    link = action_link(msg, postern.public_url, "signIn")
    assert urllib.parse.parse_qs(urllib.parse.urlsplit(link).query).get("continueUrl") == [APP_CONTINUE], link
    assert re.search(r"(?<!\d)\d{6}(?!\d)", text_of(msg)), "the mail has no 6-digit code"
    wrapped = safe_links(link)

    # handle-link --inspect reads the wrapped link and consumes nothing.
    code, out, err = postern.cli("handle-link", wrapped, "--inspect", "--json")
    assert code == 0, (code, out, err)
    info = json.loads(out)
    assert info["mode"] == "signIn" and info["email"] == address and info["valid"] is True, info
    assert info["continueUrl"] == APP_CONTINUE, info
    status, inspected, _ = postern.post("/v1/actions/inspect", {"link": wrapped})
    assert status == 200 and inspected["mode"] == "signIn" and inspected["email"] == address, inspected

    status, login, _ = postern.post("/v1/email-link/complete", {"link": wrapped, "idToken": anon["idToken"]})
    assert status == 200, login
    # The anonymous account gets the address: same uid, a new user, no migration.
    check_login(login, uid=anon["uid"], email_address=address, new_user=True, migration=None)
    verify_id_token(postern, login["session"]["idToken"], anon["uid"], email=address, email_verified=True,
                    is_anonymous=False)
    status, me, _ = postern.get("/v1/me", token=login["session"]["idToken"])
    assert status == 200 and me["uid"] == anon["uid"] and me["email"] == address and me["isAnonymous"] is False, me
    assert me["emailVerified"] is True, me
    STEPS_DONE.append("1")


def test_2_second_device_migration_replay_and_cli(postern, smtp):
    address = unique("bob")
    first = sign_in_by_link(postern, smtp, address)
    check_login(first, email_address=address, new_user=True)
    uid = first["uid"]

    # A second device starts anonymous and signs in with the same address.
    status, anon, _ = postern.post("/v1/accounts/anonymous", {})
    assert status == 200, anon
    assert anon["uid"] != uid
    send_link(postern, address, id_token=anon["idToken"])
    link = action_link(smtp.mailbox.next(address), postern.public_url, "signIn")

    status, answer, _ = postern.post("/v1/email-link/complete", {"link": link, "idToken": anon["idToken"]})
    check_error(answer, status, "MIGRATION_REQUIRED", 409)
    assert answer["error"].get("anonymousUid") == anon["uid"], answer

    status, login, _ = postern.post("/v1/email-link/complete",
                                    {"link": link, "idToken": anon["idToken"], "allowMigration": True})
    assert status == 200, login
    check_login(login, uid=uid, email_address=address, new_user=False,
                migration={"fromUid": anon["uid"], "toUid": uid, "allowMigration": True})
    verify_id_token(postern, login["session"]["idToken"], uid, email=address, is_anonymous=False)

    # The anonymous account is gone: its refresh token no longer works.
    status, answer, _ = postern.post("/v1/token", {"refreshToken": anon["refreshToken"]})
    assert status in (400, 401) and "error" in answer, (status, answer)

    # The link was used: replaying it is refused.
    status, answer, _ = postern.post("/v1/email-link/complete", {"link": link})
    check_error(answer, status, "LINK_USED", 400)
    status, answer, _ = postern.post("/v1/email-link/complete",
                                     {"link": link, "idToken": anon["idToken"], "allowMigration": True})
    assert status in (400, 401) and "error" in answer, (status, answer)

    # The CLI completes a sign-in from the whole pasted mail text.
    send_link(postern, address)
    text = text_of(smtp.mailbox.next(address))
    code, out, err = postern.cli("handle-link", text, "--json")
    assert code == 0, (code, out, err)
    login = json.loads(out)
    check_login(login, uid=uid, email_address=address, new_user=False, migration=None)
    verify_id_token(postern, login["session"]["idToken"], uid, email=address)
    # …and the link it used is spent, which the CLI says with exit code 65.
    code, out, err = postern.cli("handle-link", text, "--inspect")
    assert code == 65, (code, out, err)
    STEPS_DONE.append("2")


def test_3_password_sign_up_confirm_sign_in(postern, smtp):
    address, password = unique("carol"), "correct horse battery " + secrets.token_hex(3)
    status, answer = password_sign_in(postern, address, password)
    check_error(answer, status, "INVALID_LOGIN_CREDENTIALS", 400)
    status, answer, _ = postern.post("/v1/password/sign-up", {"email": address, "password": "short"})
    check_error(answer, status, "WEAK_PASSWORD", 400)

    login, msg = sign_up(postern, smtp, address, password)
    check_login(login, email_address=address, new_user=True)
    uid = login["uid"]
    # Before completion there was no account; after it the password works.
    status, again = password_sign_in(postern, address, password)
    assert status == 200, again
    check_login(again, uid=uid, email_address=address, new_user=False)
    decoded = verify_id_token(postern, again["session"]["idToken"], uid, email=address, email_verified=True)
    assert "password" in decoded["sign_in_method"].lower(), decoded
    status, answer = password_sign_in(postern, address, password + "x")
    check_error(answer, status, "INVALID_LOGIN_CREDENTIALS", 400)
    status, me, _ = postern.get("/v1/me", token=again["session"]["idToken"])
    assert status == 200 and "password" in me["providers"], me

    # Signing up again with the address answers the same; the mail (an "you already have an
    # account" one) signs in to the existing account and sets no new password.
    status, answer, _ = postern.post("/v1/password/sign-up", {"email": address, "password": password + "2"})
    assert (status, answer) == (202, {"status": "verification_sent"}), (status, answer)
    already = action_link(smtp.mailbox.next(address), postern.public_url, "signIn")
    status, login3, _ = postern.post("/v1/email-link/complete", {"link": already})
    assert status == 200, login3
    check_login(login3, uid=uid, email_address=address, new_user=False)
    status, answer = password_sign_in(postern, address, password + "2")
    check_error(answer, status, "INVALID_LOGIN_CREDENTIALS", 400)
    status, answer = password_sign_in(postern, address, password)
    assert status == 200, answer
    STEPS_DONE.append("3")


def test_4_reset_in_chromium_after_a_mail_scanner(postern, smtp, browser, work):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    address, old_password = unique("dave"), "old password " + secrets.token_hex(4)
    new_password = "new password " + secrets.token_hex(4)
    login, _ = sign_up(postern, smtp, address, old_password)
    uid, old_refresh = login["uid"], login["session"]["refreshToken"]

    status, answer, _ = postern.post("/v1/password/reset", {"email": address})
    assert (status, answer) == (202, {"status": "sent"}), (status, answer)
    reset_mail = smtp.mailbox.next(address)
    link = action_link(reset_mail, postern.public_url, "resetPassword")

    # A mail scanner: one HEAD and two GETs, without cookies; none of them may burn the link.
    status, body, headers = postern.request("HEAD", link[len(postern.public_url):])
    assert status == 200 and not body, status
    check_page_headers(headers)
    for _ in range(2):
        status, body, headers = postern.get(link[len(postern.public_url):], headers={"User-Agent": "MailScanner/1.0"})
        assert status == 200, (status, body[:500])
        check_page_headers(headers)
        page = body.decode()
        assert 'name="newPassword"' in page and "<form" in page, page
        assert "<script" not in page.lower(), "inline script on the page"
    # The form's POST without the browser's cookie is refused (CSRF) and burns nothing.
    oob = urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)["oobCode"][0]
    token = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    form = urllib.parse.urlencode({"mode": "resetPassword", "oobCode": oob, "csrf": token, "lang": "en",
                                   "newPassword": "attacker password 123"}).encode()
    req = urllib.request.Request(postern.public_url + "/action", data=form, method="POST",
                                 headers={"Content-Type": "application/x-www-form-urlencoded"})
    try:
        HTTP.open(req, timeout=30)
        raise AssertionError("a form POST without the CSRF cookie was accepted")
    except urllib.error.HTTPError as e:
        assert e.code == 403, e.code
        check_page_headers(e.headers)
    status, inspected, _ = postern.post("/v1/actions/inspect", {"link": link})
    assert status == 200 and inspected["mode"] == "resetPassword" and inspected["email"] == address, inspected

    # The reset mail names the product: as given in the text part and the subject, escaped in HTML.
    assert APP_NAME in text_of(reset_mail) and APP_NAME in reset_mail["Subject"], reset_mail["Subject"]
    assert "Acme &amp; Co &lt;Beta&gt;" in reset_mail.get_body(("html",)).get_content()
    assert SUPPORT_EMAIL in text_of(reset_mail)

    # The person opens the link in Chromium, types the new password and submits.
    browser.get(link)
    field = WebDriverWait(browser, 15).until(EC.presence_of_element_located((By.ID, "newPassword")))
    heading = browser.find_element(By.TAG_NAME, "h1").text
    assert heading.strip(), "the page has no heading"
    check_branding(browser)
    # The style sheet loaded (CSP allows 'self' styles): the button is styled, not the default grey.
    button = browser.find_element(By.ID, "submit")
    assert button.value_of_css_property("background-color") not in ("rgba(239, 239, 239, 1)", "rgba(0, 0, 0, 0)"), \
        button.value_of_css_property("background-color")
    form_png = os.path.join(work, "reset-form.png")
    browser.save_screenshot(form_png)
    field.send_keys(new_password)
    button.click()
    done = WebDriverWait(browser, 15).until(EC.presence_of_element_located((By.ID, "done")))
    done_text = done.text
    assert done_text.strip(), "no done text"
    assert "password" in done_text.lower(), done_text
    done_png = os.path.join(work, "reset-done.png")
    browser.save_screenshot(done_png)
    print(f"\nscreenshots (E2E_KEEP=1 keeps them): {form_png} {done_png}\ndone text: {done_text!r}")

    status, login2 = password_sign_in(postern, address, new_password)
    assert status == 200, login2
    check_login(login2, uid=uid, email_address=address, new_user=False)
    status, answer = password_sign_in(postern, address, old_password)
    check_error(answer, status, "INVALID_LOGIN_CREDENTIALS", 400)
    # A reset revokes every refresh token, and the account gets a "password changed" notice.
    status, answer, _ = postern.post("/v1/token", {"refreshToken": old_refresh})
    check_error(answer, status, "TOKEN_REVOKED", 401)
    notice = smtp.mailbox.next(address)
    assert "/action?" not in text_of(notice), text_of(notice)
    # The link is spent now: the page says so (used, not just invalid) and the API refuses it.
    browser.get(link)
    spent = WebDriverWait(browser, 15).until(EC.presence_of_element_located((By.ID, "error")))
    assert spent.text == "This link was already used. If you need to sign in again, ask for a new link.", spent.text
    status, answer, _ = postern.post("/v1/actions/apply", {"link": link, "newPassword": "another one 12345"})
    check_error(answer, status, "LINK_USED", 400)
    STEPS_DONE.append("4")


def test_5_change_of_address_then_recovery(postern, smtp, browser, work):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    old, new = unique("erin"), unique("erin-new")
    login = sign_in_by_link(postern, smtp, old)
    uid, old_refresh = login["uid"], login["session"]["refreshToken"]
    token = login["session"]["idToken"]

    status, answer, _ = postern.post("/v1/me/email", {"newEmail": new}, token=token)
    assert status == 202, (status, answer)
    change_link = action_link(smtp.mailbox.next(new), postern.public_url, "verifyAndChangeEmail")
    # Nothing changes until the new address's holder confirms.
    status, me, _ = postern.get("/v1/me", token=token)
    assert status == 200 and me["email"] == old, me

    # Confirmed on the hosted page in Chromium: the person types the number the page shows (a
    # scanner that submits the form as it finds it changes nothing; scanners_test.py).
    browser.get(change_link)
    WebDriverWait(browser, 15).until(EC.presence_of_element_located((By.ID, "submit")))
    assert new in browser.find_element(By.TAG_NAME, "main").text, browser.page_source
    # Empty, the form does not go (the field is required): Chromium keeps the page.
    browser.find_element(By.ID, "submit").click()
    assert browser.find_elements(By.ID, "confirm-number"), "the form went without the number"
    number = browser.find_element(By.ID, "confirm-number").text
    assert re.fullmatch(r"\d{3}", number), number
    browser.find_element(By.ID, "confirm").send_keys(number)
    browser.save_screenshot(os.path.join(work, "change-confirm.png"))
    browser.find_element(By.ID, "submit").click()
    WebDriverWait(browser, 15).until(EC.presence_of_element_located((By.ID, "done")))
    browser.save_screenshot(os.path.join(work, "change-done.png"))

    # The address moved, and every session of the account ended: the ID token said the old
    # address, which someone else may now sign up with.
    status, user, _ = postern.get("/v1/admin/users?" + urllib.parse.urlencode({"email": new}), token=ADMIN_TOKEN)
    assert status == 200 and user["uid"] == uid and user["email"] == new and user["emailVerified"] is True, (status, user)
    status, answer, _ = postern.get("/v1/me", token=token)
    check_error(answer, status, "INVALID_ID_TOKEN", 401)
    status, answer, _ = postern.post("/v1/token", {"refreshToken": old_refresh})
    check_error(answer, status, "TOKEN_REVOKED", 401)

    # The old address is told, with a link that undoes the change.
    recover_link = action_link(smtp.mailbox.next(old), postern.public_url, "recoverEmail")
    status, inspected, _ = postern.post("/v1/actions/inspect", {"link": recover_link})
    assert status == 200 and inspected["mode"] == "recoverEmail" and inspected["email"] == old, inspected
    status, applied, _ = postern.post("/v1/actions/apply", {"link": recover_link})
    assert (status, applied) == (200, {"mode": "recoverEmail", "email": old}), (status, applied)

    # The old address is back on the same account, and every session of it is signed out.
    status, user, _ = postern.get("/v1/admin/users?" + urllib.parse.urlencode({"email": old}), token=ADMIN_TOKEN)
    assert status == 200 and user["uid"] == uid and user["email"] == old, (status, user)
    status, answer, _ = postern.get("/v1/admin/users?" + urllib.parse.urlencode({"email": new}), token=ADMIN_TOKEN)
    assert status == 404, (status, answer)
    status, answer, _ = postern.post("/v1/token", {"refreshToken": old_refresh})
    check_error(answer, status, "TOKEN_REVOKED", 401)
    # The recovery link is spent; the owner signs in again with the old address.
    status, answer, _ = postern.post("/v1/actions/apply", {"link": recover_link})
    check_error(answer, status, "LINK_USED", 400)
    again = sign_in_by_link(postern, smtp, old)
    check_login(again, uid=uid, email_address=old, new_user=False)
    STEPS_DONE.append("5")


def test_6_the_german_page_and_the_sign_in_page_in_chromium(postern, smtp, browser, work):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    # A reset link opened with lang=de: the page, its refusal of a weak password and its done
    # page are German, the refusal included (not the API's English message).
    address = unique("frieda")
    sign_up(postern, smtp, address, "altes Passwort " + secrets.token_hex(4))
    status, answer, _ = postern.post("/v1/password/reset", {"email": address, "locale": "de"})
    assert (status, answer) == (202, {"status": "sent"}), (status, answer)
    link = action_link(smtp.mailbox.next(address), postern.public_url, "resetPassword")
    if "lang=de" not in link:
        link += "&lang=de"
    browser.get(link)
    field = WebDriverWait(browser, 15).until(EC.presence_of_element_located((By.ID, "newPassword")))
    assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == "de"
    assert browser.find_element(By.TAG_NAME, "h1").text == "Neues Passwort wählen"
    assert browser.find_element(By.ID, "submit").text == "Neues Passwort speichern"
    check_branding(browser)
    assert "Fragen? Schreiben Sie an" in browser.find_element(By.ID, "footer").text
    # The address itself as the password: long enough for the field, refused by the policy.
    field.send_keys(address)
    browser.find_element(By.ID, "submit").click()
    error = WebDriverWait(browser, 15).until(EC.presence_of_element_located((By.ID, "error")))
    assert error.text == ("Dieses Passwort geht nicht: es darf nicht Ihre E-Mail-Adresse oder deren Teil vor dem @ "
                          "sein."), error.text
    assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == "de"
    assert browser.find_element(By.TAG_NAME, "h1").text == "Dieser Link kann nicht verwendet werden"
    assert "password" not in browser.find_element(By.TAG_NAME, "main").text.lower(), "English on the German page"
    browser.save_screenshot(os.path.join(work, "german-error.png"))
    # The refusal burnt nothing: the same link takes a good password, and says so in German.
    browser.get(link)
    WebDriverWait(browser, 15).until(EC.presence_of_element_located((By.ID, "newPassword"))).send_keys(
        "neues Passwort " + secrets.token_hex(4))
    browser.find_element(By.ID, "submit").click()
    done = WebDriverWait(browser, 15).until(EC.presence_of_element_located((By.ID, "done")))
    assert done.text.startswith("Ihr Passwort wurde geändert."), done.text
    assert smtp.mailbox.next(address)["Subject"], "the password-changed notice"

    # A sign-in link opened in the browser: a continue button that hands the code to the app,
    # and the 6-digit code for another device; looking consumes nothing.
    address = unique("gustav")
    send_link(postern, address, continue_url=APP_CONTINUE)
    msg = smtp.mailbox.next(address)
    link = action_link(msg, postern.public_url, "signIn")
    browser.get(link)
    code = WebDriverWait(browser, 15).until(EC.presence_of_element_located((By.ID, "code")))
    assert code.text == six_digits(msg), (code.text, text_of(msg))
    check_branding(browser)
    button = browser.find_element(By.ID, "continue")
    target = urllib.parse.urlsplit(button.get_attribute("href"))
    query = urllib.parse.parse_qs(target.query)
    oob = urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)["oobCode"]
    assert (target.scheme, target.netloc, target.path) == ("https", "app.example.com", "/finish"), target
    assert query["mode"] == ["signIn"] and query["oobCode"] == oob, query
    browser.save_screenshot(os.path.join(work, "sign-in-page.png"))
    status, login, _ = postern.post("/v1/email-link/complete", {"link": link})
    assert status == 200, login
    check_login(login, email_address=address, new_user=True)
    STEPS_DONE.append("6")


def test_7_approve_on_the_other_device_in_chromium(postern, smtp, browser, work):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    # The asking app: a PKCE verifier as its secret, a request with approval, a number to show.
    address = unique("hedy")
    verifier = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    status, sent, _ = postern.post("/v1/email-link/send", {
        "email": address, "codeChallenge": challenge, "approval": True, "deviceName": "Hedy's tablet"})
    assert status == 202 and sent["status"] == "sent" and 10 <= sent["approvalNumber"] <= 99, sent
    number = sent["approvalNumber"]
    wait = {"email": address, "codeVerifier": verifier}
    status, pending, _ = postern.post("/v1/email-link/wait", dict(wait, waitSeconds=0))
    assert status == 202 and pending["status"] == "pending" and pending.get("approvalNumber") is None, pending

    # The link opened in Chromium on the other device: GET shows a button, and nothing more.
    link = action_link(smtp.mailbox.next(address), postern.public_url, "signIn")
    browser.get(link)
    review = WebDriverWait(browser, 15).until(EC.presence_of_element_located((By.ID, "review")))
    assert "Hedy" not in browser.page_source and not browser.find_elements(By.ID, "pick")
    status, pending, _ = postern.post("/v1/email-link/wait", dict(wait, waitSeconds=0))
    assert status == 202, "the GET approved something"

    # The app long-polls while the person looks.
    answers = []
    waiter = threading.Thread(target=lambda: answers.append(postern.post("/v1/email-link/wait", dict(wait, waitSeconds=25))))
    waiter.start()
    review.click()
    device = WebDriverWait(browser, 15).until(EC.presence_of_element_located((By.ID, "device")))
    assert device.text == "Hedy's tablet"
    # The page asks for the number the app shows; it offers none to tap (three to pick from let
    # an owner who tapped without looking approve a stranger one time in three).
    field = browser.find_element(By.ID, "pick")
    assert not browser.find_elements(By.CSS_SELECTOR, "[id^='pick-']"), "numbers offered to tap"
    assert str(number) not in [e.get_attribute("value") for e in browser.find_elements(By.TAG_NAME, "input")]
    browser.save_screenshot(os.path.join(work, "approve-page.png"))
    # Empty, the form does not go (the field is required): Chromium keeps the page.
    browser.find_element(By.ID, "approve").click()
    assert browser.find_element(By.ID, "device").text == "Hedy's tablet"
    field.send_keys(str(number))
    browser.find_element(By.ID, "approve").click()
    WebDriverWait(browser, 15).until(EC.presence_of_element_located((By.ID, "approval")))
    assert "eyJ" not in browser.page_source, "a token reached the browser"
    waiter.join(30)
    assert answers, "the wait did not end"
    status, login, _ = answers[0]
    assert status == 200, login
    check_login(login, email_address=address, new_user=True)
    notice = smtp.mailbox.next(address)
    assert "Hedy's tablet" in text_of(notice), text_of(notice)
    STEPS_DONE.append("7")


def test_8_every_step_ran_and_every_mail_went_over_tls(postern, smtp):
    assert STEPS_DONE == ["1", "2", "3", "4", "5", "6", "7"], STEPS_DONE
    # Every message went over STARTTLS with AUTH, and the outbox holds each as sent, once.
    def outbox():
        status, answer, _ = postern.get("/v1/admin/outbox", token=ADMIN_TOKEN)
        assert status == 200, answer
        return answer["messages"]

    # (The server has the last message a moment before the daemon records the 250.)
    try:
        messages = wait_for(lambda: (lambda ms: ms if ms and all(m["state"] == "sent" for m in ms) else None)(outbox()),
                            30, "every outbox message to be sent")
    except AssertionError:
        raise AssertionError(f"not all sent: {[(m['kind'], m['state'], m['lastReply']) for m in outbox()]}")
    # Read once all are sent: before, a mail still in flight was missing from the server's log.
    accepted = [line for line in open(smtp.log_path).read().splitlines() if line.startswith("accepted ")]
    assert accepted and all(line.endswith("tls=True auth=True") for line in accepted), accepted
    assert len(messages) == len(accepted) == len(os.listdir(smtp.out)), (len(messages), len(accepted))
    assert all("body" not in m for m in messages)
    print(f"\n{len(messages)} mails delivered over STARTTLS + AUTH")
