"""Attacks on the HTTP layer, against a real `postern serve` (SQLite in a temp dir, mail as files,
free loopback ports). Run by attack-http.sh, which checks that every test ran and none skipped.

- 2,000 slow connections from 127.0.0.1 trickling headers: the per-IP cap refuses all but a few
  dozen at once, a client on 127.0.0.2 is still answered /healthz within 2 s, and the held ones
  are cut by the request deadline although they never fall silent.
- A spoofed leftmost X-Forwarded-For entry does not escape the per-IP rate limit, with
  --trust-proxy and with --trusted-proxies 127.0.0.1/32.
- Content-Length with Transfer-Encoding, and two different Content-Lengths: 400, the connection
  closes, and nothing after the body is answered as a second request. So with whitespace between
  any header's name and its colon (`Content-Length : 46`).
- A JSON body as text/plain (or with no type): 415, and no mail queued.
- /metrics on the main listener: 404 with no admin token configured, 401 with a wrong one, 200
  with the right one; past 10 wrong admin tokens from one address, 429 for it (the right token
  too) while another address gets in; the metrics listener serves it; a busy metrics port stops the start.
- A path parameter with an encoded `?` (`%3F`) reaches its route (not 404 "no endpoint").
- A path parameter is decoded once, after the path is split: an imported uid holding `/` is
  reached as `%2F`, and `a%2541` names the uid `a%41`, never the user `aA` (decoded twice, an
  admin's PATCH or DELETE of one user changed another); the query is decoded once (`+` a space,
  `%2B` a plus); an encoded NUL is refused (400); `%2F` reaches no fixed path.

Environment: POSTERN_BIN (the postern binary), E2E_WORK (a temp dir; pytest_lib.bash sets both).
"""
import http.client
import json
import os
import resource
import secrets
import select
import socket
import subprocess
import tempfile
import time

import pytest

from postern_daemon import POSTERN, Daemon, free_port, wait_for

ADMIN_TOKEN = "attack-admin-" + secrets.token_hex(8)
REQUEST_TIMEOUT = 3  # --request-timeout of the guarded daemon, seconds
PER_MINUTE = 5  # --ip-per-minute of both daemons

# 2,000 client sockets need more than the usual 1,024 descriptors.
_soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (_hard, _hard))


def call(daemon, method, path, body=None, headers=None, source="127.0.0.1", port=None, timeout=10):
    """One request on a fresh connection from `source` (a loopback address), with exactly the
    headers given (urllib would add a Content-Type): (status, parsed JSON or bytes, headers)."""
    connection = http.client.HTTPConnection("127.0.0.1", port or daemon.port, timeout=timeout,
                                            source_address=(source, 0))
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        raw = response.read()
        answer_headers = {k.lower(): v for k, v in response.getheaders()}
    finally:
        connection.close()
    if raw and answer_headers.get("content-type", "").startswith("application/json"):
        return response.status, json.loads(raw), answer_headers
    return response.status, raw, answer_headers


@pytest.fixture(scope="module")
def work():
    path = os.environ.get("E2E_WORK") or tempfile.mkdtemp(prefix="postern-attack-http-")
    os.makedirs(path, exist_ok=True)
    return path


def stopped_cleanly(daemon):
    code = daemon.stop()
    assert code == 0, f"postern serve exited {code} on SIGTERM:\n{open(daemon.log_path).read()[-3000:]}"
    assert ADMIN_TOKEN not in open(daemon.log_path).read(), "the admin token reached the log"


@pytest.fixture(scope="module")
def guarded(work):
    """--trust-proxy, an admin token, a 3 s request deadline, the default per-IP cap (64), its own
    metrics listener (Daemon gives it a free port)."""
    daemon = Daemon(work, "guarded", "--trust-proxy", "--admin-token", ADMIN_TOKEN,
                    "--request-timeout", str(REQUEST_TIMEOUT), "--ip-per-minute", str(PER_MINUTE),
                    "--mail-interval", "0", "--mail-per-hour", "0", "--mail-domain-per-hour", "0", "--mail-per-hour-total", "0", "--challenge", "off")
    yield daemon
    stopped_cleanly(daemon)


