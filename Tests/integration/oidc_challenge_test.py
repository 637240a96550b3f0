"""The challenge on the hosted sign-in page (issue 47) in a real browser: `postern serve
--challenge always`, an OpenID Connect client driven by PyPI's authlib, headless Chromium (Selenium)
as the person. The page loads Postern's proof-of-work script (/challenge.js) under a CSP that
allows this origin's script and nothing inline; the person types the address and presses the
button; the script fetches GET /v1/challenge, solves it with WebCrypto and sends the form with
the ALTCHA payload; the mail arrives, its link (opened in the same browser) completes the sign-in,
and authlib redeems the code and checks the ID token. A form sent without a solution, or with one
used already, gets the page again and no mail. With `--captcha turnstile` the page carries the
service's widget element and script and a CSP naming the service (no network: nothing is loaded
from there). Run by oidc-challenge.sh.
"""
import base64
import hashlib
import json
import os
import re
import secrets
import threading
import time
import urllib.parse
from http.server import HTTPServer

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By

from oidc_apache_test import console, form_posting_to, on_page_with_form, press
from oidc_authlib_test import Browser, Callback, Postern as OpenIDProvider, RelyingParty
from postern_daemon import Daemon, action_link, start_chromium, stop_chromium, wait_for

os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"

ADMIN = "oidc-challenge-admin-" + secrets.token_hex(8)
LIMITS_OFF = ("--mail-interval", "0", "--mail-per-hour", "0", "--mail-domain-per-hour", "0", "--mail-per-hour-total", "0",
              "--ip-per-minute", "0")
SITE_KEY = "0x4AAAAAAA-postern-test-site-key"


def start(name, *extra):
    work = os.environ["E2E_WORK"]
    os.makedirs(work, exist_ok=True)
    return Daemon(work, name, *LIMITS_OFF, "--admin-token", ADMIN, *extra)


@pytest.fixture(scope="module")
def postern():
    daemon = start("oidc-challenge", "--challenge", "always")
    try:
        provider = OpenIDProvider(daemon)
    except BaseException:
        daemon.stop()
        raise
    yield provider
    assert daemon.stop() == 0, open(daemon.log_path).read()[-4000:]


@pytest.fixture(scope="module")
def callback():
    server = HTTPServer(("127.0.0.1", 0), Callback)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/callback"
    server.shutdown()


def relying_party(postern, redirect):
    status, registered, _ = postern.daemon.post("/v1/admin/oidc/clients", {
        "name": "challenge-rp", "redirectUris": [redirect], "firstParty": True}, token=ADMIN)
    assert status == 201, (status, registered)
    return RelyingParty(postern, registered["client"]["clientId"], registered["clientSecret"], redirect, "client_secret_basic",
                        scope="openid email")


def directives(policy):
    """A Content-Security-Policy as {directive: [sources]}."""
    parts = [p.split() for p in policy.split(";") if p.strip()]
    return {p[0]: p[1:] for p in parts}


def challenges(postern):
    """postern_challenges_total by outcome."""
    metrics = postern.daemon.metrics()
    return {o: metrics.get(f'postern_challenges_total{{outcome="{o}"}}', 0) for o in ("asked", "solved", "refused")}


def test_chromium_solves_the_proof_of_work_and_the_mail_link_signs_in(postern, callback):
    address = f"challenge-{secrets.token_hex(4)}@example.com"
    rp = relying_party(postern, callback)
    session, url, started = rp.start()

    # The page as served: our script, the hidden field, and a CSP allowing this origin's script only.
    page = Browser().get(url)
    assert page.status_code == 200, (page.status_code, page.text[:1500])
    policy = directives(page.headers["Content-Security-Policy"])
    assert policy["script-src"] == ["'self'"] and policy["connect-src"] == ["'self'"], policy
    assert policy["default-src"] == ["'none'"] and policy["frame-ancestors"] == ["'none'"], policy
    assert '<script src="/challenge.js" defer></script>' in page.text
    assert not re.search(r"<script(?![^>]*\ssrc=)", page.text), "an inline script"
    script = Browser().get(postern.daemon.public_url + "/challenge.js")
    assert script.status_code == 200 and script.headers["Content-Type"].startswith("text/javascript"), script.headers
    before = challenges(postern)

    driver, group = start_chromium(os.environ["E2E_WORK"], "oidc-challenge-chromium")
    try:
        driver.get(url)
        on_page_with_form(driver, "/oidc/sign-in")
        form = form_posting_to(driver, "/oidc/sign-in")
        hidden = form.find_element(By.CSS_SELECTOR, "input[name=challengeSolution]")
        assert hidden.get_attribute("type") == "hidden" and hidden.get_attribute("value") == ""
        form.find_element(By.CSS_SELECTOR, "input[type=email]").send_keys(address)
        pressed = time.monotonic()
        press(form)
        # The script solves (a few seconds at the default difficulty), then sends the form.
        try:
            on_page_with_form(driver, "/oidc/code", timeout=120)
        except AssertionError:
            raise AssertionError(f"the browser's console: {console(driver)}")
        print(f"\nthe page's proof of work (default difficulty), button to check-mail page: {time.monotonic() - pressed:.2f}s"
              " (solving began when the page loaded)")
        assert address in driver.page_source, "the address typed went with the solution"
        mail = postern.daemon.mailbox.next(address)
        after = challenges(postern)
        assert after["solved"] == before["solved"] + 1 and after["refused"] == before["refused"], (before, after)

        driver.get(action_link(mail, postern.daemon.public_url, "signIn"))
        on_page_with_form(driver, "/oidc/resume")
        press(form_posting_to(driver, "/oidc/resume"))

        def called_back():
            return [p for p in Callback.seen if p.startswith("/callback?") and f"state={started['state']}" in p]
        try:
            answer = wait_for(called_back, 30, "the relying party's callback")[0]
        except AssertionError:
            raise AssertionError(f"at {driver.current_url}: {driver.page_source[:2000]}\n{console(driver)}")
        errors = [m for m in console(driver) if "Content Security Policy" in (m or "")]
        assert not errors, errors
    finally:
        stop_chromium(driver, group)

    token, claims = rp.finish(session, urllib.parse.urljoin(callback, answer), started)
    assert claims["email"] == address, claims


