"""Mail scanners against every kind of hosted page, over HTTP against a real `postern serve`
(SQLite in a temp dir, mail as .eml files). The scanner (mail_scanner.py) keeps cookies, GETs the
link, follows every link, submits every form as it finds it and presses every button. Against it
nothing changes and nothing is spent: no address is verified, changed or restored, no session
ends, no approval is given or taken back, no link or 6-digit code dies. Then a person, in a
browser of their own, finishes with one deliberate step (types the number the page shows, or
the approving device's number, and presses the button). Run by scanners.sh.

Before the confirm pages asked for a typed number, the scanner verified addresses, moved
accounts to a new address and undid address changes (ending every session) on its own; before
"I did not ask for this" changed nothing, it ended approvals and the mail's 6-digit code with them.
"""
import base64
import hashlib
import os
import re
import secrets
import urllib.parse

import pytest

from mail_scanner import MailScanner, PageParser
from postern_daemon import Daemon, action_link, check_error, six_digits

ADMIN = "scanners-admin-" + secrets.token_hex(8)
LIMITS_OFF = ("--mail-interval", "0", "--mail-per-hour", "0", "--mail-domain-per-hour", "0", "--mail-per-hour-total", "0", "--challenge", "off", "--ip-per-minute", "0")


def unique(tag):
    return f"{tag}-{secrets.token_hex(4)}@example.com"


@pytest.fixture(scope="module")
def postern():
    work = os.environ.get("E2E_WORK") or os.path.join("/tmp", "postern-scanners-" + secrets.token_hex(4))
    os.makedirs(work, exist_ok=True)
    daemon = Daemon(work, "scanners", *LIMITS_OFF, "--admin-token", ADMIN)
    yield daemon
    assert daemon.stop() == 0, open(daemon.log_path).read()[-4000:]


def scan(link):
    """Runs a fresh scanner over `link`; checks it found no script to run, and returns it."""
    scanner = MailScanner()
    scanner.scan(link)
    assert scanner.visits and scanner.visits[0].status in (200, 400), scanner.visits
    assert scanner.scripts == 0, "a page carries script a scanner would run"
    assert scanner.policies and all("default-src 'none'" in p and "script-src" not in p for p in scanner.policies), \
        scanner.policies
    return scanner


class Person:
    """Someone at a browser: opens the link, reads the page, types what it asks and presses."""

    def __init__(self):
        self.scanner = MailScanner(depth=0)  # only its cookie jar and fetch are used

    def open(self, link):
        self.page_url = link
        self.page = self.scanner._fetch("GET", link, None)
        return self.page

    def shown_number(self):
        found = re.findall(r'id="confirm-number">(\d{3})<', self.page)
        assert len(found) == 1, self.page
        return found[0]

    def press(self, button_id, typed=None):
        """Submits the form holding the button `button_id`, with `typed` written into its fields."""
        start = self.page.index(f'id="{button_id}"')
        form_start = self.page.rindex("<form", 0, start)
        parser = PageParser()
        parser.feed(self.page[form_start:self.page.index("</form>", start) + 7])
        form = parser.forms[0]
        fields = [(n, (typed or {}).get(n, v)) for n, v in form["fields"]]
        button = re.search(r'<button[^>]*id="%s"[^>]*>' % re.escape(button_id), self.page).group(0)
        name, value = re.search(r'name="([^"]*)"', button), re.search(r'value="([^"]*)"', button)
        if name:
            fields.append((name.group(1), value.group(1) if value else ""))
        target = urllib.parse.urljoin(self.page_url, form["action"])
        self.page = self.scanner._fetch("POST", target, fields)
        return self.scanner.visits[-1].status, self.page


def sign_in(postern, address):
    status, answer, _ = postern.post("/v1/email-link/send", {"email": address})
    assert status == 202, answer
    link = action_link(postern.mailbox.next(address), postern.public_url, "signIn")
    status, login, _ = postern.post("/v1/email-link/complete", {"link": link})
    assert status == 200, login
    return login


def user(postern, address):
    status, found, _ = postern.get("/v1/admin/users?" + urllib.parse.urlencode({"email": address}), token=ADMIN)
    return found if status == 200 else None


def session_alive(postern, login):
    return postern.get("/v1/me", token=login["session"]["idToken"])[0] == 200


def confirmed_by_a_person(link):
    """A person opens `link`, types the number the page shows and presses the button."""
    person = Person()
    person.open(link)
    status, page = person.press("submit", {"confirm": person.shown_number()})
    assert status == 200 and 'id="done"' in page, page


def verify_link(postern, address):
    """A signed-in account at `address`, made unverified by the operator, asks for a
    verification: the link of the mail."""
    login = sign_in(postern, address)
    status, _, _ = postern.request("PATCH", f"/v1/admin/users/{login['uid']}", {"emailVerified": False}, token=ADMIN)
    assert status == 200
    status, answer, _ = postern.post("/v1/me/verify-email", {}, token=login["session"]["idToken"])
    assert status == 202, answer
    return action_link(postern.mailbox.next(address), postern.public_url, "verifyEmail")


def test_verify_email_scanner_changes_nothing_a_person_types_the_number(postern):
    address = unique("verify")
    link = verify_link(postern, address)

    scanner = scan(link)
    assert scanner.pressed("csrf"), f"the scanner never submitted the form: {scanner.visits}"
    assert user(postern, address)["emailVerified"] is False, "the scanner verified the address"
    # A wrong number is refused the same way and spends nothing either.
    person = Person()
    person.open(link)
    number = person.shown_number()
    wrong = "100" if number != "100" else "101"
    status, page = person.press("submit", {"confirm": wrong})
    assert status == 400 and 'id="retry"' in page and user(postern, address)["emailVerified"] is False, page
    status, page = person.press("submit", {"confirm": number})
    assert status == 200 and 'id="done"' in page, page
    assert user(postern, address)["emailVerified"] is True


