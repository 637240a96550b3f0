"""The security review's attack sequences, over HTTP against a real `postern serve` (SQLite in a
temp dir, mail as .eml files): each ends in the refusal that closes its hole. Run by attacks.sh.
Limits are off on the daemon unless a test says otherwise (the worst case the review measured).
"""
import base64
import hashlib
import json
import os
import secrets
import stat
import threading

import pytest

from postern_daemon import Daemon, action_link, check_error, six_digits, text_of

ADMIN_TOKEN = "attacks-admin-" + secrets.token_hex(8)
LIMITS_OFF = ("--mail-interval", "0", "--mail-per-hour", "0", "--mail-domain-per-hour", "0", "--mail-per-hour-total", "0", "--challenge", "off", "--ip-per-minute", "0")


def unique(tag):
    return f"{tag}-{secrets.token_hex(4)}@example.com"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def pkce_pair():
    verifier = b64url(secrets.token_bytes(32))
    return verifier, b64url(hashlib.sha256(verifier.encode()).digest())


@pytest.fixture(scope="module")
def work():
    path = os.environ.get("E2E_WORK") or os.path.join("/tmp", "postern-attacks-" + secrets.token_hex(4))
    os.makedirs(path, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def postern(work):
    daemon = Daemon(work, "limits-off", *LIMITS_OFF, "--admin-token", ADMIN_TOKEN)
    yield daemon
    assert daemon.stop() == 0, open(daemon.log_path).read()[-4000:]
    log = open(daemon.log_path).read()
    assert ADMIN_TOKEN not in log and "oobCode=" not in log, "a secret reached the log"


def send_link(postern, address, **fields):
    status, answer, _ = postern.post("/v1/email-link/send", {"email": address, **fields})
    assert (status, answer) == (202, {"status": "sent"}), (status, answer)
    return postern.mailbox.next(address)


def sign_in(postern, address):
    msg = send_link(postern, address)
    status, login, _ = postern.post("/v1/email-link/complete", {"link": action_link(msg, postern.public_url, "signIn")})
    assert status == 200, login
    return login


def sign_up_with_verifier(postern, address, password):
    verifier, challenge = pkce_pair()
    status, answer, _ = postern.post("/v1/password/sign-up", {"email": address, "password": password, "codeChallenge": challenge})
    assert status == 202, answer
    link = action_link(postern.mailbox.next(address), postern.public_url, "signIn")
    status, login, _ = postern.post("/v1/email-link/complete", {"link": link, "codeVerifier": verifier})
    assert status == 200 and login.get("needsPassword", False) is False, login
    return login


def test_1_lock_then_fresh_code_then_guess_ends_in_a_refused_correct_code(postern):
    victim = unique("victim")
    sign_in(postern, victim)
    first = six_digits(send_link(postern, victim))
    wrong = "000000" if first != "000000" else "111111"
    statuses = [postern.post("/v1/email-link/complete", {"code": wrong, "email": victim})[0] for _ in range(20)]
    assert statuses[:5] == [400] * 5 and set(statuses[5:]) == {429}, statuses
    # A fresh code for the victim (public): it resets nothing.
    fresh_msg = send_link(postern, victim)
    fresh = six_digits(fresh_msg)
    guesses = [c for c in (f"{n:06d}" for n in range(300, 600)) if c != fresh]
    assert {postern.post("/v1/email-link/complete", {"code": g, "email": victim})[0] for g in guesses} == {429}
    status, answer, headers = postern.post("/v1/email-link/complete", {"code": fresh, "email": victim})
    check_error(answer, status, "TOO_MANY_ATTEMPTS_TRY_LATER", 429)
    assert int(headers["Retry-After"]) > 0
    # The link (128 bits) still works, and proves the mailbox.
    link = action_link(fresh_msg, postern.public_url, "signIn")
    status, login, _ = postern.post("/v1/email-link/complete", {"link": link})
    assert status == 200 and login["email"] == victim, login


def test_2_send_time_session_does_not_hand_the_victim_to_the_attacker(postern):
    status, attacker, _ = postern.post("/v1/accounts/anonymous", {})
    assert status == 200, attacker
    victim = unique("victim")
    msg = send_link(postern, victim, idToken=attacker["idToken"])
    # The victim types the code on another device, without a session.
    status, login, _ = postern.post("/v1/email-link/complete", {"code": six_digits(msg), "email": victim})
    assert status == 200, login
    assert login["uid"] != attacker["uid"] and login["isNewUser"] is True, login
    # The attacker's refresh token still holds an anonymous account with no address.
    status, session, _ = postern.post("/v1/token", {"refreshToken": attacker["refreshToken"]})
    assert status == 200 and session["isAnonymous"] is True and session["email"] is None, session
    status, me, _ = postern.get("/v1/me", token=session["idToken"])
    assert status == 200 and me["email"] is None and me["uid"] == attacker["uid"], me
    # And the victim's account is the victim's.
    status, me, _ = postern.get("/v1/me", token=login["session"]["idToken"])
    assert status == 200 and me["email"] == victim and me["uid"] == login["uid"], me


def test_3_the_attackers_sign_up_password_is_refused(postern):
    victim = unique("victim")
    status, answer, _ = postern.post("/v1/password/sign-up", {"email": victim, "password": "the attacker's choice"})
    assert status == 202, answer
    msg = postern.mailbox.next(victim)
    # The victim clicks "Confirm and create my account" (not on the attacker's device).
    status, login, _ = postern.post("/v1/email-link/complete", {"link": action_link(msg, postern.public_url, "signIn")})
    assert status == 200 and login["isNewUser"] is True, login
    status, answer, _ = postern.post("/v1/password/sign-in", {"email": victim, "password": "the attacker's choice"})
    check_error(answer, status, "INVALID_LOGIN_CREDENTIALS", 400)
    # The app is told to ask the owner for a password of their own.
    assert login.get("needsPassword") is True, login
    # The mail says plainly that an account is being created.
    assert "create a new" in text_of(msg), text_of(msg)
    # On the device that signed up (the verifier) the password applies.
    owner = unique("owner")
    sign_up_with_verifier(postern, owner, "the owner's own choice")
    status, answer, _ = postern.post("/v1/password/sign-in", {"email": owner, "password": "the owner's own choice"})
    assert status == 200, answer


def metric_lines(postern):
    status, text, _ = postern.get("/metrics", token=ADMIN_TOKEN)
    assert status == 200, (status, text)
    lines = {}
    for line in text.decode().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, value = line.rsplit(" ", 1)
        # Latency sums and buckets are timing, which bench/enumeration measures; counts are not.
        if "_duration_seconds_sum" in name or "_duration_seconds_bucket" in name:
            continue
        lines[name] = float(value)
    return lines


def wait_outbox_idle(postern):
    """Waits until the outbox has nothing left to do, reading the database itself: polling
    /metrics would move its own request counters a different number of times per address."""
    import sqlite3
    import time
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with sqlite3.connect(f"file:{postern.database}?mode=ro", uri=True) as db:
            busy = db.execute("SELECT count(*) FROM outbox WHERE state NOT IN ('sent', 'dead')").fetchone()[0]
        if busy == 0:
            return
        time.sleep(0.1)
    raise AssertionError("the outbox did not drain")


def test_4_metrics_move_the_same_for_known_and_unknown_addresses(postern):
    known = unique("known")
    sign_in(postern, known)
    wait_outbox_idle(postern)
    deltas = []
    for address in (known, unique("unknown")):
        before = metric_lines(postern)
        status, answer, _ = postern.post("/v1/password/reset", {"email": address})
        assert status == 202, answer
        wait_outbox_idle(postern)
        after = metric_lines(postern)
        deltas.append({k: after.get(k, 0) - before.get(k, 0) for k in set(before) | set(after)
                       if after.get(k, 0) != before.get(k, 0)})
    assert deltas[0] == deltas[1], deltas
    assert postern.mailbox.count_for(known) >= 2  # the reset was mailed to the known address
    # Without the admin token nobody reads them on the public listener.
    status, _, _ = postern.get("/metrics")
    assert status in (401, 404), status


def test_5_pkce_links_complete_only_with_the_verifier(postern):
    victim = unique("pkce")
    verifier, challenge = pkce_pair()
    msg = send_link(postern, victim, codeChallenge=challenge)
    link = action_link(msg, postern.public_url, "signIn")
    status, info, _ = postern.post("/v1/actions/inspect", {"link": link})
    assert status == 200 and info["email"] is None and info["mode"] == "signIn", info
    path = link[len(postern.public_url):]
    status, page, _ = postern.get(path)
    assert status == 200 and b'id="code"' not in page and six_digits(msg).encode() not in page, page[:400]
    status, answer, _ = postern.post("/v1/email-link/complete", {"link": link, "email": victim})
    check_error(answer, status, "INVALID_CODE_VERIFIER", 400)
    status, answer, _ = postern.post("/v1/email-link/complete", {"link": link})
    check_error(answer, status, "INVALID_CODE_VERIFIER", 400)
    # The typed 6-digit code with the address is the way in from another device.
    status, login, _ = postern.post("/v1/email-link/complete", {"code": six_digits(msg), "email": victim})
    assert status == 200 and login["email"] == victim, login
    # And the verifier completes a link on the device that asked.
    msg = send_link(postern, victim, codeChallenge=challenge)
    status, login, _ = postern.post("/v1/email-link/complete",
                                    {"link": action_link(msg, postern.public_url, "signIn"), "codeVerifier": verifier})
    assert status == 200, login


def test_6_wrong_passwords_then_the_right_one_is_refused(postern):
    owner = unique("owner")
    sign_up_with_verifier(postern, owner, "the real password")
    for address in (owner, unique("nobody")):
        statuses = [postern.post("/v1/password/sign-in", {"email": address, "password": f"guess {n}"})[0] for n in range(60)]
        assert statuses[:5] == [400] * 5 and set(statuses[5:]) == {429}, (address, statuses)
    status, answer, _ = postern.post("/v1/password/sign-in", {"email": owner, "password": "the real password"})
    check_error(answer, status, "TOO_MANY_ATTEMPTS_TRY_LATER", 429)


def test_6_concurrent_guesses_cannot_share_one_check(postern):
    """40 wrong guesses at once (passwords, then 6-digit codes): the budget is taken in the same
    write as the check, so at most the 5 free ones are even tried."""
    def burst(path, body_of):
        results = []
        lock = threading.Lock()
        barrier = threading.Barrier(40)

        def guess(n):
            barrier.wait()
            status = postern.post(path, body_of(n))[0]
            with lock:
                results.append(status)

        threads = [threading.Thread(target=guess, args=(n,)) for n in range(40)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return results

    owner = unique("owner")
    sign_up_with_verifier(postern, owner, "the real password")
    passwords = burst("/v1/password/sign-in", lambda n: {"email": owner, "password": f"guess {n}"})
    assert passwords.count(400) <= 5 and passwords.count(400) + passwords.count(429) == 40, passwords
    victim = unique("victim")
    codes = burst("/v1/email-link/complete", lambda n: {"code": f"{n:06d}", "email": victim})
    assert codes.count(400) <= 5 and codes.count(400) + codes.count(429) == 40, codes


def test_9_every_database_file_is_0600(postern):
    sign_in(postern, unique("files"))
    names = [n for n in os.listdir(postern.work) if n.startswith("postern.")]
    assert {"postern.db", "postern.db-wal", "postern.db-shm", "postern.key"} <= set(names), names
    for name in names:
        mode = stat.S_IMODE(os.stat(os.path.join(postern.work, name)).st_mode)
        assert mode == 0o600, (name, oct(mode))


def test_10_continue_url_origin_and_parameters(postern):
    for bad in ("https://app.example.com:8443/finish", "https://app.example.com/finish?oobCode=EVIL",
                "https://app.example.com/finish?mode=signIn", "https://app.example.com/finish?apiKey=x",
                "https://app.example.com/finish?lang=de"):
        status, answer, _ = postern.post("/v1/email-link/send", {"email": unique("c"), "continueUrl": bad})
        check_error(answer, status, "INVALID_CONTINUE_URI", 400)
    send_link(postern, unique("c"), continueUrl="https://app.example.com/finish?tab=1")


def test_10_an_address_no_mail_can_carry_is_refused(postern):
    for address in ('"<evil@evil.com>"@example.com', '"a b"@example.com'):
        for path in ("/v1/email-link/send", "/v1/password/reset"):
            status, answer, _ = postern.post(path, {"email": address})
            check_error(answer, status, "INVALID_EMAIL", 400)


def test_10_a_high_s_twin_of_an_id_token_is_refused(postern):
    login = sign_in(postern, unique("ecdsa"))
    token = login["session"]["idToken"]
    head, payload, signature = token.split(".")
    raw = base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4))
    n = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
    s = int.from_bytes(raw[32:], "big")
    assert s <= n // 2, "the daemon issued a high-S signature"
    twin = ".".join([head, payload, b64url(raw[:32] + (n - s).to_bytes(32, "big"))])
    assert postern.get("/v1/me", token=token)[0] == 200
    status, answer, _ = postern.get("/v1/me", token=twin)
    check_error(answer, status, "INVALID_ID_TOKEN", 401)


