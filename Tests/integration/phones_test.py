"""Phone numbers by consent of both parties (issue 17 point 3) against a real `postern serve`:
SQLite in a temp dir (and PostgreSQL for the race, from PHONES_PG_DATABASE), mail as .eml files,
SMS through the Twilio transport to sms_test.py's fake Twilio (loopback HTTPS, its CA trusted
with --sms-ca-file, Basic auth and the form fields checked), whose recorded bodies give back each
SMS's code and hosted-page link. Run by phones.sh, which checks that every test ran and none
skipped.

The cool-off is real: `--phone-transfer-days 0.0001` is 8.64 seconds of the daemon's own clock,
and the code's life `--phone-code-ttl 5` makes "expired" five seconds. The caps of point 5 are
lifted (`--sms-number-interval 0 …`): they have their own tests.

Environment: POSTERN_BIN, E2E_WORK (pytest_lib.bash sets both); PHONES_PG_DATABASE (a libpq
connection string of an empty database; phones.sh makes one).
"""
import json
import os
import re
import threading
import time
import urllib.error

import pytest

from mail_scanner import MailScanner
from postern_daemon import LOOPBACK_TARGETS, Daemon, action_link, wait_for
import sms_test

NUMBER = "+4915112345678"
SMS_FLAGS = [
    "--sms-countries", "DE,GB", "--sms-number-interval", "0", "--sms-number-per-hour", "0", "--sms-ip-per-hour", "0",
    "--sms-country-per-hour", "0", "--sms-per-day", "0", "--ip-per-minute", "0", "--mail-interval", "0", "--mail-per-hour", "0", "--mail-domain-per-hour", "0", "--mail-per-hour-total", "0", "--challenge", "off",
]


class SMSBox:
    """The SMS the fake Twilio accepted (201) since this box was made, read by recipient, oldest first."""

    def __init__(self, twilio):
        self.twilio = twilio
        with twilio.lock:
            self.start = len(twilio.requests)
        self.seen = set()

    def next(self, to, timeout=20):
        def new():
            with self.twilio.lock:
                requests = list(enumerate(self.twilio.requests))[self.start:]
            for index, (number, status, form) in requests:
                if index in self.seen or number != to or status != 201:
                    continue
                self.seen.add(index)
                return {"to": number, "body": form["Body"]}
            return None

        return wait_for(new, timeout, f"an SMS to {to}")


def code_of(sms):
    # The origin-bound line ends every SMS: "@host #123456".
    found = re.findall(r"#(\d{6})\s*$", sms["body"])
    assert found, sms["body"]
    return found[0]


def claim_of(sms):
    found = re.findall(r"/phone\?claim=([A-Za-z0-9_-]{22})", sms["body"])
    assert found, sms["body"]
    return found[0]


TWILIO = {}


def fake_twilio():
    """One fake Twilio for the module (and its auth token file), started on first use."""
    if not TWILIO:
        work = os.path.join(os.environ["E2E_WORK"], "phones-twilio")
        os.makedirs(work, exist_ok=True)
        token_file = os.path.join(work, "twilio-token")
        with open(token_file, "w") as f:
            f.write(sms_test.TOKEN + "\n")
        TWILIO.update(fake=sms_test.FakeTwilio(os.path.join(work, "tls")), token_file=token_file)
    return TWILIO["fake"], TWILIO["token_file"]


