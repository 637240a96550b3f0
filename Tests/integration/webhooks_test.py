"""Webhooks (issue 15 point 1) against a real `postern serve`: SQLite in a temp dir, mail as
files, a local HTTP receiver on a free loopback port. Run by webhooks.sh, which checks that every
test ran and none skipped.

The receiver verifies each delivery with `standardwebhooks` (the reference library of
standardwebhooks.com) under each of the two secrets of a rotation, and records it by its
`webhook-id`. The daemon retries with `--webhook-retry-base 1`, so the 5-second outage costs
seconds, not minutes.

Environment: POSTERN_BIN (the postern binary), E2E_WORK (a temp dir; pytest_lib.bash sets both).
"""
import base64
import hashlib
import http.server
import json
import os
import secrets
import tempfile
import threading
import time

import pytest
import standardwebhooks

from postern_daemon import Daemon, action_link, free_port, wait_for

SECRET_OLD = "whsec_" + base64.b64encode(b"the old secret, 32 bytes long..").decode()
SECRET_NEW = "whsec_" + base64.b64encode(b"the new secret, of 32 bytes, too").decode()
ALL_TYPES = {
    "user.created", "user.signed_in", "user.anonymous_upgraded", "user.migrated", "user.email_changed",
    "user.password_changed", "user.password_reset", "user.deleted", "session.refresh_reuse_detected",
}


class Receiver:
    """A webhook endpoint: verifies, records by webhook-id, answers 204. `down()` closes the
    port (connections are refused); `up()` listens on it again."""

    def __init__(self, port):
        self.port = port
        self.url = f"http://127.0.0.1:{port}/hooks"
        self.lock = threading.Lock()
        self.events = {}      # webhook-id → parsed body
        self.bodies = {}      # webhook-id → raw body (a redelivery must repeat it exactly)
        self.deliveries = 0
        self.rejected = []
        self.server = None
        self.up()

    def handler(self):
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                headers = {k.lower(): v for k, v in self.headers.items()}
                try:
                    # Each secret alone verifies: both signatures are on every attempt.
                    payload = None
                    for secret in (SECRET_OLD, SECRET_NEW):
                        payload = standardwebhooks.Webhook(secret).verify(body, headers)
                    assert headers["content-type"] == "application/json"
                    assert len(headers["webhook-signature"].split(" ")) == 2
                except Exception as error:  # noqa: BLE001 — any failure is a rejected delivery
                    with receiver.lock:
                        receiver.rejected.append(repr(error))
                    self.send_response(400)
                    self.end_headers()
                    return
                with receiver.lock:
                    receiver.deliveries += 1
                    wid = headers["webhook-id"]
                    assert receiver.bodies.get(wid, body) == body, "a redelivery changed its body"
                    receiver.bodies[wid] = body
                    receiver.events[wid] = payload
                self.send_response(204)
                self.end_headers()

        return Handler

    def up(self):
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), self.handler())
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def down(self):
        self.server.shutdown()
        self.server.server_close()

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
                    "--webhook-retry-base", "1", "--webhook-timeout", "5")
    yield daemon
    assert daemon.stop() == 0


def complete_link(postern, address, mode="signIn", **extra):
    link = action_link(postern.mailbox.next(address), postern.public_url, mode)
    return postern.post("/v1/email-link/complete", {"link": link, **extra})


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
    status, _, _ = postern.post("/v1/email-link/send", {"email": c})
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
    status, fresh, _ = postern.post("/v1/password/sign-in", {"email": a, "password": "a third horse battery"})
    assert status == 200
    status, _, _ = postern.request("DELETE", "/v1/me", token=fresh["session"]["idToken"])
    assert status == 204
    before = len(receiver.types())
    time.sleep(max(0, 5 - (time.monotonic() - down_at)))
    assert len(receiver.types()) == before, "delivered while the receiver was down"
    receiver.up()

    # Everything arrives, each event once by webhook-id, every type of the run among them.
    expected = {
        "user.created": 3,              # anonymous, bob, the second anonymous
        "user.signed_in": 7,            # anonymous, upgrade, password ×2, bob, migration, the second anonymous
        "user.anonymous_upgraded": 1,
        "user.password_changed": 1,
        "user.password_reset": 1,
        "user.email_changed": 1,
        "user.migrated": 1,
        "session.refresh_reuse_detected": 1,
        "user.deleted": 1,
    }
    total = sum(expected.values())
    wait_for(lambda: len(receiver.types()) >= total, 60, f"{total} events")
    time.sleep(2)  # nothing more may come
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
    for body in receiver.bodies.values():
        text = body.decode()
        assert "horse" not in text and "oobCode" not in text and first not in text
    # Redeliveries reuse the id; each stored row was delivered.
    assert receiver.deliveries >= len(types)
