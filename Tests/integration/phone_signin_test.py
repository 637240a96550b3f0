"""Sign-in by phone (issue 17 point 4, `--phone-sign-in`) against a real `postern serve`: SQLite in
a temp dir (PostgreSQL for the race, from PHONES_PG_DATABASE), SMS through the Twilio transport to
sms_test.py's fake Twilio (phones_test.py's daemon and SMS box), whose recorded bodies give back
each SMS's code. Run by phone-signin.sh, which checks that every test ran and none skipped.

The six cases of the email link (sign-up, sign-in again, anonymous upgrade, MIGRATION_REQUIRED
then allowMigration, disabled user), the code's limits (5 tries, expiry, single use, a newer code
supersedes), 20 concurrent completes of one code on a fresh number (one account), the same bytes
for a held and a free number, the per-number cool-off answering as a send, no number in the clear in the log or the
database, and the webhooks (user.created, user.signed_in, user.anonymous_upgraded, user.migrated,
phone.verified) as the email path emits them, verified with standardwebhooks.
"""
import json
import os
import threading
import time
import urllib.error
import urllib.request

import pytest

import phones_test
from phones_test import Phones, check, code_of

HELD = "+4915111111111"


def raw_post(daemon, path, body):
    """(status, body bytes, Retry-After) of a POST, byte for byte."""
    req = urllib.request.Request(daemon.public_url + path, data=json.dumps(body).encode(), method="POST")
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read(), r.headers.get("Retry-After")
    except urllib.error.HTTPError as e:
        return e.code, e.read(), e.headers.get("Retry-After")


class SignIn(Phones):
    def send(self, number, token=None):
        body = {"phoneNumber": number}
        if token:
            body["idToken"] = token
        status, answer, _ = self.post("/v1/phone/send", body)
        assert status == 202, answer
        assert answer == {"status": "sent"}, answer
        return code_of(self.sms.next(number))

    def complete(self, number, code, token=None, allow_migration=None):
        body = {"phoneNumber": number, "code": code}
        if token:
            body["idToken"] = token
        if allow_migration is not None:
            body["allowMigration"] = allow_migration
        status, answer, _ = self.post("/v1/phone/complete", body)
        return status, answer

    def sign_up(self, number):
        status, login = self.complete(number, self.send(number))
        assert status == 200, login
        return login


@pytest.fixture(scope="module")
def daemon():
    d = SignIn(os.environ["E2E_WORK"], "signin", "--phone-sign-in", "--phone-code-ttl", "600")
    yield d
    assert d.stop() == 0


@pytest.fixture(scope="module", autouse=True)
def twilio_lifetime():
    yield
    if phones_test.TWILIO:
        assert phones_test.TWILIO["fake"].refused == [], phones_test.TWILIO["fake"].refused
        phones_test.TWILIO["fake"].close()


def test_sign_up_then_sign_in_again_to_the_same_account(daemon):
    number = "+4915120000001"
    login = daemon.sign_up(number)
    assert login["isNewUser"] is True and login["session"]["isAnonymous"] is False, login
    assert login["session"]["email"] is None and login["uid"] == login["session"]["uid"]
    token = login["session"]["idToken"]
    # The number is the account's, verified: a claim the owner sees (and could delete).
    assert daemon.statuses(token) == ["verified"]
    status, me, _ = daemon.get("/v1/me", token=token)
    assert status == 200 and "phone" in me["providers"] and me["isAnonymous"] is False, me
    again = daemon.sign_up(number)
    assert again["uid"] == login["uid"] and again["isNewUser"] is False, again
    assert daemon.statuses(again["session"]["idToken"]) == ["verified"]
    # The refresh token works like any other session's.
    status, refreshed, _ = daemon.post("/v1/token", {"refreshToken": again["session"]["refreshToken"]})
    assert status == 200, refreshed


def test_anonymous_upgrade_keeps_the_uid(daemon):
    status, anonymous, _ = daemon.post("/v1/accounts/anonymous", {})
    assert status == 200, anonymous
    token = anonymous["idToken"]
    number = "+4915120000002"
    status, login = daemon.complete(number, daemon.send(number, token=token), token=token)
    assert status == 200, login
    assert login["uid"] == anonymous["uid"] and login["isNewUser"] is True and login["session"]["isAnonymous"] is False


