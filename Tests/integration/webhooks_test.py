"""Webhooks (issue 15 point 1) against a real `postern serve`: SQLite in a temp dir, mail as
files (or a real SMTP server, aiosmtpd), local HTTP receivers on free loopback ports. Run by
webhooks.sh, which checks that every test ran and none skipped.

Each receiver verifies every delivery with `standardwebhooks` (the reference library of
standardwebhooks.com) under each secret it holds (both of a rotation), and records it by its
`webhook-id`. The daemons retry with `--webhook-retry-base 1`.

1. A scripted run of every account and session event, with the receiver down for 30 s in the
   middle: everything arrives, none lost, each event once by id.
2. Endpoints added by `postern webhooks add` and `POST /v1/admin/webhooks`, with filters, a
   rotation, a test event, a removal; mail.deferred (a 451), mail.sent and mail.failed (a 550)
   from a real SMTP server; the secrets shown once and never in the database in the clear. And
   the delivery log (point 2): the message answered 451 then 250 shows both attempts in
   `postern outbox show` and `GET /v1/admin/outbox/{id}`, `outbox find --email` finds it by the
   keyed hash, and no row of the log holds an address.
3. `kill -9` of the daemon while deliveries are in flight: after a restart every event arrives,
   the repeated ones with their webhook-id and body unchanged.
3b. Without --allow-private-targets (the others allow 127.0.0.1/32, where their receivers are):
   a URL at a loopback, link-local, private or multicast address, in any spelling, is refused by
   the API and the CLI; `localhost` is taken, and refused as curl connects, logged clearly.
4. Across the three, every event type Postern has was delivered and verified.

Environment: POSTERN_BIN (the postern binary), E2E_WORK (a temp dir; pytest_lib.bash sets both).
"""
import base64
import hashlib
import json
import os
import secrets
import tempfile
import time

import subprocess
import sys

import pytest

from postern_daemon import HERE, LOOPBACK_TARGETS, Daemon, action_link, free_port, remember_group, wait_for
from signed_receiver import SignedReceiver

SECRET_OLD = "whsec_" + base64.b64encode(b"the old secret, 32 bytes long..").decode()
SECRET_NEW = "whsec_" + base64.b64encode(b"the new secret, of 32 bytes, too").decode()
ADMIN = "admin-token-for-the-webhook-tests-0123456789"
# Every event type Postern sends (WebhookEvent.types); test 4 checks all were seen.
EVERY_TYPE = {
    "user.created", "user.signed_in", "user.anonymous_upgraded", "user.migrated", "user.email_changed",
    "user.password_changed", "user.password_reset", "user.deleted", "session.refresh_reuse_detected",
    "user.email_verified", "user.email_recovered", "user.profile_updated", "user.disabled", "session.revoked",
    "mail.sent", "mail.deferred", "mail.failed", "mail.bounced", "webhook.test",
}
# The types test 1's scripted run of the account flows causes (with mail as files: no failure).
ALL_TYPES = EVERY_TYPE - {"mail.deferred", "mail.failed", "mail.bounced", "webhook.test"}
SEEN = set()


class Receiver(SignedReceiver):
    """A webhook endpoint (``SignedReceiver``: every secret verifies, one signature each): records
    by webhook-id and answers 204. `down()` closes the port (connections are refused); `up()`
    listens on it again."""

    def __init__(self, port, secrets=(SECRET_OLD, SECRET_NEW), delay=0):
        self.delay = delay            # seconds before answering (deliveries in flight)
        self.events = {}      # webhook-id → parsed body
        self.bodies = {}      # webhook-id → raw body (a redelivery must repeat it exactly)
        self.arrivals = []    # webhook-id of every request, verified, in order (answered or not)
        self.deliveries = 0
        super().__init__(secrets, port=port, path="/hooks", on_verified=self.record)

    def record(self, headers, payload, body):
        wid = headers["webhook-id"]
        with self.lock:
            self.arrivals.append(wid)
            if self.bodies.get(wid, body) != body:
                self.rejected.append(f"a redelivery of {wid} changed its body")
            self.bodies[wid] = body
        if self.delay:
            time.sleep(self.delay)
        with self.lock:
            self.deliveries += 1
            self.events[wid] = payload
        return 204

    def types(self):
        with self.lock:
            return [event["type"] for event in self.events.values()]

    def of_type(self, kind):
        with self.lock:
            return [event for event in self.events.values() if event["type"] == kind]