def test_a_form_without_a_solution_or_with_a_used_one_gets_the_page_again_and_no_mail(postern, callback):
    rp = relying_party(postern, callback)
    browser = Browser()
    _, url, _ = rp.start()
    page = browser.get(url)
    assert page.status_code == 200, page.text[:1000]
    before = challenges(postern)
    address = f"no-solution-{secrets.token_hex(4)}@example.com"
    answer = browser.submit(page, "/oidc/sign-in", typed={"email": address})
    assert answer.status_code == 400, (answer.status_code, answer.text[:1500])
    assert 'id="retry"' in answer.text and '<script src="/challenge.js" defer></script>' in answer.text
    assert f'value="{address}"' in answer.text, "the address typed stays in the form"

    # A solution the test makes itself, as the script does (the payload of ALTCHA's classic format).
    status, challenge, _ = postern.daemon.get("/v1/challenge")
    assert status == 200 and challenge["kind"] == "altcha", challenge
    number = next(n for n in range(challenge["maxnumber"] + 1)
                  if hashlib.sha256((challenge["salt"] + str(n)).encode()).hexdigest() == challenge["challenge"])
    solution = base64.b64encode(json.dumps({k: challenge[k] for k in ("algorithm", "challenge", "salt", "signature")}
                                           | {"number": number}).encode()).decode()
    first = f"solved-{secrets.token_hex(4)}@example.com"
    sent = browser.submit(answer, "/oidc/sign-in", typed={"email": first, "challengeSolution": solution})
    assert sent.status_code == 200 and 'action="/oidc/code"' in sent.text, sent.text[:1500]
    postern.daemon.mailbox.next(first)

    _, url, _ = rp.start()
    again = browser.submit(browser.get(url), "/oidc/sign-in", typed={"email": address, "challengeSolution": solution})
    assert again.status_code == 400 and 'id="retry"' in again.text, again.text[:1500]
    after = challenges(postern)
    assert after["solved"] == before["solved"] + 1 and after["refused"] == before["refused"] + 1, (before, after)
    assert after["asked"] >= before["asked"] + 1, (before, after)
    # The mail to `first` came after the refused form's, which queued nothing: none to `address`.
    assert postern.daemon.mailbox.count_for(address) == 0


def test_turnstile_puts_its_widget_and_script_on_the_page_and_only_its_origin_in_the_csp(callback):
    secret_file = os.path.join(os.environ["E2E_WORK"], "turnstile-secret")
    with open(secret_file, "w") as f:
        f.write("turnstile-secret-" + secrets.token_hex(8) + "\n")
    daemon = start("oidc-challenge-turnstile", "--challenge", "always", "--captcha", "turnstile",
                   "--captcha-site-key", SITE_KEY, "--captcha-secret-file", secret_file)
    try:
        provider = OpenIDProvider(daemon)
        rp = relying_party(provider, callback)
        _, url, _ = rp.start()
        page = Browser().get(url)
        assert page.status_code == 200, page.text[:1000]
        policy = directives(page.headers["Content-Security-Policy"])
        assert policy["script-src"] == ["https://challenges.cloudflare.com"], policy
        assert policy["frame-src"] == ["https://challenges.cloudflare.com"], policy
        assert "'self'" not in policy["script-src"] and policy["frame-ancestors"] == ["'none'"], policy

        driver, group = start_chromium(os.environ["E2E_WORK"], "oidc-challenge-turnstile-chromium")
        try:
            driver.get(url)
            on_page_with_form(driver, "/oidc/sign-in")
            form = form_posting_to(driver, "/oidc/sign-in")
            widgets = form.find_elements(By.CSS_SELECTOR, "div.cf-turnstile")
            assert len(widgets) == 1 and widgets[0].get_attribute("data-sitekey") == SITE_KEY, form.get_attribute("outerHTML")
            assert not form.find_elements(By.CSS_SELECTOR, "input[name=challengeSolution]")
            scripts = [s.get_attribute("src") for s in driver.find_elements(By.TAG_NAME, "script")]
            assert scripts == ["https://challenges.cloudflare.com/turnstile/v0/api.js"], scripts
        except StaleElementReferenceException:
            raise AssertionError(f"the page changed under the test: {driver.page_source[:1500]}")
        finally:
            stop_chromium(driver, group)
    finally:
        assert daemon.stop() == 0, open(daemon.log_path).read()[-4000:]