@pytest.fixture(scope="module")
def proxied(work):
    """--trusted-proxies 127.0.0.1/32, no admin token, no metrics listener."""
    daemon = Daemon(work, "proxied", "--trusted-proxies", "127.0.0.1/32", "--ip-per-minute", str(PER_MINUTE),
                    "--metrics-listen", "off")
    yield daemon
    stopped_cleanly(daemon)


def closed_sockets(sockets, wait=0.0):
    """The sockets the server has closed (EOF or reset is readable), after up to `wait` seconds."""
    poller = select.poll()
    by_fd = {s.fileno(): s for s in sockets}
    for fd in by_fd:
        poller.register(fd, select.POLLIN | select.POLLERR | select.POLLHUP)
    closed = set()
    deadline = time.monotonic() + wait
    while True:
        for fd, _ in poller.poll(max(0, int((deadline - time.monotonic()) * 1000))):
            s = by_fd[fd]
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if data == b"":
                closed.add(s)
                poller.unregister(fd)
        if time.monotonic() >= deadline or len(closed) == len(sockets):
            return closed


def healthz_latency(daemon, source):
    start = time.monotonic()
    status, body, _ = call(daemon, "GET", "/healthz", source=source, timeout=5)
    elapsed = time.monotonic() - start
    assert status == 200 and body == {"status": "ok"}, f"/healthz from {source}: {status} {body!r}"
    return elapsed


def test_slow_connections_from_one_address_do_not_stop_the_service(guarded):
    log = open(guarded.log_path).read()
    assert '"fileDescriptorLimit"' in log and '"connectionLimit"' in log, "the start does not log the fd figures"
    count, opened_at, sockets, refused_on_send = 2000, {}, [], 0
    started = time.monotonic()
    for _ in range(count):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.settimeout(5)
        s.connect(("127.0.0.1", guarded.port))
        try:
            s.sendall(b"POST /v1/email-link/send HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n")
        except OSError:
            refused_on_send += 1
        s.setblocking(False)
        opened_at[s] = time.monotonic()
        sockets.append(s)
    connect_time = time.monotonic() - started
    # The daemon closes the refused ones as it accepts them: on a busy machine that takes more
    # than one look.
    refused = closed_sockets(sockets, wait=0.5)
    while len(sockets) - len(refused) > 64 and time.monotonic() - started < REQUEST_TIMEOUT - 1:
        refused |= closed_sockets([s for s in sockets if s not in refused], wait=0.2)
    held = [s for s in sockets if s not in refused]
    for s in refused:
        s.close()
    print(f"\n{count} slow connections opened in {connect_time:.2f}s: {len(held)} held, {len(refused)} refused")
    assert 1 <= len(held) <= 64, f"{len(held)} held: the per-IP cap (64) is not applied"

    # While they trickle a header line every half second, another address is served at once.
    latencies, cut_at = [], {}
    while time.monotonic() - started < REQUEST_TIMEOUT + connect_time + 3:
        for s in held:
            if s in cut_at:
                continue
            try:
                s.send(b"X-Trickle: 1\r\n")
            except OSError:
                cut_at[s] = time.monotonic()
        if time.monotonic() - started < REQUEST_TIMEOUT - 0.5:
            latencies.append(healthz_latency(guarded, "127.0.0.2"))
        for s in closed_sockets([s for s in held if s not in cut_at], wait=0.5):
            cut_at[s] = time.monotonic()
    print(f"/healthz from 127.0.0.2 during the attack: {len(latencies)} calls, max {max(latencies) * 1000:.1f} ms")
    assert latencies and max(latencies) < 2.0, f"/healthz took {max(latencies):.2f}s under the attack"

    # Every held one was cut by the deadline, not before it.
    still_open = [s for s in held if s not in cut_at]
    assert not still_open, f"{len(still_open)} trickling connections outlived the {REQUEST_TIMEOUT}s request deadline"
    lifetimes = [cut_at[s] - opened_at[s] for s in held]
    print(f"held connections cut after {min(lifetimes):.2f}–{max(lifetimes):.2f}s (deadline {REQUEST_TIMEOUT}s)")
    assert min(lifetimes) >= REQUEST_TIMEOUT - 0.6, f"a held connection was closed after {min(lifetimes):.2f}s"
    # (Cuts are seen up to 0.5 s late, after a /healthz call that may itself take a while.)
    assert max(lifetimes) <= REQUEST_TIMEOUT + 4.0
    for s in held:
        s.close()
    # The address is served again once its slow connections are gone.
    assert healthz_latency(guarded, "127.0.0.1") < 2.0
    assert "request deadline passed" in open(guarded.log_path).read()


