"""Why a link failed (issue 15 point 4), against a real `postern serve` (SQLite, mail as .eml
files): the API's answer for each reason (used, expired, superseded, opened in another browser),
the hosted page's sentence for each in real headless Chromium — "already signed in" on the second
click in the browser that completed the link, the other-browser sentence in a second browser with
its own profile — and the attacker sequences: tampered codes get the generic answer, a code for
address A says nothing about address B, and the answers' times are no second channel.

Run by link-reasons.sh (which checks that every test ran).
"""
import base64
import hashlib
import os
import re
import secrets
import statistics
import time
import urllib.parse

import pytest

from postern_daemon import Daemon, action_link, check_error, http_request, six_digits, start_chromium, stop_chromium

TTL = 60  # --ttl-sign-in: the smallest the setting takes; the expired test waits it out last.

SENTENCES = {
    "used": "This link was already used. If you need to sign in again, ask for a new link.",
    "superseded": "A newer link for this address was used, so this one no longer works. Ask for a new link if you need one.",
    "other": ("This link was asked for in another browser. Open it in the browser you asked from, or type the 6-digit "
              "code from the mail there."),
    "expired": "The link has expired. Ask for a new one.",
    "signedIn": "You are already signed in: this link was used in this browser. Go back to the app.",
    "usedDe": "Dieser Link wurde schon verwendet. Wenn Sie sich erneut anmelden möchten, fordern Sie einen neuen an.",
}


def unique(tag):
    return f"{tag}-{secrets.token_hex(4)}@example.com"


def challenge_of(verifier):
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def tampered(link):
    """The link with one character of its code's tag changed."""
    start = link.index("oobCode=") + len("oobCode=") + 70
    return link[:start] + ("B" if link[start] == "A" else "A") + link[start + 1:]


class Links(Daemon):
    def send(self, email, **extra):
        status, answer, headers = self.post("/v1/email-link/send", {"email": email, **extra})
        assert status == 202, answer
        msg = self.mailbox.next(email)
        return action_link(msg, self.public_url, "signIn"), msg, headers

    def complete(self, body, cookie=None):
        headers = {"Cookie": f"postern_browser={cookie}"} if cookie else None
        return self.post("/v1/email-link/complete", body, headers=headers)

    def metrics(self):
        status, text, _ = http_request(f"http://127.0.0.1:{self.metrics_port}", "GET", "/metrics")
        assert status == 200
        text = text.decode() if isinstance(text, bytes) else text
        return {m[0]: int(m[1]) for m in re.findall(r'^postern_link_failures_total\{reason="([a-z_]+)"\} (\d+)$', text, re.M)}


@pytest.fixture(scope="module")
def daemon():
    d = Links(os.environ["E2E_WORK"], "links", "--ttl-sign-in", str(TTL), "--mail-interval", "0", "--mail-per-hour", "0", "--mail-domain-per-hour", "0", "--mail-per-hour-total", "0", "--challenge", "off",
              "--ip-per-minute", "0")
    yield d
    assert d.stop() == 0
    log = open(d.log_path).read()
    assert "oobCode=" not in log and "postern_browser=" not in log, "a link or a browser cookie reached the log"


@pytest.fixture(scope="module")
def expiring(daemon):
    """A link sent at the start of the module; the last test finds it expired."""
    address = unique("expiring")
    link, _, _ = daemon.send(address)
    return {"link": link, "sent": time.monotonic(), "address": address}


@pytest.fixture(scope="module")
def browsers():
    """Two browsers with their own profiles: the one that asks, and another."""
    work = os.environ["E2E_WORK"]
    started = [start_chromium(work, "asking"), start_chromium(work, "other")]
    yield [driver for driver, _ in started]
    for driver, group in started:
        stop_chromium(driver, group)