@pytest.fixture(scope="module")
def work():
    path = os.environ.get("E2E_WORK") or tempfile.mkdtemp(prefix="postern-webhooks-")
    os.makedirs(path, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def receiver():
    r = Receiver(free_port())
    yield r
    try:
        r.down()
    except Exception:  # noqa: BLE001 — it may be down already
        pass


@pytest.fixture(scope="module")
def postern(work, receiver):
    secret_file = os.path.join(work, "webhook-secrets")
    with open(secret_file, "w") as f:
        f.write(f"# rotating: both sign until the receiver has the new one\n{SECRET_OLD}\n{SECRET_NEW}\n")
    os.chmod(secret_file, 0o600)
    daemon = Daemon(work, "webhooks", "--webhook-urls", receiver.url, "--webhook-secret-file", secret_file,
                    "--webhook-retry-base", "1", "--webhook-timeout", "5", "--admin-token", ADMIN, "--mail-interval", "0",
                    *LOOPBACK_TARGETS)
    yield daemon
    assert daemon.stop() == 0


def complete_link(postern, address, mode="signIn", **extra):
    link = action_link(postern.mailbox.next(address), postern.public_url, mode)
    return postern.post("/v1/email-link/complete", {"link": link, **extra})


def settled(daemon):
    """Whether `daemon` has no mail and no webhook delivery left to act on: then nothing more can
    reach a receiver. Read in one scrape, the outbox before the deliveries: a mail.* event is
    queued in the transaction that records its mail's outcome, and a delivery is recorded sent
    only after the receiver recorded it (before its 204), so every event there is, is there."""
    metrics = daemon.metrics()
    return daemon.unfinished("postern_outbox_messages", metrics) == 0 and \
        daemon.unfinished("postern_webhook_deliveries", metrics) == 0


def test_every_event_verified_and_none_lost_while_the_receiver_is_down(postern, receiver):
    a, b, c = "ada@example.com", "bob@example.com", "cy@example.com"
    # With the receiver up: an anonymous account upgraded by a sign-up on its device.
    status, anonymous, _ = postern.post("/v1/accounts/anonymous")
    assert status == 200, anonymous
    verifier = secrets.token_urlsafe(32)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    status, _, _ = postern.post("/v1/password/sign-up", {
        "email": a, "password": "correct horse battery", "idToken": anonymous["idToken"], "codeChallenge": challenge})
    assert status == 202
    status, upgraded, _ = complete_link(postern, a, codeVerifier=verifier)
    assert status == 200 and upgraded["uid"] == anonymous["uid"], upgraded
    status, signed_in, _ = postern.post("/v1/password/sign-in", {"email": a, "password": "correct horse battery"})
    assert status == 200, signed_in
    status, _, _ = postern.post("/v1/me/password", {"password": "another horse battery"},
                                token=signed_in["session"]["idToken"])
    assert status == 200
    postern.mailbox.next(a)  # the "password changed" notice
    wait_for(lambda: {"user.created", "user.signed_in", "user.anonymous_upgraded", "user.password_changed"}
             <= set(receiver.types()), 20, "the first events")

    # The receiver goes down; everything from here on is queued while it is.
    receiver.down()
    down_at = time.monotonic()
    failed_before = postern.metrics().get('postern_webhook_attempts_total{outcome="failed"}', 0)
    status, _, _ = postern.post("/v1/password/reset", {"email": a})
    assert status == 202
    link = action_link(postern.mailbox.next(a), postern.public_url, "resetPassword")
    status, _, _ = postern.post("/v1/actions/apply", {"link": link, "newPassword": "a third horse battery"})
    assert status == 200
    status, bob, _ = postern.post("/v1/email-link/send", {"email": b})
    assert status == 202
    status, bob, _ = complete_link(postern, b)
    assert status == 200 and bob["isNewUser"], bob
    status, _, _ = postern.post("/v1/me/email", {"newEmail": c}, token=bob["session"]["idToken"])
    assert status == 202
    link = action_link(postern.mailbox.next(c), postern.public_url, "verifyAndChangeEmail")
    status, _, _ = postern.post("/v1/actions/apply", {"link": link})
    assert status == 200
    status, second, _ = postern.post("/v1/accounts/anonymous")
    assert status == 200
    status, _, _ = postern.post("/v1/email-link/send", {"email": c, "idToken": second["idToken"]})
    assert status == 202
    status, migrated, _ = complete_link(postern, c, idToken=second["idToken"], allowMigration=True)
    assert status == 200 and migrated["migration"]["fromUid"] == second["uid"], migrated
    # A refresh token exchanged twice down the line, then presented again: reuse.
    first = migrated["session"]["refreshToken"]
    status, one, _ = postern.post("/v1/token", {"refreshToken": first})
    assert status == 200
    status, _, _ = postern.post("/v1/token", {"refreshToken": one["refreshToken"]})
    assert status == 200
    status, revoked, _ = postern.post("/v1/token", {"refreshToken": first})
    assert status == 401 and revoked["error"]["code"] == "TOKEN_REVOKED", revoked
    # Bob (now c) signs in again by link: his profile, an address unverified by an operator and
    # verified by its link, a sign-out, then the recovery link his old address got, and a disable.
    status, _, _ = postern.post("/v1/email-link/send", {"email": c})
    assert status == 202
    status, again, _ = complete_link(postern, c)
    assert status == 200 and again["uid"] == bob["uid"], again
    token = again["session"]["idToken"]
    status, _, _ = postern.request("PATCH", "/v1/me", {"displayName": "Bob Example", "attributes": {"plan": "gold"}}, token=token)
    assert status == 200
    status, _, _ = postern.request("PATCH", f"/v1/admin/users/{bob['uid']}", {"emailVerified": False}, token=ADMIN)
    assert status == 200
    status, _, _ = postern.post("/v1/me/verify-email", {}, token=token)
    assert status == 202
    link = action_link(postern.mailbox.next(c), postern.public_url, "verifyEmail")
    status, _, _ = postern.post("/v1/actions/apply", {"link": link})
    assert status == 200
    status, _, _ = postern.post("/v1/sign-out", {"refreshToken": again["session"]["refreshToken"]})
    assert status == 204
    link = action_link(postern.mailbox.next(b), postern.public_url, "recoverEmail")
    status, _, _ = postern.post("/v1/actions/apply", {"link": link})
    assert status == 200
    status, _, _ = postern.request("PATCH", f"/v1/admin/users/{bob['uid']}", {"disabled": True}, token=ADMIN)
    assert status == 200
    status, fresh, _ = postern.post("/v1/password/sign-in", {"email": a, "password": "a third horse battery"})
    assert status == 200
    status, _, _ = postern.request("DELETE", "/v1/me", token=fresh["session"]["idToken"])
    assert status == 204
    before = len(receiver.types())
    # Down for 30 s: the retries (1, 2, 4, 8, 16 s apart) all fail meanwhile. A deliberate outage
    # (the scenario is a receiver down for that long, the backoff grown past it), not a wait for
    # an absence: the daemon's failed attempts show it tried meanwhile.
    time.sleep(max(0, 30 - (time.monotonic() - down_at)))
    assert postern.metrics()['postern_webhook_attempts_total{outcome="failed"}'] > failed_before, "no retry while down"
    assert len(receiver.types()) == before, "delivered while the receiver was down"
    assert receiver.rejected == []
    receiver.up()

    # Everything arrives, each event once by webhook-id, every type of the run among them.
    expected = {
        "user.created": 3,              # anonymous, bob, the second anonymous
        "user.signed_in": 8,            # anonymous, upgrade, password ×2, bob ×2, migration, the second anonymous
        "user.anonymous_upgraded": 1,
        "user.password_changed": 1,
        "user.password_reset": 1,
        "user.email_changed": 1,
        "user.migrated": 1,
        "session.refresh_reuse_detected": 1,
        "user.deleted": 1,
        "user.profile_updated": 1,
        "user.email_verified": 1,
        "user.email_recovered": 1,
        "user.disabled": 1,
        "session.revoked": 6,           # password change, reset, sign-out, address change, recovery, disable
        # One per mail the file transport wrote (each is "sent").
        "mail.sent": len(postern.mailbox._messages()),
    }
    total = sum(expected.values())
    # After 30 s down the next retry may be 32 s away.
    wait_for(lambda: len(receiver.types()) >= total, 90, f"{total} events")
    wait_for(lambda: settled(postern), 30, "no mail or delivery left to send")  # nothing more may come
    types = receiver.types()
    assert not receiver.rejected, receiver.rejected
    assert set(types) == ALL_TYPES, set(types) ^ ALL_TYPES
    assert {kind: types.count(kind) for kind in ALL_TYPES} == expected
    assert len(types) == total

    # Thin payloads, as docs/API.md says: ids, kinds and times; the address only where named.
    (migration,) = receiver.of_type("user.migrated")
    assert migration["data"] == {"fromUid": second["uid"], "toUid": bob["uid"]}
    (change,) = receiver.of_type("user.email_changed")
    assert change["data"] == {"uid": bob["uid"], "email": c}
    (upgrade,) = receiver.of_type("user.anonymous_upgraded")
    assert upgrade["data"] == {"uid": anonymous["uid"], "email": a}
    (deleted,) = receiver.of_type("user.deleted")
    assert deleted["data"] == {"uid": anonymous["uid"]}
    (profile,) = receiver.of_type("user.profile_updated")
    assert profile["data"] == {"uid": bob["uid"], "fields": ["displayName", "attributes"]}
    (recovered,) = receiver.of_type("user.email_recovered")
    assert recovered["data"] == {"uid": bob["uid"], "email": b}
    assert sorted(e["data"]["reason"] for e in receiver.of_type("session.revoked")) == sorted(
        ["passwordChanged", "passwordReset", "signOut", "emailChanged", "emailRecovered", "disabled"])
    for sent in receiver.of_type("mail.sent"):
        assert set(sent["data"]) == {"messageId", "kind", "attempts"}, sent  # no address
    SEEN.update(types)
    for body in receiver.bodies.values():
        text = body.decode()
        assert "horse" not in text and "oobCode" not in text and first not in text
        assert "Bob Example" not in text and "gold" not in text
    # Redeliveries reuse the id; each stored row was delivered.
    assert receiver.deliveries >= len(types)


def start_smtp(work, *args):
    """aiosmtpd (smtp_server.py) on a free port; returns (process, port)."""
    port = free_port()
    out = os.path.join(work, f"smtp-{port}")
    log = open(os.path.join(work, f"smtp-{port}.log"), "w")
    process = subprocess.Popen([sys.executable, os.path.join(HERE, "smtp_server.py"), "--port", str(port), "--out", out, *args],
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    remember_group(process.pid)
    import socket
    def listening():
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", port)) == 0
    wait_for(listening, 20, "the SMTP server")
    return process, port


def test_added_endpoints_filters_rotation_test_event_and_mail_events(work):
    smtp, smtp_port = start_smtp(work, "--fail-seconds", "15", "--fail-code", "451", "--reject-prefix", "reject")
    filtered = Receiver(free_port(), secrets=())
    everything = Receiver(free_port(), secrets=())
    daemon = Daemon(work, "added", "--smtp-url", f"smtp+plain://127.0.0.1:{smtp_port}", "--webhook-retry-base", "1",
                    "--admin-token", ADMIN, *LOOPBACK_TARGETS)
    try:
        # One endpoint by the CLI with a filter, one by the admin API for every event.
        code, out, err = daemon.cli("webhooks", "add", filtered.url, "--events", "mail.*,user.created", "--json")
        assert code == 0, (out, err)
        added = json.loads(out)
        assert added["endpoint"]["events"] == ["mail.bounced", "mail.deferred", "mail.failed", "mail.sent", "user.created"]
        assert added["secret"].startswith("whsec_")
        filtered.secrets = [added["secret"]]
        status, api, _ = daemon.post("/v1/admin/webhooks", {"url": everything.url}, token=ADMIN)
        assert status == 201 and api["endpoint"]["events"] == ["*"] and api["endpoint"]["source"] == "api", api
        everything.secrets = [api["secret"]]
        # Mail: one deferred by the 451 of the first seconds, then sent; one refused for good (550).
        # Sent before the checks below: the server's 15 s of 451s count from its start, and the
        # checks' CLI runs used them up on a busy machine.
        status, _, _ = daemon.post("/v1/email-link/send", {"email": "later@example.com"})
        assert status == 202
        status, _, _ = daemon.post("/v1/email-link/send", {"email": "reject-me@example.com"})
        assert status == 202
        status, _, _ = daemon.post("/v1/accounts/anonymous")
        assert status == 200
        # Bad input is refused, clearly: a bad URL, an unknown type, no token.
        status, refused, _ = daemon.post("/v1/admin/webhooks", {"url": "https://u:p@app.example/"}, token=ADMIN)
        assert status == 400 and refused["error"]["code"] == "INVALID_ARGUMENT", refused
        # A URL whose host is none: what schemathesis once got stored and echoed (its own
        # urlsplit then crashed: "Invalid IPv6 URL"), brackets around no IPv6 address, a port that
        # is none, a host NFKC splits (／ is /). Refused, by the API and the CLI, and never listed.
        for bad in ["http://\x9c\u0116]\u2f76\xa3", "http://[ab", "https://[::1/", "http://a]b/", "http://[zz]/",
                    "http://ab:65536/", "http://ab\uff0fc/"]:
            status, refused, _ = daemon.post("/v1/admin/webhooks", {"url": bad}, token=ADMIN)
            assert status == 400 and refused["error"]["code"] == "INVALID_ARGUMENT", (bad, refused)
            assert "IPv6 address in brackets" in refused["error"]["message"], (bad, refused)
        code, _, err = daemon.cli("webhooks", "add", "http://[ab")
        assert code == 64 and "IPv6 address in brackets" in err, err
        status, refused, _ = daemon.post("/v1/admin/webhooks", {"url": "https://app.example/", "events": ["user.nothing"]}, token=ADMIN)
        assert status == 400, refused
        status, _, _ = daemon.post("/v1/admin/webhooks", {"url": "https://app.example/"})
        assert status == 401
        code, _, err = daemon.cli("webhooks", "add", "ftp://app.example/")
        assert code == 64, err
        code, _, err = daemon.cli("webhooks", "add", filtered.url, "--events", "user.nothing")
        assert code == 64 and "user.nothing" in err, err

        # Never a secret in a listing, nor in the database file in the clear.
        code, listing, _ = daemon.cli("webhooks", "list", "--json")
        assert code == 0
        status, listed, _ = daemon.get("/v1/admin/webhooks", token=ADMIN)
        assert status == 200 and sorted(e["url"] for e in listed["endpoints"]) == sorted([filtered.url, everything.url])
        raw = b""
        for suffix in ("", "-wal"):
            if os.path.exists(daemon.database + suffix):
                raw += open(daemon.database + suffix, "rb").read()
        for secret in (added["secret"], api["secret"]):
            assert secret not in listing and secret not in json.dumps(listed)
            key = base64.b64decode(secret[6:])
            assert secret.encode() not in raw and key not in raw and secret[6:].encode() not in raw

        # 451 for the server's first 15 s; the outbox's first retry is 30 s (less jitter) after.
        wait_for(lambda: {"mail.deferred", "mail.failed", "mail.sent"} <= set(filtered.types()), 75, "the mail events")
        wait_for(lambda: {"mail.deferred", "mail.failed", "mail.sent", "user.created", "user.signed_in"} <= set(everything.types()),
                 30, "every event at the unfiltered endpoint")
        assert "user.signed_in" not in filtered.types(), "the filter let user.signed_in through"
        (failed,) = filtered.of_type("mail.failed")
        assert failed["data"]["email"] == "reject-me@example.com" and failed["data"]["kind"] == "sign-in", failed
        deferred = [e for e in filtered.of_type("mail.deferred") if e["data"]["attempts"] == 1]
        assert deferred and "email" not in deferred[0]["data"]
        sent = [e for e in filtered.of_type("mail.sent") if e["data"]["messageId"] == deferred[0]["data"]["messageId"]]
        assert sent and sent[0]["data"]["attempts"] >= 2, sent

        # The delivery log (issue 15 point 2): the message answered 451, then 250, shows both
        # attempts, by `postern outbox show` and by the admin API alike.
        later_id = deferred[0]["data"]["messageId"]
        code, out, err = daemon.cli("outbox", "show", str(later_id), "--json")
        assert code == 0, err
        detail = json.loads(out)
        attempts = detail["attempts"]
        assert [a["replyCode"] for a in attempts][-1] == 250 and set(a["replyCode"] for a in attempts[:-1]) == {451}, attempts
        assert [a["outcome"] for a in attempts] == ["deferred"] * (len(attempts) - 1) + ["sent"]
        assert all(a["transport"] == f"smtp+plain://127.0.0.1:{smtp_port}" and a["durationMs"] >= 0 for a in attempts)
        assert attempts[0]["reply"].startswith("451") and attempts[-1]["reply"].startswith("250"), attempts
        assert attempts[-1]["attemptedAt"] > attempts[0]["attemptedAt"]
        status, api_detail, _ = daemon.get(f"/v1/admin/outbox/{later_id}", token=ADMIN)
        assert status == 200 and api_detail == detail, api_detail
        status, missing, _ = daemon.get("/v1/admin/outbox/999999", token=ADMIN)
        assert status == 404 and missing["error"]["code"] == "NOT_FOUND"
        code, text, _ = daemon.cli("outbox", "show", str(later_id))
        assert code == 0 and "451" in text and "250" in text, text
        # Found by address (any case), through the keyed hash; the refused one too, 550 cleaned.
        code, out, err = daemon.cli("outbox", "find", "--email", "LATER@example.com", "--json")
        assert code == 0 and [m["id"] for m in json.loads(out)["messages"]] == [later_id], (out, err)
        failed_id = failed["data"]["messageId"]
        code, out, _ = daemon.cli("outbox", "show", str(failed_id), "--json")
        (refusal,) = json.loads(out)["attempts"]
        assert refusal["replyCode"] == 550 and refusal["outcome"] == "failed" and "reject-me" not in refusal["reply"], refusal
        code, out, _ = daemon.cli("outbox", "find", "--email", "nobody@example.com")
        assert code == 0 and "no message" in out
        # The log holds no address in the clear: not in any column of any row.
        import sqlite3
        with sqlite3.connect(f"file:{daemon.database}?mode=ro", uri=True) as db:
            rows = db.execute("SELECT * FROM outbox_attempts").fetchall()
        assert len(rows) >= 3
        for row in rows:
            text = " ".join(str(v) for v in row if not isinstance(v, bytes))
            hashed = b"".join(v for v in row if isinstance(v, bytes))
            assert len(hashed) == 16 and b"later" not in hashed and b"reject" not in hashed, row
            assert "@" not in text and "later@" not in text and "reject-me" not in text, row

        # A rotation: the new secret signs beside the old (the receiver checks each alone).
        code, out, err = daemon.cli("webhooks", "rotate-secret", api["endpoint"]["id"], "--json")
        assert code == 0, err
        rotated = json.loads(out)
        assert rotated["secret"] != api["secret"] and rotated["endpoint"]["previousSecretUntil"]
        everything.secrets = [rotated["secret"], api["secret"]]
        # The test event, delivered through the running daemon; the CLI waits for its outcome.
        code, out, err = daemon.cli("webhooks", "test", api["endpoint"]["id"], "--wait", "20")
        assert code == 0 and "delivered" in out, (out, err)
        assert everything.of_type("webhook.test") and not filtered.of_type("webhook.test")
        status, answer, _ = daemon.post(f"/v1/admin/webhooks/{added['endpoint']['id']}/test", {}, token=ADMIN)
        assert status == 202, answer
        wait_for(lambda: filtered.of_type("webhook.test"), 20, "the filtered endpoint's test event")
        assert everything.rejected == [] and filtered.rejected == []

        # Removed: nothing more reaches it; unknown ids are 404 / exit 65.
        status, _, _ = daemon.request("DELETE", f"/v1/admin/webhooks/{added['endpoint']['id']}", token=ADMIN)
        assert status == 204
        status, _, _ = daemon.request("DELETE", f"/v1/admin/webhooks/{added['endpoint']['id']}", token=ADMIN)
        assert status == 404
        code, _, _ = daemon.cli("webhooks", "remove", added["endpoint"]["id"])
        assert code == 65
        count = len(filtered.types())
        status, _, _ = daemon.post("/v1/accounts/anonymous")
        assert status == 200
        wait_for(lambda: len(everything.of_type("user.created")) == 2, 20, "the second user.created")
        # Every delivery queued by then finished (one queued for the removed endpoint would have
        # reached `filtered` before it is recorded sent): the daemon has nothing left to deliver.
        wait_for(lambda: settled(daemon), 30, "no delivery left to send")
        assert len(filtered.types()) == count, "a removed endpoint still got events"
        SEEN.update(filtered.types())
        SEEN.update(everything.types())
    finally:
        assert daemon.stop() == 0
        for r in (filtered, everything):
            r.down()
        smtp.terminate()
        smtp.wait(10)


def test_kill_9_during_delivery_loses_nothing_and_repeats_keep_their_id(work):
    # A slow receiver: each call is answered after 1.5 s, so calls are in flight at the kill.
    receiver = Receiver(free_port(), secrets=(SECRET_OLD,), delay=1.5)
    secret_file = os.path.join(work, "crash-secret")
    with open(secret_file, "w") as f:
        f.write(SECRET_OLD + "\n")
    daemon = Daemon(work, "crash", "--webhook-urls", receiver.url, "--webhook-secret-file", secret_file,
                    "--webhook-retry-base", "1", "--webhook-timeout", "5", *LOOPBACK_TARGETS)
    try:
        for _ in range(6):
            status, _, _ = daemon.post("/v1/accounts/anonymous")
            assert status == 200
        wanted = 12  # user.created and user.signed_in each
        wait_for(lambda: len(receiver.arrivals) >= 2, 20, "calls in flight")
        daemon.kill_hard()
        in_flight = [wid for wid in receiver.arrivals if wid not in receiver.events]
        # The interrupted calls end at the receiver (each answered call counts once).
        wait_for(lambda: receiver.deliveries == len(receiver.arrivals), 20, "the interrupted calls to end")
        daemon.restart()
        wait_for(lambda: len(receiver.events) >= wanted, 60, f"{wanted} events after the restart")
        wait_for(lambda: settled(daemon), 30, "no delivery left to send")  # nothing more may come
        assert len(receiver.events) == wanted, len(receiver.events)
        assert receiver.rejected == []
        # Every event once by id, whatever was repeated; a repeat carried the same id and body.
        repeated = {wid for wid in receiver.arrivals if receiver.arrivals.count(wid) > 1}
        assert repeated, "no delivery was in flight at the kill"
        assert set(in_flight) <= set(receiver.events)
        SEEN.update(receiver.types())
    finally:
        assert daemon.stop() == 0
        receiver.down()


# An admin's URL at the machine itself, its cloud's metadata service or the private network, in
# the spellings a resolver reads (SSRF). The test daemon here has no --allow-private-targets.
PRIVATE_SPELLINGS = [
    "http://127.0.0.1/hook", "http://0x7f000001/hook", "http://2130706433/hook", "http://127.1/hook",
    "http://169.254.169.254/latest/meta-data/", "http://[::1]/hook", "http://[::ffff:127.0.0.1]/hook",
    "http://10.1.2.3/hook", "http://192.168.0.1/hook", "http://100.64.0.1/hook", "http://[fc00::1]/hook",
    "http://[fd00:ec2::254]/", "http://0.0.0.0/hook",
]


def test_private_targets_are_refused_at_registration_and_at_connect(work):
    receiver = Receiver(free_port(), secrets=())
    daemon = Daemon(work, "ssrf", "--admin-token", ADMIN, "--webhook-retry-base", "1")
    try:
        for url in PRIVATE_SPELLINGS:
            status, refused, _ = daemon.post("/v1/admin/webhooks", {"url": url}, token=ADMIN)
            assert status == 400 and refused["error"]["code"] == "INVALID_ARGUMENT", (url, status, refused)
            assert "--allow-private-targets" in refused["error"]["message"], (url, refused)
            code, _, err = daemon.cli("webhooks", "add", url)
            assert code != 0 and "--allow-private-targets" in err, (url, code, err)
        status, listed, _ = daemon.get("/v1/admin/webhooks", token=ADMIN)
        assert status == 200 and listed["endpoints"] == [], listed
        # A name that resolves to loopback passes the URL's check, and is refused as curl connects:
        # nothing reaches the receiver, and the log names the address, not the URL's query.
        url = f"http://localhost:{receiver.port}/hooks?token=s3cr3t-in-url"
        status, added, _ = daemon.post("/v1/admin/webhooks", {"url": url}, token=ADMIN)
        assert status == 201, added
        status, answer, _ = daemon.post(f"/v1/admin/webhooks/{added['endpoint']['id']}/test", {}, token=ADMIN)
        assert status == 202, answer
        # The first attempt and its retry (after 1 s), both refused.
        wait_for(lambda: open(daemon.log_path).read().count("is a loopback address") >= 2, 30, "two refused attempts in the log")
        log = open(daemon.log_path).read()
        assert "--allow-private-targets" in log and "s3cr3t-in-url" not in log
        assert receiver.arrivals == [] and receiver.deliveries == 0
    finally:
        assert daemon.stop() == 0
        receiver.down()


def test_every_event_type_was_delivered_and_verified():
    # mail.bounced needs a relay's delivery report: bounces.sh verifies it with the same library.
    assert SEEN == EVERY_TYPE - {"mail.bounced"}, (EVERY_TYPE - {"mail.bounced"}) ^ SEEN