def statuses(daemon, forwarded, source="127.0.0.1", calls=PER_MINUTE + 3):
    """POST /v1/actions/inspect (rate-limited, then 400 for the empty body) with each XFF value."""
    answers = []
    for i in range(calls):
        value = forwarded(i)
        headers = {"Content-Type": "application/json"}
        if value is not None:
            headers["X-Forwarded-For"] = value
        answers.append(call(daemon, "POST", "/v1/actions/inspect", body=b"{}", headers=headers, source=source)[0])
    return answers


def assert_limited(answers, what):
    assert answers[:PER_MINUTE].count(429) == 0, f"{what}: limited too early: {answers}"
    assert answers[PER_MINUTE:] == [429] * (len(answers) - PER_MINUTE), f"{what}: the limit was escaped: {answers}"


def test_spoofed_leftmost_forwarded_for_does_not_escape_the_limit_with_trust_proxy(guarded):
    assert_limited(statuses(guarded, lambda i: f"10.66.{i}.1, 127.0.9.1"), "--trust-proxy, spoofed leftmost")
    # Another client behind the same proxy has its own count.
    assert statuses(guarded, lambda i: f"10.66.{i}.1, 127.0.9.2", calls=1) == [400]


def test_spoofed_leftmost_forwarded_for_does_not_escape_the_limit_with_trusted_proxies(proxied):
    assert_limited(statuses(proxied, lambda i: f"10.77.{i}.1, 198.51.100.7"), "--trusted-proxies, spoofed leftmost")
    # A chain: the trusted hop 127.0.0.1 is skipped, 198.51.100.8 is the client.
    assert_limited(statuses(proxied, lambda i: f"10.78.{i}.1, 198.51.100.8, 127.0.0.1"), "trusted chain")
    # IPv6 client behind the proxy.
    assert_limited(statuses(proxied, lambda i: f"2001:db8::{i + 1}, 2001:db8:1::5"), "IPv6 client")
    # A peer that is not a trusted proxy: its X-Forwarded-For is not read at all.
    assert_limited(statuses(proxied, lambda i: f"10.79.{i}.1", source="127.0.0.3"), "untrusted peer")


def test_an_ipv6_client_cannot_escape_the_limit_by_rotating_addresses_in_its_64(proxied):
    # One subscriber holds a whole /64: a fresh source address per request was a fresh key.
    assert_limited(statuses(proxied, lambda i: f"2001:db8:7:7:{i:x}:{i * 7:x}::{i + 1:x}"), "IPv6 rotating in a /64")
    # Another /64 is another client.
    assert statuses(proxied, lambda i: "2001:db8:7:8::1", calls=1) == [400]