def browser_fetch(driver, daemon, path, body):
    """POSTs JSON from the browser itself (same origin as Postern, its cookies sent and kept)."""
    driver.get(daemon.public_url + "/readyz")
    return driver.execute_async_script(
        """const [path, body, done] = arguments;
        fetch(path, {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)})
          .then(async r => done({status: r.status, body: await r.json()}), e => done({status: 0, body: String(e)}));""",
        path, body)


def page_text(driver, element_id):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, 15).until(EC.presence_of_element_located((By.ID, element_id))).text


def test_api_used_and_signed_in_here(daemon, expiring):
    assert expiring["link"]  # sent now, found expired by the last test
    # A plain link: used.
    link, _, _ = daemon.send(unique("ann"))
    status, login, _ = daemon.complete({"link": link})
    assert status == 200, login
    status, answer, _ = daemon.complete({"link": link})
    check_error(answer, status, "LINK_USED", 400)
    assert "signedInHere" not in answer["error"], answer
    # A PKCE link: its verifier says "signed in here", any other says only used.
    verifier = secrets.token_urlsafe(32)
    link, _, _ = daemon.send(unique("bea"), codeChallenge=challenge_of(verifier))
    status, login, _ = daemon.complete({"link": link, "codeVerifier": verifier})
    assert status == 200, login
    status, answer, _ = daemon.complete({"link": link, "codeVerifier": verifier})
    check_error(answer, status, "LINK_USED", 400)
    assert answer["error"]["signedInHere"] == "true", answer
    status, answer, _ = daemon.complete({"link": link, "codeVerifier": secrets.token_urlsafe(32)})
    check_error(answer, status, "LINK_USED", 400)
    assert "signedInHere" not in answer["error"], answer
    # inspect says used too (a GET of the page consumes nothing and says the same).
    status, answer, _ = daemon.post("/v1/actions/inspect", {"link": link})
    check_error(answer, status, "LINK_USED", 400)


def test_api_superseded(daemon):
    address = unique("cid")
    first, _, _ = daemon.send(address)
    second, _, _ = daemon.send(address)
    # Asking again ended nothing: the first still inspects as valid.
    status, info, _ = daemon.post("/v1/actions/inspect", {"link": first})
    assert status == 200, info
    status, login, _ = daemon.complete({"link": second})
    assert status == 200, login
    status, answer, _ = daemon.complete({"link": first})
    check_error(answer, status, "LINK_SUPERSEDED", 400)
    # Two reset links: applying one supersedes the other.
    daemon.post("/v1/password/reset", {"email": address})
    reset1 = action_link(daemon.mailbox.next(address), daemon.public_url, "resetPassword")
    daemon.post("/v1/password/reset", {"email": address})
    reset2 = action_link(daemon.mailbox.next(address), daemon.public_url, "resetPassword")
    status, applied, _ = daemon.post("/v1/actions/apply", {"link": reset2, "newPassword": "a new password " + secrets.token_hex(4)})
    assert status == 200, applied
    daemon.mailbox.next(address)  # the password-changed notice
    status, answer, _ = daemon.post("/v1/actions/apply", {"link": reset1, "newPassword": "another password " + secrets.token_hex(4)})
    check_error(answer, status, "LINK_SUPERSEDED", 400)
    status, answer, _ = daemon.post("/v1/actions/apply", {"link": reset2, "newPassword": "another password " + secrets.token_hex(4)})
    check_error(answer, status, "LINK_USED", 400)