def test_10_two_tabs_refreshing_at_once_keep_the_session(postern):
    login = sign_in(postern, unique("tabs"))
    token = login["session"]["refreshToken"]
    results = [None, None]
    barrier = threading.Barrier(2)

    def refresh(index):
        barrier.wait()
        results[index] = postern.post("/v1/token", {"refreshToken": token})[:2]

    threads = [threading.Thread(target=refresh, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r[0] for r in results] == [200, 200], results
    assert results[0][1]["refreshToken"] == results[1][1]["refreshToken"], results
    status, session, _ = postern.post("/v1/token", {"refreshToken": results[0][1]["refreshToken"]})
    assert status == 200, session


def test_10_a_password_reset_ends_open_sign_in_links(postern):
    owner = unique("owner")
    sign_up_with_verifier(postern, owner, "the first password")
    open_msg = send_link(postern, owner)
    status, answer, _ = postern.post("/v1/password/reset", {"email": owner})
    assert status == 202, answer
    reset = action_link(postern.mailbox.next(owner), postern.public_url, "resetPassword")
    status, answer, _ = postern.post("/v1/actions/apply", {"link": reset, "newPassword": "the second password"})
    assert status == 200, answer
    status, answer, _ = postern.post("/v1/email-link/complete", {"link": action_link(open_msg, postern.public_url, "signIn")})
    check_error(answer, status, "LINK_SUPERSEDED", 400)
    status, answer, _ = postern.post("/v1/email-link/complete", {"code": six_digits(open_msg), "email": owner})
    check_error(answer, status, "INVALID_OOB_CODE", 400)


def test_11_a_forwarded_link_changes_no_signed_in_account(postern):
    """The attacker asks for a link to a fresh address of theirs and forwards it; the victim's app
    completes it with the victim's session. Before, the victim's account took the attacker's address
    and the attacker's next link to it signed in to the victim's account."""
    victim = unique("victim")
    login = sign_in(postern, victim)
    evil = unique("evil")
    forwarded = action_link(send_link(postern, evil), postern.public_url, "signIn")
    status, answer, _ = postern.post("/v1/email-link/complete", {"link": forwarded, "idToken": login["session"]["idToken"]})
    check_error(answer, status, "LINK_OTHER_SESSION", 409)
    status, me, _ = postern.get("/v1/me", token=login["session"]["idToken"])
    assert status == 200 and me["email"] == victim, me
    # The same with the session as a bearer token, and for a guest session (its data would go along).
    status, answer, _ = postern.post("/v1/email-link/complete", {"link": forwarded}, token=login["session"]["idToken"])
    check_error(answer, status, "LINK_OTHER_SESSION", 409)
    status, guest, _ = postern.post("/v1/accounts/anonymous", {})
    assert status == 200, guest
    status, answer, _ = postern.post("/v1/email-link/complete", {"link": forwarded, "idToken": guest["idToken"]})
    check_error(answer, status, "LINK_OTHER_SESSION", 409)
    # Nothing was consumed: the attacker's own sign-in with it is a new account, not the victim's.
    status, own, _ = postern.post("/v1/email-link/complete", {"link": forwarded})
    assert status == 200 and own["uid"] != login["uid"] and own["isNewUser"] is True, own
    # The victim linking an address of their own, asked from the same session: still works.
    mine = unique("mine")
    msg = send_link(postern, mine, idToken=login["session"]["idToken"])
    status, linked, _ = postern.post("/v1/email-link/complete",
                                     {"link": action_link(msg, postern.public_url, "signIn"), "idToken": login["session"]["idToken"]})
    assert status == 200 and linked["uid"] == login["uid"], linked