def raw_exchange(port, data, timeout=5):
    """Sends `data` on one connection and reads until the server closes it; (bytes, closed?)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(data)
    out = b""
    closed = False
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                closed = True
                break
            out += chunk
    except (socket.timeout, ConnectionResetError):
        pass
    s.close()
    return out, closed


SMUGGLED = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


FRAMINGS = [
    b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    b"Transfer-Encoding: chunked\r\nContent-Length: 0\r\n\r\n0\r\n\r\n",
    b"Content-Length: 2\r\nContent-Length: 46\r\n\r\n{}",
]


def refused_alone(daemon, headers):
    """POSTs with `headers` (the lines after Content-Type, and the body) and SMUGGLED after them:
    asserts exactly one answer, a 400 with `Connection: close`, and the connection closed; its body."""
    request = (b"POST /v1/actions/inspect HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               + headers + SMUGGLED)
    out, closed = raw_exchange(daemon.port, request)
    assert out.count(b"HTTP/1.1 ") == 1, f"{headers!r}: not exactly one response:\n{out.decode(errors='replace')}"
    head, _, body = out.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400"), (headers, head)
    assert b"connection: close" in head.lower(), (headers, head)
    assert closed, f"{headers!r}: the connection stayed open after the 400"
    return body


def test_conflicting_framing_is_refused_and_nothing_after_it_is_answered(guarded):
    for framing in FRAMINGS:
        assert json.loads(refused_alone(guarded, framing))["error"]["code"] == "BAD_REQUEST"


# Whitespace between a header's name and its colon (RFC 9112 §5.1: a server MUST answer 400). A
# proxy that trims the name frames the body by `Content-Length : 46`; libmicrohttpd 0.9.75 kept the
# line as a header named "Content-Length " and framed no body, so the body was read as a second
# request the proxy never saw. Any header name, not only the framing ones. libmicrohttpd answers
# these itself (its own HTML body).
SPACED_NAMES = [
    b"Content-Length : 46\r\n\r\n",
    b"Content-Length\t: 46\r\n\r\n",
    b"Transfer-Encoding : chunked\r\n\r\n",
    b"X-Anything : 1\r\nContent-Length: 2\r\n\r\n{}",
    b"Content Length: 46\r\n\r\n",
]


def test_whitespace_between_a_header_name_and_its_colon_is_refused(guarded):
    for line in SPACED_NAMES:
        refused_alone(guarded, line)
    # The same requests without the space are answered (so the 400 is the space's).
    out, _ = raw_exchange(guarded.port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Anything: 1\r\nConnection: close\r\n\r\n")
    assert out.startswith(b"HTTP/1.1 200"), out[:200]


def outbox_recipients(daemon):
    status, body, _ = call(daemon, "GET", "/v1/admin/outbox", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert status == 200, body
    return {m["recipient"] for m in body["messages"]}


def test_a_json_body_without_the_json_content_type_gets_415_and_sends_no_mail(guarded):
    victims = []
    for i, content_type in enumerate(["text/plain", "text/plain; charset=utf-8", None,
                                      "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]):
        victim = f"victim{i}-{secrets.token_hex(3)}@example.com"
        victims.append(victim)
        headers = {"X-Forwarded-For": f"127.0.10.{i}"}
        if content_type:
            headers["Content-Type"] = content_type
        status, body, _ = call(guarded, "POST", "/v1/email-link/send", body=json.dumps({"email": victim}).encode(),
                                          headers=headers)
        assert status == 415 and body["error"]["code"] == "UNSUPPORTED_MEDIA_TYPE", (content_type, status, body)
    control = f"control-{secrets.token_hex(3)}@example.com"
    status, _, _ = call(guarded, "POST", "/v1/email-link/send", body=json.dumps({"email": control}).encode(),
                                   headers={"Content-Type": "Application/JSON; charset=UTF-8",
                                            "X-Forwarded-For": "127.0.10.100"})
    assert status == 202
    # An empty body is still {} whatever the type says.
    status, _, _ = call(guarded, "POST", "/v1/accounts/anonymous", headers={"X-Forwarded-For": "127.0.10.101"})
    assert status == 200
    wait_for(lambda: control in outbox_recipients(guarded), 10, "the control mail to be queued")
    recipients = outbox_recipients(guarded)
    assert not recipients.intersection(victims), f"mail was queued for {recipients.intersection(victims)}"
    # Only the finished .eml files: the transport's hidden temporary ones may vanish while listed.
    def mails():
        return [f for f in os.listdir(guarded.mail_dir) if f.endswith(".eml")] if os.path.isdir(guarded.mail_dir) else []
    wait_for(lambda: any(control in open(os.path.join(guarded.mail_dir, f), errors="replace").read() for f in mails()), 30,
             "the control mail file")
    for name in mails():
        text = open(os.path.join(guarded.mail_dir, name), errors="replace").read()
        assert not any(v in text for v in victims), f"{name} was sent to a victim"


def test_metrics_need_the_admin_token_on_the_main_listener(guarded, proxied):
    status, body, _ = call(proxied, "GET", "/metrics")
    assert status == 404 and body["error"]["code"] == "NOT_FOUND", (status, body)
    status, body, _ = call(guarded, "GET", "/metrics")
    assert status == 401 and body["error"]["code"] == "UNAUTHORIZED", (status, body)
    status, body, _ = call(guarded, "GET", "/metrics", headers={"Authorization": "Bearer wrong-token-wrong-token"})
    assert status == 401, (status, body)
    status, body, _ = call(guarded, "GET", "/metrics", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert status == 200 and b"postern_codes_total" in body, (status, body[:200])


ADMIN_WRONG_BUDGET = 10  # wrong admin tokens per client IP before 429 (docs/operations.md, "What one daemon holds (HTTP limits)")


def test_guessing_the_admin_token_is_stopped_per_address(guarded):
    # The attacker's loop: wrong tokens as fast as they are answered (400 in 0.2 s, all 401 before).
    attacker, operator = "127.0.0.41", "127.0.0.42"
    answers = []
    for i in range(60):
        status, _, headers = call(guarded, "GET", "/v1/admin/outbox", source=attacker,
                                  headers={"Authorization": f"Bearer wrong-{i:04d}-{secrets.token_hex(8)}"})
        answers.append((status, headers.get("retry-after")))
    assert [s for s, _ in answers[:ADMIN_WRONG_BUDGET]] == [401] * ADMIN_WRONG_BUDGET, answers
    assert all(s == 429 and r and int(r) > 0 for s, r in answers[ADMIN_WRONG_BUDGET:]), answers
    # The right token from that address is refused as well, for a while.
    status, body, headers = call(guarded, "GET", "/v1/admin/outbox", source=attacker,
                                 headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert status == 429 and int(headers["retry-after"]) > 0, (status, body)
    # The operator elsewhere gets in, and that gives the attacker nothing back.
    status, _, _ = call(guarded, "GET", "/v1/admin/outbox", source=operator,
                        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert status == 200
    status, _, _ = call(guarded, "GET", "/v1/admin/outbox", source=attacker,
                        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert status == 429


def test_the_metrics_listener_serves_metrics_and_nothing_else(guarded, work):
    metrics_port = guarded.metrics_port
    status, body, headers = call(guarded, "GET", "/metrics", port=metrics_port)
    assert status == 200 and b"postern_http_requests_total" in body and b"postern_outbox_messages" in body
    assert headers["content-type"].startswith("text/plain")
    status, _, _ = call(guarded, "GET", "/healthz", port=metrics_port)
    assert status == 404
    # A busy metrics address stops the start, naming the setting, with exit 69.
    result = subprocess.run(
        [POSTERN, "serve", "--listen", f"127.0.0.1:{free_port()}", "--database", os.path.join(work, "busy.db"),
         "--smtp-url", f"file:{os.path.join(work, 'busy-mail')}", "--metrics-listen", f"127.0.0.1:{metrics_port}"],
        cwd=work, capture_output=True, text=True, timeout=30)
    assert result.returncode == 69, (result.returncode, result.stderr)
    assert "--metrics-listen" in result.stderr, result.stderr
    # A bad --trusted-proxies entry is a usage error that names the setting and the entry.
    result = subprocess.run([POSTERN, "serve", "--trusted-proxies", "10.0.0.0/8,10.0.0.0/33", "--metrics-listen", "off"],
                            cwd=work, capture_output=True, text=True, timeout=30)
    assert result.returncode == 64 and "--trusted-proxies" in result.stderr and "10.0.0.0/33" in result.stderr, result.stderr


def test_an_encoded_question_mark_in_a_path_parameter_reaches_its_route(proxied):
    # microhttpd cuts the query at the raw `?` and decodes the path; the server once cut again
    # at the decoded one, so a claim id with `%3F` (schemathesis made one) was 404 "no endpoint
    # /v1/phones/claims/ab", a status that operation does not document. The route answers it now:
    # the made-up claim's code is wrong (400), as for any id; a raw `?` still starts the query.
    for claim in ["ab%3Fcd", "%3F", "%C2%85%3F%3A%09%C2%A0%F1%A7%A1%883%C3%BA", "plain"]:
        status, answer, _ = call(proxied, "POST", f"/v1/phones/claims/{claim}/delete?x=1", body=b'{"code":"631473"}',
                                 headers={"Content-Type": "application/json"}, source="127.0.0.7")
        assert status == 400 and answer["error"]["code"] == "INVALID_PHONE_CODE", (claim, status, answer)
    status, answer, _ = call(proxied, "POST", "/v1/phones/claims/ab?cd/delete", body=b'{"code":"631473"}',
                             headers={"Content-Type": "application/json"}, source="127.0.0.7")
    assert status == 404 and answer["error"]["code"] == "NOT_FOUND", (status, answer)


def test_a_path_parameter_is_decoded_once_after_the_split(guarded, work):
    # Imported uids may hold any printable ASCII (Firebase allows `/` and `%`). libmicrohttpd
    # decoded the whole path and the route decoded its parameter again: `slash%2Fuid` split into
    # two segments (404 "no endpoint"), and `a%2541` became `a%41`, then `aA`, another user.
    rows = os.path.join(work, "uids.jsonl")
    with open(rows, "w") as f:
        for uid, email in [("slash/uid", "slash@example.com"), ("aA", "plain-aa@example.com")]:
            f.write(json.dumps({"uid": uid, "email": email, "emailVerified": True, "disabled": False, "providers": [],
                                "createdAt": 1_700_000_000, "sessionVersion": 0}) + "\n")
    result = subprocess.run([POSTERN, "users", "import", rows, "--from", "postern", "--database", guarded.database],
                            cwd=guarded.work, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, (result.stdout, result.stderr)
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}", "Content-Type": "application/json"}

    def admin_call(method, path, body=None):
        return call(guarded, method, path, body=json.dumps(body).encode() if body is not None else None,
                    headers=admin if body is not None else {"Authorization": admin["Authorization"]}, source="127.0.0.11")

    # `a%2541` is the uid `a%41`, which nobody has: 404, and `aA` is untouched.
    status, answer, _ = admin_call("PATCH", "/v1/admin/users/a%2541", {"displayName": "Hijacked"})
    assert status == 404 and answer["error"]["code"] == "USER_NOT_FOUND", (status, answer)
    status, answer, _ = admin_call("DELETE", "/v1/admin/users/a%2541")
    assert status == 404 and answer["error"]["code"] == "USER_NOT_FOUND", (status, answer)
    status, answer, _ = admin_call("GET", "/v1/admin/users?email=plain-aa%40example.com")
    assert status == 200 and answer["uid"] == "aA" and answer.get("displayName") != "Hijacked", (status, answer)
    status, answer, _ = admin_call("PATCH", "/v1/admin/users/slash%2Fuid", {"displayName": "Slash"})
    assert status == 200 and answer["uid"] == "slash/uid" and answer["displayName"] == "Slash", (status, answer)
    # `a%41`, decoded once, is `aA`; `slash/uid` unencoded is a path of five segments, no endpoint.
    status, answer, _ = admin_call("PATCH", "/v1/admin/users/a%41", {"displayName": "Reached"})
    assert status == 200 and answer["uid"] == "aA" and answer["displayName"] == "Reached", (status, answer)
    status, answer, _ = admin_call("DELETE", "/v1/admin/users/slash/uid")
    assert status == 404 and answer["error"]["code"] == "NOT_FOUND", (status, answer)
    status, _, _ = admin_call("DELETE", "/v1/admin/users/slash%2Fuid")
    assert status == 204, status
    status, answer, _ = admin_call("PATCH", "/v1/admin/users/slash%2Fuid", {"displayName": "Gone"})
    assert status == 404 and answer["error"]["code"] == "USER_NOT_FOUND", (status, answer)
    # The query is decoded once too: `+` is a space there, `%2B` a plus.
    status, answer, _ = admin_call("GET", "/v1/admin/users?email=plain+aa%40example.com")
    assert status == 400 and answer["error"]["code"] == "INVALID_EMAIL", (status, answer)
    status, answer, _ = admin_call("GET", "/v1/admin/users?email=plain%2Baa%40example.com")
    assert status == 404 and answer["error"]["code"] == "USER_NOT_FOUND", (status, answer)
    # An encoded NUL would reach the store, which reads text up to it: refused, in the path and the query.
    for path in ["/v1/admin/users/aA%00x", "/v1/admin/users?email=plain-aa%40example.com%00x"]:
        status, answer, _ = admin_call("GET" if "?" in path else "PATCH", path, None if "?" in path else {"displayName": "N"})
        assert status == 400 and answer["error"]["code"] == "INVALID_ARGUMENT", (path, status, answer)
    # An encoded slash separates nothing, not even in a fixed path.
    status, answer, _ = admin_call("GET", "/v1%2Fadmin%2Fusers?email=plain-aa%40example.com")
    assert status == 404 and answer["error"]["code"] == "NOT_FOUND", (status, answer)
    status, answer, _ = admin_call("GET", "/v1/admin/users?email=plain-aa%40example.com")
    assert status == 200 and answer["displayName"] == "Reached", (status, answer)