def test_change_and_recover_scanner_changes_nothing_a_person_types_the_number(postern):
    old, new = unique("mover"), unique("mover-new")
    login = sign_in(postern, old)
    status, answer, _ = postern.post("/v1/me/email", {"newEmail": new}, token=login["session"]["idToken"])
    assert status == 202, answer
    change_link = action_link(postern.mailbox.next(new), postern.public_url, "verifyAndChangeEmail")

    # The new mailbox's scanner: the account does not move, its session does not end.
    scan(change_link)
    assert user(postern, old)["uid"] == login["uid"] and user(postern, new) is None, "the scanner moved the account"
    assert session_alive(postern, login), "the scanner ended the session"
    confirmed_by_a_person(change_link)
    assert user(postern, new)["uid"] == login["uid"]

    # The old mailbox's scanner on the recovery link: the change stays, sessions stay.
    recover_link = action_link(postern.mailbox.next(old), postern.public_url, "recoverEmail")
    fresh = sign_in(postern, new)
    for _ in range(3):  # behind such a scanner, every recovery mail is scanned: none undoes the change
        scan(recover_link)
    assert user(postern, new)["uid"] == login["uid"] and user(postern, old) is None, "the scanner undid the change"
    assert session_alive(postern, fresh), "the scanner signed every session out"
    # The owner of the old mailbox still can, with the number.
    confirmed_by_a_person(recover_link)
    assert user(postern, old)["uid"] == login["uid"] and not session_alive(postern, fresh)


def test_one_browsers_number_does_not_confirm_in_another(postern):
    # The number is the browser's: a scanner that read another browser's page gains nothing.
    address = unique("numbers")
    link = verify_link(postern, address)
    first, second = Person(), Person()
    first.open(link)
    second.open(link)
    if first.shown_number() == second.shown_number():
        second = Person()  # one chance in 900: a third browser
        second.open(link)
    assert first.shown_number() != second.shown_number()
    status, _ = second.press("submit", {"confirm": first.shown_number()})
    assert status == 400 and user(postern, address)["emailVerified"] is False


def test_sign_in_and_reset_links_scanner_spends_nothing(postern):
    address = unique("reader")
    sign_in(postern, address)
    status, _, _ = postern.post("/v1/email-link/send", {"email": address, "continueUrl": "https://app.example.com/finish"})
    msg = postern.mailbox.next(address)
    link = action_link(msg, postern.public_url, "signIn")
    scan(link)
    status, login, _ = postern.post("/v1/email-link/complete", {"code": six_digits(msg), "email": address})
    assert status == 200, login

    status, _, _ = postern.post("/v1/password/reset", {"email": address})
    assert status == 202
    reset = action_link(postern.mailbox.next(address), postern.public_url, "resetPassword")
    scanner = scan(reset)
    assert scanner.pressed("newPassword", ""), scanner.visits
    assert session_alive(postern, login), "the scanner reset the password"
    person = Person()
    person.open(reset)
    status, page = person.press("submit", {"newPassword": "a new password " + secrets.token_hex(4)})
    assert status == 200 and 'id="done"' in page, page


def ask_approval(postern, address, device):
    """An asking device's approval request: its PKCE verifier, the answer (with the number it
    shows) and the mail the owner gets."""
    verifier = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    status, sent, _ = postern.post("/v1/email-link/send", {
        "email": address, "codeChallenge": challenge, "approval": True, "deviceName": device})
    assert status == 202, sent
    return verifier, sent, postern.mailbox.next(address)


def test_approval_scanner_presses_every_button_changes_nothing(postern):
    address = unique("approver")
    verifier, sent, msg = ask_approval(postern, address, "Ada's phone")
    link = action_link(msg, postern.public_url, "signIn")
    wait = {"email": address, "codeVerifier": verifier, "waitSeconds": 0}

    scanner = scan(link)
    status, pending, _ = postern.post("/v1/email-link/wait", wait)
    assert status == 202 and pending["status"] == "pending", ("the scanner ended the approval", status, pending)
    assert scanner.pressed("step", "review") and scanner.pressed("step", "decline"), scanner.visits
    # The owner approves with the number the asking device shows.
    owner = Person()
    owner.open(link)
    owner.press("review")
    status, page = owner.press("approve", {"pick": str(sent["approvalNumber"])})
    assert status == 200 and 'id="device"' in page, page
    status, login, _ = postern.post("/v1/email-link/wait", wait)
    assert status == 200 and login["email"] == address, login


def test_approval_wrong_number_leaves_the_mails_code(postern):
    address = unique("fallback")
    verifier, sent, msg = ask_approval(postern, address, "Grace's laptop")
    person = Person()
    person.open(action_link(msg, postern.public_url, "signIn"))
    person.press("review")
    wrong = 10 if sent["approvalNumber"] != 10 else 11
    status, page = person.press("approve", {"pick": str(wrong)})
    assert status == 200 and 'id="approval"' in page and 'id="device"' not in page, page
    status, answer, _ = postern.post("/v1/email-link/wait", {"email": address, "codeVerifier": verifier, "waitSeconds": 0})
    check_error(answer, status, "INVALID_OOB_CODE", 400)
    # The 6-digit code of the same mail still signs the asking device in.
    status, login, _ = postern.post("/v1/email-link/complete", {"code": six_digits(msg), "email": address})
    assert status == 200 and login["email"] == address, login