def test_migration_required_then_allow_migration(daemon):
    number = "+4915120000003"
    holder = daemon.sign_up(number)
    status, anonymous, _ = daemon.post("/v1/accounts/anonymous", {})
    token = anonymous["idToken"]
    code = daemon.send(number, token=token)
    status, answer = daemon.complete(number, code, token=token)
    check(status, answer, 409, "MIGRATION_REQUIRED")
    # Nothing was consumed: the same code, now with the user's answer.
    status, login = daemon.complete(number, code, token=token, allow_migration=True)
    assert status == 200, login
    assert login["uid"] == holder["uid"] and login["isNewUser"] is False
    assert login["migration"] == {"fromUid": anonymous["uid"], "toUid": holder["uid"], "allowMigration": True}, login
    # The anonymous account is gone.
    assert daemon.get("/v1/me", token=token)[0] == 401


def test_a_signed_in_account_links_a_free_number_and_cannot_take_a_held_one(daemon):
    token = daemon.sign_in("linker@example.com")
    number = "+4915120000004"
    status, login = daemon.complete(number, daemon.send(number, token=token), token=token)
    assert status == 200 and login["isNewUser"] is True and login["session"]["email"] == "linker@example.com", login
    assert daemon.statuses(login["session"]["idToken"]) == ["verified"]
    other = daemon.sign_in("other@example.com")
    status, answer = daemon.complete(number, daemon.send(number, token=other), token=other)
    check(status, answer, 409, "CREDENTIAL_ALREADY_IN_USE")


def test_disabled_user_is_refused(daemon):
    number = "+4915120000005"
    uid = daemon.sign_up(number)["uid"]
    code, out, err = daemon.cli("users", "disable", "--uid", uid)
    assert code == 0, err
    status, answer = daemon.complete(number, daemon.send(number))
    check(status, answer, 400, "USER_DISABLED")


def test_five_wrong_codes_then_the_right_one_is_refused(daemon):
    number = "+4915120000006"
    code = daemon.send(number)
    wrong = f"{(int(code) + 1) % 1_000_000:06d}"
    for _ in range(5):
        check(*daemon.complete(number, wrong), 400, "INVALID_PHONE_CODE")
    # The number's guessing budget is spent: locked for 30 s, the right code included, and a new
    # SMS resets nothing (its right code is refused too).
    check(*daemon.complete(number, code), 429, "TOO_MANY_ATTEMPTS_TRY_LATER")
    check(*daemon.complete(number, daemon.send(number)), 429, "TOO_MANY_ATTEMPTS_TRY_LATER")


def test_replayed_and_superseded_codes(daemon):
    number = "+4915120000007"
    first = daemon.send(number)
    second = daemon.send(number)
    check(*daemon.complete(number, first), 400, "INVALID_PHONE_CODE")
    status, login = daemon.complete(number, second)
    assert status == 200, login
    check(*daemon.complete(number, second), 400, "INVALID_PHONE_CODE")
    # A code is the number's only: the right digits for another number do nothing.
    other = "+4915120000008"
    code = daemon.send(other)
    check(*daemon.complete(number, code), 400, "INVALID_PHONE_CODE")


def test_expired_code():
    d = SignIn(os.environ["E2E_WORK"], "signin-expiry", "--phone-sign-in", "--phone-code-ttl", "5")
    try:
        number = "+4915120000009"
        code = d.send(number)
        time.sleep(5.5)
        check(*d.complete(number, code), 400, "INVALID_PHONE_CODE")
    finally:
        assert d.stop() == 0