class Phones(Daemon):
    def __init__(self, work, name, *extra):
        twilio, token_file = fake_twilio()
        self.sms = SMSBox(twilio)
        super().__init__(
            work, name, "--sms-transport", f"twilio:{sms_test.SID}", "--sms-twilio-base-url", twilio.base_url,
            "--sms-twilio-auth-token-file", token_file, "--sms-from", sms_test.FROM, "--sms-ca-file", twilio.ca,
            "--sms-retry-base", "1", *SMS_FLAGS, *LOOPBACK_TARGETS, *extra)

    def sign_in(self, email):
        status, answer, _ = self.post("/v1/email-link/send", {"email": email})
        assert status == 202, answer
        link = action_link(self.mailbox.next(email), self.public_url, "signIn")
        status, login, _ = self.post("/v1/email-link/complete", {"link": link})
        assert status == 200, login
        return login["session"]["idToken"]

    def add(self, token, number=NUMBER):
        """Asks to add `number`; returns (claimId, code, the answer's bytes without the claim id)."""
        status, answer, _ = self.post("/v1/me/phones", {"phoneNumber": number}, token=token)
        assert status == 202, answer
        sms = self.sms.next(number.replace(" ", ""))
        assert claim_of(sms) == answer["claimId"], "the SMS links to its own claim's page"
        return answer["claimId"], code_of(sms), json.dumps({k: v for k, v in answer.items() if k != "claimId"})

    def phones(self, token):
        status, answer, _ = self.get("/v1/me/phones", token=token)
        assert status == 200, answer
        return answer["claims"]

    def statuses(self, token):
        return [c["status"] for c in self.phones(token)]


@pytest.fixture
def daemon():
    d = Phones(os.environ["E2E_WORK"], f"phones-{time.monotonic_ns()}", "--phone-transfer-days", "0.0001", "--phone-code-ttl", "5")
    yield d
    assert d.stop() == 0


@pytest.fixture(scope="module", autouse=True)
def twilio_lifetime():
    yield
    if TWILIO:
        assert TWILIO["fake"].refused == [], TWILIO["fake"].refused
        TWILIO["fake"].close()


def check(status, answer, expected_status, code):
    assert status == expected_status, (status, answer)
    assert answer["error"]["code"] == code, answer


def test_both_orders_of_consent(daemon):
    # Owner first, one person: the code typed into the owner's session.
    u = daemon.sign_in("u@example.com")
    claim, code, _ = daemon.add(u)
    assert daemon.statuses(u) == ["awaiting_code"]
    status, answer, _ = daemon.post(f"/v1/me/phones/{claim}/verify", {"code": code}, token=u)
    assert (status, answer["status"]) == (200, "proved"), answer
    assert daemon.statuses(u) == ["verified"]
    assert daemon.phones(u)[0]["phoneNumber"] == "+49…"

    # Owner first, the holder elsewhere: proved on its own with the code (the page's API).
    o = daemon.sign_in("o@example.com")
    claim, code, _ = daemon.add(o, "+4915100000001")
    status, answer, _ = daemon.post(f"/v1/phones/claims/{claim}/prove", {"code": code})
    assert status == 200, answer
    assert daemon.statuses(o) == ["verified"]

    # Holder first (the seed's order): the holder's own session writes the claim, unapproved, for
    # the account of an address (one without an account gets the same answer, and no claim).
    w = daemon.sign_in("w@example.com")
    # An anonymous session buys no SMS (phone sign-in is off here): one with a proved address does.
    anonymous = daemon.post("/v1/accounts/anonymous", {})[1]["idToken"]
    check(*daemon.post("/v1/phones/claims", {"phoneNumber": "+4915100000002", "email": "w@example.com"}, token=anonymous)[:2],
          409, "ANONYMOUS_ACCOUNT")
    h = daemon.sign_in("holder@example.com")
    status, answer, _ = daemon.post("/v1/phones/claims", {"phoneNumber": "+4915100000002", "email": "w@example.com"}, token=h)
    assert status == 202, answer
    sms = daemon.sms.next("+4915100000002")
    claim = answer["claimId"]
    assert claim_of(sms) == claim
    status, answer, _ = daemon.post(f"/v1/phones/claims/{claim}/prove", {"code": code_of(sms)})
    assert status == 200, answer
    assert daemon.statuses(w) == ["awaiting_approval"]
    status, answer, _ = daemon.post(f"/v1/me/phones/{claim}/approve", {}, token=w)
    assert (status, answer["status"]) == (200, "approved"), answer
    assert daemon.statuses(w) == ["verified"]
    status, answer, _ = daemon.post(f"/v1/phones/claims/{claim}/read", {"code": code_of(sms)})
    assert (status, answer["status"], answer["ownerApproved"], answer["holderProved"]) == (200, "verified", True, True), answer