def test_api_other_browser(daemon):
    address = unique("dora")
    link, msg, headers = daemon.send(address, bindBrowser=True)
    set_cookie = headers.get("Set-Cookie") or ""
    match = re.match(r"postern_browser=([A-Za-z0-9_-]{32}); Path=/; Max-Age=31536000; HttpOnly; SameSite=Lax$", set_cookie)
    assert match, set_cookie
    cookie = match.group(1)
    status, answer, _ = daemon.complete({"link": link})
    check_error(answer, status, "LINK_OTHER_BROWSER", 400)
    status, answer, _ = daemon.complete({"link": link}, cookie=secrets.token_urlsafe(24))
    check_error(answer, status, "LINK_OTHER_BROWSER", 400)
    # The cookie's value in the body is not the cookie.
    status, answer, _ = daemon.complete({"link": link, "codeVerifier": cookie})
    check_error(answer, status, "LINK_OTHER_BROWSER", 400)
    # A browser that sends its cookie gets no new one, and its link is bound to it.
    status, answer, again_headers = daemon.post("/v1/email-link/send", {"email": unique("dora2"), "bindBrowser": True},
                                                headers={"Cookie": f"postern_browser={cookie}"})
    assert status == 202 and again_headers.get("Set-Cookie") is None, (answer, again_headers)
    status, login, _ = daemon.complete({"link": link}, cookie=cookie)
    assert status == 200 and login["email"] == address, login
    status, answer, _ = daemon.complete({"link": link}, cookie=cookie)
    check_error(answer, status, "LINK_USED", 400)
    assert answer["error"]["signedInHere"] == "true", answer
    # The 6-digit code of a bound link works from anywhere.
    address = unique("dora3")
    _, msg, _ = daemon.send(address, bindBrowser=True)
    status, login, _ = daemon.complete({"code": six_digits(msg), "email": address})
    assert status == 200, login
    # bindBrowser is its own verifier.
    status, answer, _ = daemon.post("/v1/email-link/send", {"email": address, "bindBrowser": True,
                                                            "codeChallenge": challenge_of("x" * 43)})
    check_error(answer, status, "INVALID_ARGUMENT", 400)


def test_attacker_tampered_codes_and_address_b(daemon):
    # Tampered used, superseded and bound links: the generic answer, never the reason.
    a = unique("eve-a")
    used, _, _ = daemon.send(a)
    assert daemon.complete({"link": used})[0] == 200
    older, _, _ = daemon.send(a)
    newer, _, _ = daemon.send(a)
    assert daemon.complete({"link": newer})[0] == 200
    bound, _, _ = daemon.send(unique("eve-b"), bindBrowser=True)
    for link in (used, older, bound):
        status, answer, _ = daemon.complete({"link": tampered(link)})
        check_error(answer, status, "INVALID_OOB_CODE", 400)
        status, answer, _ = daemon.post("/v1/actions/inspect", {"link": tampered(link)})
        check_error(answer, status, "INVALID_OOB_CODE", 400)
    # A's link says the same whether B has an account or not, and using it touches nothing of B's.
    known, unknown = unique("known"), unique("unknown")
    daemon.complete({"link": daemon.send(known)[0]})
    answers = []
    for b in (known, unknown):
        b_link, _, _ = daemon.send(b)
        a_link, _, _ = daemon.send(unique("holder"))
        mismatch = daemon.complete({"link": a_link, "email": b})
        assert daemon.complete({"link": a_link})[0] == 200
        replay = daemon.complete({"link": a_link})
        answers.append([(s, body) for s, body, _ in (mismatch, replay)])
        status, info, _ = daemon.post("/v1/actions/inspect", {"link": b_link})
        assert status == 200, "a sign-in of another address superseded B's link"
    assert answers[0] == answers[1], answers
    check_error(answers[0][0][1], answers[0][0][0], "EMAIL_MISMATCH", 400)
    check_error(answers[0][1][1], answers[0][1][0], "LINK_USED", 400)


def test_timing_is_no_second_channel(daemon):
    """The same store work for used and superseded answers: their medians are close."""
    used, _, _ = daemon.send(unique("tim"))
    assert daemon.complete({"link": used})[0] == 200
    address = unique("tom")
    superseded, _, _ = daemon.send(address)
    assert daemon.complete({"link": daemon.send(address)[0]})[0] == 200
    samples = {"used": [], "superseded": []}
    for _ in range(3):  # warm up
        daemon.post("/v1/actions/inspect", {"link": used})
        daemon.post("/v1/actions/inspect", {"link": superseded})
    for _ in range(60):
        for name, link in (("used", used), ("superseded", superseded)):
            start = time.perf_counter()
            status, answer, _ = daemon.post("/v1/actions/inspect", {"link": link})
            samples[name].append(time.perf_counter() - start)
            assert status == 400
    medians = {k: statistics.median(v) * 1000 for k, v in samples.items()}
    print(f"\nmedian ms per answer: {medians}")
    difference = abs(medians["used"] - medians["superseded"])
    assert difference < max(2.0, 0.5 * min(medians.values())), medians