def concurrent_completes(d, number):
    code = d.send(number)
    answers = []
    lock = threading.Lock()

    def complete():
        answer = d.complete(number, code)
        with lock:
            answers.append(answer)

    threads = [threading.Thread(target=complete) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    won = [a for s, a in answers if s == 200]
    assert len(won) == 1, answers
    assert all(s == 400 and a["error"]["code"] == "INVALID_PHONE_CODE" for s, a in answers if s != 200), answers
    # One account holds the number: a new code signs in to it.
    again = d.sign_up(number)
    assert again["uid"] == won[0]["uid"] and again["isNewUser"] is False


def test_twenty_concurrent_completes_make_one_account_sqlite(daemon):
    concurrent_completes(daemon, "+4915120000010")


def test_twenty_concurrent_completes_make_one_account_postgres():
    database = os.environ.get("PHONES_PG_DATABASE")
    assert database, "phone-signin.sh sets PHONES_PG_DATABASE"
    d = SignIn(os.environ["E2E_WORK"], "signin-postgres", "--phone-sign-in", "--database", database)
    try:
        concurrent_completes(d, "+4915120000011")
    finally:
        assert d.stop() == 0


def test_send_answers_the_same_bytes_for_a_held_and_a_free_number(daemon):
    daemon.sign_up(HELD)
    free = "+4915120000012"
    held_answer = raw_post(daemon, "/v1/phone/send", {"phoneNumber": HELD})
    free_answer = raw_post(daemon, "/v1/phone/send", {"phoneNumber": free})
    assert held_answer == free_answer and held_answer[0] == 202, (held_answer, free_answer)
    # And both got their SMS.
    daemon.sms.next(HELD)
    daemon.sms.next(free)


def test_the_per_number_cool_off_answers_as_a_send():
    d = SignIn(os.environ["E2E_WORK"], "signin-caps", "--phone-sign-in", "--sms-number-interval", "60")
    try:
        d.sign_up(HELD)
        free = "+4915120000013"
        fresh = raw_post(d, "/v1/phone/send", {"phoneNumber": free})
        assert fresh[0] == 202
        d.sms.next(free)
        # Within the cool-off, a held and a free number answer byte for byte as a first send does:
        # no 429, no Retry-After (that told a stranger the number was just texted).
        held_answer = raw_post(d, "/v1/phone/send", {"phoneNumber": HELD})
        free_answer = raw_post(d, "/v1/phone/send", {"phoneNumber": free})
        assert held_answer == free_answer == fresh, (held_answer, free_answer, fresh)
        assert held_answer[2] is None
        # Nothing was sent again: the next SMS the worker sends is a third number's.
        third = "+4915120000015"
        assert raw_post(d, "/v1/phone/send", {"phoneNumber": third})[0] == 202
        d.sms.next(third)
        with d.sms.twilio.lock:
            sent = [number for number, status, _ in d.sms.twilio.requests[d.sms.start:] if status == 201]
        assert sent.count(free) == 1 and sent.count(HELD) == 1, sent
        # A number outside the allowlist is refused before anything is sent.
        status, answer, _ = d.post("/v1/phone/send", {"phoneNumber": "+12025550123"})
        check(status, answer, 400, "SMS_COUNTRY_NOT_ALLOWED")
    finally:
        assert d.stop() == 0


def test_one_number_however_written_and_no_sms_to_the_caribbean_or_to_premium_numbers():
    # What an SMS pumper and a cap dodger send: +1 numbers of other countries with the US allowed,
    # numbers that do not exist or cost the operator, and one number written four ways to pass
    # its per-number cap four times (libphonenumber's one E.164 form makes them one).
    d = SignIn(
        os.environ["E2E_WORK"], "signin-forms", "--phone-sign-in", "--sms-number-interval", "60", "--sms-countries", "DE,US",
        "--default-region", "DE")
    try:
        d.sign_up("+4915120000030")
        # Within the number's cool-off every spelling answers as an accepted send (no oracle that
        # the number was just texted) and sends nothing: the cap counts them as one number.
        for variant in ["+49 0151 20000030", "+49 00151 20000030", "0049 151 20000030", "0151 20000030"]:
            status, answer, _ = d.post("/v1/phone/send", {"phoneNumber": variant})
            assert (status, answer) == (202, {"status": "sent"}), (variant, status, answer)
        for pumped in ["+1 876 210 1234", "+1 809 234 5678", "+1 242 359 1234", "+1 649 231 1234"]:
            status, answer, _ = d.post("/v1/phone/send", {"phoneNumber": pumped})
            check(status, answer, 400, "SMS_COUNTRY_NOT_ALLOWED")
        for costly in ["+491234", "+4990012345678", "+49 900 1234567", "+1 900 234 5678"]:
            status, answer, _ = d.post("/v1/phone/send", {"phoneNumber": costly})
            check(status, answer, 400, "INVALID_PHONE_NUMBER")
            assert costly.replace(" ", "")[-4:] not in answer["error"]["message"], answer
        assert raw_post(d, "/v1/phone/send", {"phoneNumber": "+1 201 555 0123"})[0] == 202
        d.sms.next("+12015550123")
        # Sent after the variants, and delivered: the variants were sent no SMS (the sign-up's one only).
        with d.sms.twilio.lock:
            to_number = [r for r in d.sms.twilio.requests if r[0] == "+4915120000030" and r[1] == 201]
        assert len(to_number) == 1, to_number
    finally:
        assert d.stop() == 0


def test_no_number_in_the_clear_in_the_log_or_the_database(daemon):
    # Runs after the others on the module's daemon: every number it signed in with, in no byte
    # of its log, its database or the database's WAL (the SMS outbox holds them sealed).
    daemon.sign_up("+4915120000014")
    time.sleep(1)
    for path in (daemon.log_path, daemon.database, daemon.database + "-wal"):
        if not os.path.exists(path):
            continue
        data = open(path, "rb").read()
        for digits in (b"4915120000", b"4915111111111", b"15120000014"):
            assert digits not in data, (path, digits)


def test_webhooks_as_the_email_path_emits_them():
    from webhooks_test import SECRET_NEW, SECRET_OLD, Receiver
    from postern_daemon import free_port, wait_for

    receiver = Receiver(free_port())
    work = os.path.join(os.environ["E2E_WORK"], "signin-webhooks")
    os.makedirs(work, exist_ok=True)
    secret_file = os.path.join(work, "webhook-secrets")
    with open(secret_file, "w") as f:
        f.write(f"{SECRET_OLD}\n{SECRET_NEW}\n")
    os.chmod(secret_file, 0o600)
    d = SignIn(os.environ["E2E_WORK"], "signin-webhooks-daemon", "--phone-sign-in", "--webhook-urls", receiver.url,
               "--webhook-secret-file", secret_file, "--webhook-retry-base", "1")
    try:
        number = "+4915120000020"
        created = d.sign_up(number)
        status, anonymous, _ = d.post("/v1/accounts/anonymous", {})
        upgraded_number = "+4915120000021"
        status, upgraded = d.complete(upgraded_number, d.send(upgraded_number, token=anonymous["idToken"]), token=anonymous["idToken"])
        assert status == 200, upgraded
        status, guest, _ = d.post("/v1/accounts/anonymous", {})
        status, migrated = d.complete(number, d.send(number, token=guest["idToken"]), token=guest["idToken"], allow_migration=True)
        assert status == 200, migrated

        def data(kind, uid_key, uid):
            return [e["data"] for e in receiver.of_type(kind) if e["data"].get(uid_key) == uid]

        made = wait_for(lambda: data("user.created", "uid", created["uid"]), 30, "user.created of the phone account")
        assert made == [{"uid": created["uid"], "anonymous": False, "email": None}], made
        # Two sign-ins (the sign-up and the migration): wait for both, not the first to arrive.
        signed = wait_for(lambda: (lambda s: s if len(s) >= 2 else None)(data("user.signed_in", "uid", created["uid"])),
                          30, "both user.signed_in events")
        assert all(e["method"] == "phone" for e in signed) and len(signed) == 2, signed
        assert wait_for(lambda: data("phone.verified", "uid", created["uid"]), 30, "phone.verified")
        up = wait_for(lambda: data("user.anonymous_upgraded", "uid", anonymous["uid"]), 30, "user.anonymous_upgraded")
        assert up == [{"uid": anonymous["uid"], "email": None}], up
        moved = wait_for(lambda: data("user.migrated", "fromUid", guest["uid"]), 30, "user.migrated")
        assert moved == [{"fromUid": guest["uid"], "toUid": created["uid"]}], moved
        # No payload carries the number.
        with receiver.lock:
            bodies = b"".join(receiver.bodies.values())
        assert b"4915120000" not in bodies
        assert receiver.rejected == [], receiver.rejected
    finally:
        assert d.stop() == 0
        receiver.down()