def test_move_with_mail_release_and_cool_off(daemon):
    v = daemon.sign_in("v@example.com")
    held, code, _ = daemon.add(v)
    assert daemon.post(f"/v1/me/phones/{held}/verify", {"code": code}, token=v)[0] == 200
    # U claims it with the holder's consent: it waits, and V's owner is told by mail.
    u = daemon.sign_in("u@example.com")
    claim, code, _ = daemon.add(u)
    assert daemon.post(f"/v1/me/phones/{claim}/verify", {"code": code}, token=u)[0] == 200
    assert daemon.statuses(u) == ["awaiting_transfer"]
    notice = daemon.mailbox.next("v@example.com")
    assert "phone number +49…" in notice["Subject"], notice["Subject"]
    assert "15112345678" not in notice.as_string()
    assert daemon.phones(v)[0]["releaseRequestedUntil"] is not None
    # The release path: V lets it go now.
    status, answer, _ = daemon.post(f"/v1/me/phones/{held}/release", {}, token=v)
    assert status == 204, answer
    assert daemon.statuses(u) == ["verified"]
    assert daemon.statuses(v) == []

    # The cool-off path: X claims it from U, U does nothing; after 8.64 s it moves.
    x = daemon.sign_in("x@example.com")
    third, code, _ = daemon.add(x)
    verified_at = time.monotonic()
    assert daemon.post(f"/v1/me/phones/{third}/verify", {"code": code}, token=x)[0] == 200
    assert daemon.statuses(x) == ["awaiting_transfer"]
    daemon.mailbox.next("u@example.com")
    due = daemon.phones(x)[0]["transferDueAt"]
    assert due is not None
    time.sleep(3)
    # Only while the 8.64 s cool-off cannot have passed (the mail may have been slow to come).
    if time.monotonic() - verified_at < 7:
        assert daemon.statuses(x) == ["awaiting_transfer"], "not before the cool-off is over"
    wait_for(lambda: daemon.statuses(x) == ["verified"], 15, "the move after the cool-off")
    assert daemon.statuses(u) == []

    # An objection: Y claims it from X, X objects, Y's claim ends and X keeps it past the cool-off.
    y = daemon.sign_in("y@example.com")
    fourth, code, _ = daemon.add(y)
    assert daemon.post(f"/v1/me/phones/{fourth}/verify", {"code": code}, token=y)[0] == 200
    assert daemon.post(f"/v1/me/phones/{third}/object", {}, token=x)[0] == 204
    time.sleep(9)
    assert daemon.statuses(y) == []
    assert daemon.statuses(x) == ["verified"]