def test_pages_in_chromium(daemon, browsers):
    asking, other = browsers
    # The asking browser asks (from Postern's origin, so the cookie is set), another opens the link.
    address = unique("fay")
    sent = browser_fetch(asking, daemon, "/v1/email-link/send", {"email": address, "bindBrowser": True})
    assert sent["status"] == 202, sent
    assert [c for c in asking.get_cookies() if c["name"] == "postern_browser" and c["httpOnly"]], asking.get_cookies()
    link = action_link(daemon.mailbox.next(address), daemon.public_url, "signIn")
    other.get(link)
    assert page_text(other, "error") == SENTENCES["other"]
    other.save_screenshot(os.path.join(os.environ["E2E_WORK"], "other-browser.png"))
    # In the asking browser the page is the sign-in page, and the browser completes the link.
    asking.get(link)
    from selenium.webdriver.common.by import By
    assert asking.find_element(By.TAG_NAME, "h1").text == "Sign in"
    assert not asking.find_elements(By.ID, "error")
    done = browser_fetch(asking, daemon, "/v1/email-link/complete", {"link": link})
    assert done["status"] == 200 and done["body"]["email"] == address, done
    # The second click there: "already signed in", a page, not an error.
    asking.get(link)
    assert page_text(asking, "done") == SENTENCES["signedIn"]
    assert asking.find_element(By.TAG_NAME, "h1").text == "You are signed in"
    asking.save_screenshot(os.path.join(os.environ["E2E_WORK"], "already-signed-in.png"))
    status, _, _ = daemon.get(urllib.parse.urlsplit(link).path + "?" + urllib.parse.urlsplit(link).query,
                              headers={"Cookie": next(f"postern_browser={c['value']}" for c in asking.get_cookies()
                                                      if c["name"] == "postern_browser")})
    assert status == 200
    # The same used link elsewhere: used; in German too.
    other.get(link)
    assert page_text(other, "error") == SENTENCES["used"]
    other.get(link + "&lang=de")
    assert page_text(other, "error") == SENTENCES["usedDe"]
    # Superseded: two links, the newer used, the older opened.
    address = unique("gil")
    older, _, _ = daemon.send(address)
    newer, _, _ = daemon.send(address)
    assert daemon.complete({"link": newer})[0] == 200
    other.get(older)
    assert page_text(other, "error") == SENTENCES["superseded"]
    # A tampered link: the generic sentence.
    other.get(tampered(older))
    assert page_text(other, "error") == "The link is invalid or was already used. Ask for a new one."


def test_expired_in_api_and_page_and_metrics(daemon, expiring, browsers):
    # Last: the link sent at the start has lived its TTL by now (waiting out what is left).
    left = expiring["sent"] + TTL + 1 - time.monotonic()
    if left > 0:
        time.sleep(left)
    status, answer, _ = daemon.complete({"link": expiring["link"]})
    check_error(answer, status, "EXPIRED_OOB_CODE", 400)
    status, answer, _ = daemon.complete({"link": tampered(expiring["link"])})
    check_error(answer, status, "INVALID_OOB_CODE", 400)
    _, other = browsers
    other.get(expiring["link"])
    assert page_text(other, "error") == SENTENCES["expired"]
    counts = daemon.metrics()
    print(f"\npostern_link_failures_total: {counts}")
    assert set(counts) == {"used", "expired", "superseded", "other_browser", "invalid"}, counts
    assert all(counts[k] > 0 for k in counts), counts