def concurrent_claims(daemon):
    parties = []
    for index in range(20):
        token = daemon.sign_in(f"racer{index}@example.com")
        claim, code, _ = daemon.add(token)
        parties.append((token, claim, code))
    results = [None] * 20
    barrier = threading.Barrier(20)

    def prove(index):
        token, claim, code = parties[index]
        barrier.wait()
        results[index] = daemon.post(f"/v1/me/phones/{claim}/verify", {"code": code}, token=token)[0]

    threads = [threading.Thread(target=prove, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [200] * 20, results
    statuses = [daemon.statuses(token) for token, _, _ in parties]
    assert statuses.count(["verified"]) == 1, statuses
    assert statuses.count(["awaiting_transfer"]) == 19, statuses


def test_concurrent_claims_sqlite():
    # A daemon of its own with the default code life and transfer delay: the module's (codes of
    # 5 s, a cool-off of 9 s) let the first of 20 codes expire before the last was sent on a busy
    # machine.
    d = Phones(os.environ["E2E_WORK"], "phones-sqlite-race")
    try:
        concurrent_claims(d)
    finally:
        assert d.stop() == 0


def test_concurrent_claims_postgres():
    database = os.environ.get("PHONES_PG_DATABASE")
    assert database, "phones.sh sets PHONES_PG_DATABASE"
    d = Phones(os.environ["E2E_WORK"], "phones-postgres", "--database", database)
    try:
        concurrent_claims(d)
    finally:
        assert d.stop() == 0


def test_holder_and_owner_delete(daemon):
    u = daemon.sign_in("u@example.com")
    claim, code, _ = daemon.add(u)
    assert daemon.post(f"/v1/phones/claims/{claim}/prove", {"code": code})[0] == 200
    assert daemon.post(f"/v1/phones/claims/{claim}/delete", {"code": code})[0] == 204
    assert daemon.statuses(u) == []
    check(*daemon.post(f"/v1/phones/claims/{claim}/read", {"code": code})[:2], 400, "INVALID_PHONE_CODE")
    # Free again: another account verifies it at once.
    o = daemon.sign_in("o@example.com")
    claim, code, _ = daemon.add(o)
    assert daemon.post(f"/v1/me/phones/{claim}/verify", {"code": code}, token=o)[0] == 200
    assert daemon.statuses(o) == ["verified"]
    status, answer, _ = daemon.request("DELETE", f"/v1/me/phones/{claim}", token=o)
    assert status == 204, answer
    assert daemon.statuses(o) == []
    check(*daemon.request("DELETE", f"/v1/me/phones/{claim}", token=o)[:2], 404, "PHONE_CLAIM_NOT_FOUND")


def test_wrong_replayed_expired_and_six_wrong_tries(daemon):
    u = daemon.sign_in("u@example.com")
    claim, code, _ = daemon.add(u)
    wrong = "000000" if code != "000000" else "000001"
    check(*daemon.post(f"/v1/me/phones/{claim}/verify", {"code": wrong}, token=u)[:2], 400, "INVALID_PHONE_CODE")
    assert daemon.post(f"/v1/me/phones/{claim}/verify", {"code": code}, token=u)[0] == 200
    check(*daemon.post(f"/v1/me/phones/{claim}/verify", {"code": code}, token=u)[:2], 400, "INVALID_PHONE_CODE")
    check(*daemon.post(f"/v1/phones/claims/{claim}/prove", {"code": code})[:2], 400, "INVALID_PHONE_CODE")
    # Expired: the code lives 5 seconds here.
    late, late_code, _ = daemon.add(u, "+4915100000003")
    time.sleep(6)
    check(*daemon.post(f"/v1/phones/claims/{late}/prove", {"code": late_code})[:2], 400, "INVALID_PHONE_CODE")
    # 6 wrong tries, then the right code is refused.
    fresh = daemon.sign_in("u@example.com")
    locked, locked_code, _ = daemon.add(fresh, "+4915100000004")
    wrong = "000000" if locked_code != "000000" else "000001"
    for _ in range(5):
        check(*daemon.post(f"/v1/phones/claims/{locked}/prove", {"code": wrong})[:2], 400, "INVALID_PHONE_CODE")
    # The sixth, and the right code after it, meet the number's guessing budget: locked, 429.
    status, answer, headers = daemon.post(f"/v1/phones/claims/{locked}/prove", {"code": wrong})
    check(status, answer, 429, "TOO_MANY_ATTEMPTS_TRY_LATER")
    assert headers.get("Retry-After") == "30", headers
    check(*daemon.post(f"/v1/phones/claims/{locked}/prove", {"code": locked_code})[:2], 429, "TOO_MANY_ATTEMPTS_TRY_LATER")
    claims = {c["claimId"]: c for c in daemon.phones(fresh)}
    assert claims[locked]["status"] == "expired" and not claims[locked]["holderProved"], claims


def test_same_answers_for_a_free_and_a_taken_number(daemon):
    v = daemon.sign_in("v@example.com")
    held, code, _ = daemon.add(v)
    assert daemon.post(f"/v1/me/phones/{held}/verify", {"code": code}, token=v)[0] == 200
    u = daemon.sign_in("u@example.com")
    f = daemon.sign_in("f@example.com")
    taken_claim, taken_code, taken_answer = daemon.add(u, NUMBER)
    free_claim, free_code, free_answer = daemon.add(f, "+4915100000005")
    assert taken_answer == free_answer
    # The proofs answer alike too, byte for byte but the claim id.
    s1, a1, h1 = daemon.post(f"/v1/me/phones/{taken_claim}/verify", {"code": taken_code}, token=u)
    s2, a2, h2 = daemon.post(f"/v1/me/phones/{free_claim}/verify", {"code": free_code}, token=f)
    assert (s1, {k: v for k, v in a1.items() if k != "claimId"}) == (s2, {k: v for k, v in a2.items() if k != "claimId"})
    assert h1.get("Content-Type") == h2.get("Content-Type")
    # Wrong codes answer alike whether the claim exists, is another's, or is taken.
    wrong = {"code": "999999"}
    answers = {json.dumps(daemon.post(f"/v1/phones/claims/{c}/read", wrong)[1]) for c in (taken_claim, free_claim, "A" * 22)}
    assert len(answers) == 1, answers


def test_attacker_sequences(daemon):
    u = daemon.sign_in("u@example.com")
    victim = daemon.sign_in("victim@example.com")
    a, a_code, _ = daemon.add(u, "+4915100000006")
    assert daemon.post(f"/v1/phones/claims/{a}/prove", {"code": a_code})[0] == 200
    b, b_code, _ = daemon.add(victim, "+4915100000007")
    if a_code != b_code:
        # A code proved for claim A, used on claim B: to prove it, to read it, to delete it.
        check(*daemon.post(f"/v1/phones/claims/{b}/prove", {"code": a_code})[:2], 400, "INVALID_PHONE_CODE")
        check(*daemon.post(f"/v1/phones/claims/{b}/read", {"code": a_code})[:2], 400, "INVALID_PHONE_CODE")
        check(*daemon.post(f"/v1/phones/claims/{b}/delete", {"code": a_code})[:2], 400, "INVALID_PHONE_CODE")
    # Another account's session cannot verify B, not even with B's own code.
    check(*daemon.post(f"/v1/me/phones/{b}/verify", {"code": b_code}, token=u)[:2], 404, "PHONE_CLAIM_NOT_FOUND")
    check(*daemon.request("DELETE", f"/v1/me/phones/{b}", token=u)[:2], 404, "PHONE_CLAIM_NOT_FOUND")
    # A stolen claim id without the code: guesses spend the claim's tries and its number's budget
    # (the three above began it); past 5 the number is locked, and even the right code fails.
    guesses = [g for g in ("111111", "222222", "333333", "444444", "555555", "666666") if g != b_code][:5]
    counted = 3 if a_code != b_code else 0
    for i, guess in enumerate(guesses):
        expected = (400, "INVALID_PHONE_CODE") if counted + i < 5 else (429, "TOO_MANY_ATTEMPTS_TRY_LATER")
        check(*daemon.post(f"/v1/phones/claims/{b}/read", {"code": guess})[:2], *expected)
    check(*daemon.post(f"/v1/phones/claims/{b}/prove", {"code": b_code})[:2], 429, "TOO_MANY_ATTEMPTS_TRY_LATER")
    assert daemon.statuses(victim) == ["expired"]
    # Malformed codes and claim ids are argument errors, before any lookup.
    check(*daemon.post(f"/v1/phones/claims/{b}/read", {"code": "12345"})[:2], 400, "INVALID_ARGUMENT")
    check(*daemon.post("/v1/phones/claims/short/read", {"code": "123456"})[:2], 400, "INVALID_PHONE_CODE")
    # No endpoint answers with a number in the clear.
    assert all("15100000007" not in json.dumps(c) for c in daemon.phones(victim))


def test_hosted_page_the_sms_links_to(daemon):
    """The holder who is not the account's owner: the SMS's link, the page's form, its CSRF token."""
    import http.cookiejar
    import urllib.parse
    import urllib.request

    u = daemon.sign_in("u@example.com")
    status, answer, _ = daemon.post("/v1/me/phones", {"phoneNumber": "+4915100000008"}, token=u)
    sms = daemon.sms.next("+4915100000008")
    link = re.findall(r"(http://\S+/phone\?claim=[A-Za-z0-9_-]{22})", sms["body"])[0]
    assert link.startswith(daemon.public_url)
    jar = http.cookiejar.CookieJar()
    browser = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPCookieProcessor(jar))
    page = browser.open(link + "&lang=de").read().decode()
    assert "Telefonnummer bestätigen" in page and 'name="code"' in page
    csrf = re.findall(r'name="csrf" value="([^"]+)"', page)[0]
    # GET acted on nothing.
    assert daemon.statuses(u) == ["awaiting_code"]
    # A scanner (mail_scanner.py) that submits the form as found and presses both buttons, six
    # times over, changes nothing and counts no try: the code field is empty (five tries would
    # kill the claim, and lock the number's guess budget).
    for _ in range(6):
        scanner = MailScanner()
        scanner.scan(link)
        assert scanner.pressed("answer", "prove") and scanner.pressed("answer", "refuse"), scanner.visits
        assert scanner.scripts == 0
    assert daemon.statuses(u) == ["awaiting_code"]

    def submit(fields, opener=browser):
        data = urllib.parse.urlencode(fields).encode()
        try:
            with opener.open(urllib.request.Request(daemon.public_url + "/phone", data=data, method="POST"), timeout=30) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    claim = answer["claimId"]
    # A form without this browser's cookie is refused (CSRF), and counts no try.
    stranger = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    assert submit({"claim": claim, "csrf": csrf, "lang": "en", "code": code_of(sms), "answer": "prove"}, stranger)[0] == 403
    # A wrong code: 400, the page in the asked language.
    wrong = "000000" if code_of(sms) != "000000" else "000001"
    status, html = submit({"claim": claim, "csrf": csrf, "lang": "en", "code": wrong, "answer": "prove"})
    assert status == 400, html
    status, html = submit({"claim": claim, "csrf": csrf, "lang": "en", "code": code_of(sms), "answer": "prove"})
    assert status == 200 and "Confirmed" in html, html
    assert daemon.statuses(u) == ["verified"]
    # The same page refuses (deletes) with the code, even after the proof.
    status, html = submit({"claim": claim, "csrf": csrf, "lang": "en", "code": code_of(sms), "answer": "refuse"})
    assert status == 200 and "Refused" in html, html
    assert daemon.statuses(u) == []
    # A malformed claim id is a broken link.
    assert daemon.get("/phone?claim=nope")[0] == 400


def test_cli_phones_show_and_remove(daemon):
    import subprocess

    from postern_daemon import POSTERN

    def cli(*args):
        return subprocess.run([POSTERN, "phones", *args, "--database", daemon.database, "--public-url", daemon.public_url],
                              cwd=daemon.work, capture_output=True, text=True, timeout=60)

    u = daemon.sign_in("u@example.com")
    claim, code, _ = daemon.add(u, "+4915100000009")
    assert daemon.post(f"/v1/me/phones/{claim}/verify", {"code": code}, token=u)[0] == 200
    shown = cli("show", "--email", "u@example.com")
    assert shown.returncode == 0, shown.stderr
    assert claim in shown.stdout and "+49…" in shown.stdout and "verified" in shown.stdout, shown.stdout
    assert "15100000009" not in shown.stdout + shown.stderr
    listed = json.loads(cli("show", "--email", "u@example.com", "--json").stdout)
    assert [c["status"] for c in listed["claims"]] == ["verified"]
    removed = cli("remove", "--claim", claim)
    assert removed.returncode == 0 and f"removed {claim}" in removed.stdout, removed.stderr
    assert daemon.statuses(u) == []
    again = cli("remove", "--claim", claim)
    assert again.returncode != 0 and "no such phone claim" in again.stderr
    assert cli("remove").returncode == 64


def test_phone_sign_in_is_refused_without_the_flag(daemon):
    for path, body in (("/v1/phone/send", {"phoneNumber": NUMBER}), ("/v1/phone/complete", {"phoneNumber": NUMBER, "code": "123456"})):
        check(*daemon.post(path, body)[:2], 404, "PHONE_SIGN_IN_DISABLED")
    # And no SMS went out for it.
    time.sleep(1)
    with daemon.sms.twilio.lock:
        assert not [r for r in daemon.sms.twilio.requests[daemon.sms.start:] if r[0] == NUMBER]
