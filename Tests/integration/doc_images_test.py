"""The README's pictures: the sign-in mail's HTML part and the hosted page its link opens, and the
OpenID Connect provider's hosted sign-in page with the "check your mail" page after it (README.md,
docs/oidc.md), from a real `postern serve` on the embedded defaults, rendered in headless Chromium.
Run by doc-images.sh.

It fails only when one cannot be rendered or a page lacks what it must have. The PNGs go to docs/images/ only with
UPDATE_DOC_IMAGES=1 (`UPDATE_DOC_IMAGES=1 Tests/integration/doc-images.sh`); otherwise they are
made in E2E_WORK and compared with the committed ones, and a difference is only reported (the
code in each mail differs, so the bytes always do).
"""
import base64
import hashlib
import os
import secrets
import shutil
import urllib.parse

from postern_daemon import Daemon, action_link, six_digits, start_chromium, stop_chromium, wait_for

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
IMAGES = os.path.join(ROOT, "docs", "images")
ADDRESS = "ann@example.com"
ADMIN = "doc-images-admin-" + secrets.token_hex(8)
# The relying party of the OpenID Connect pictures: a loopback redirect URI registered without a
# port (it matches any, RFC 8252 §7.3); the browser never gets that far.
CLIENT_NAME = "Grafana"
REDIRECT_REGISTERED = "http://127.0.0.1/login/generic_oauth"


def test_the_sign_in_mail_and_its_page_render():
    work = os.environ["E2E_WORK"]
    os.makedirs(work, exist_ok=True)
    daemon = Daemon(work, "daemon")
    driver, group = start_chromium(work)
    try:
        status, answer, _ = daemon.post("/v1/email-link/send", {"email": ADDRESS})
        assert status == 202, (status, answer)
        mail = daemon.mailbox.next(ADDRESS)
        html = mail.get_body(("html",))
        assert html is not None, "the sign-in mail has no HTML part"
        mail_file = os.path.join(work, "mail.html")
        with open(mail_file, "w") as f:
            f.write(html.get_content())

        made = {}
        # The mail as a mail program shows its HTML part (no network: everything is inline).
        driver.get("file://" + mail_file)
        wait_for(lambda: driver.execute_script("return document.readyState") == "complete", 10, "the mail to load")
        text = driver.find_element("tag name", "body").text
        assert ADDRESS in text or "Postern" in text, text[:500]
        made["sign-in-mail.png"] = os.path.join(work, "sign-in-mail.png")
        assert driver.save_screenshot(made["sign-in-mail.png"])

        # The hosted page the link opens: a GET shows the sign-in's 6-digit code and consumes nothing.
        driver.get(action_link(mail, daemon.public_url, "signIn"))
        wait_for(lambda: driver.execute_script("return document.readyState") == "complete", 10, "the page to load")
        codes = driver.find_elements("id", "code")
        assert codes and len(codes[0].text.strip()) == 6, driver.page_source[:500]
        made["sign-in-page.png"] = os.path.join(work, "sign-in-page.png")
        assert driver.save_screenshot(made["sign-in-page.png"])
    finally:
        stop_chromium(driver, group)
        assert daemon.stop() == 0

    keep(made)


def test_the_oidc_sign_in_page_and_check_mail_page_render():
    work = os.environ["E2E_WORK"]
    os.makedirs(work, exist_ok=True)
    daemon = Daemon(work, "oidc", "--admin-token", ADMIN)
    driver, group = start_chromium(work, "chromium-oidc")
    try:
        status, answer, _ = daemon.post("/v1/admin/oidc/clients", {
            "name": CLIENT_NAME, "redirectUris": [REDIRECT_REGISTERED], "scopes": ["openid", "email"]}, token=ADMIN)
        assert status == 201, (status, answer)
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        query = urllib.parse.urlencode({
            "response_type": "code", "client_id": answer["client"]["clientId"],
            "redirect_uri": f"http://127.0.0.1:{daemon.port + 1}/login/generic_oauth", "scope": "openid email",
            "state": secrets.token_urlsafe(12), "nonce": secrets.token_urlsafe(12),
            "code_challenge": challenge, "code_challenge_method": "S256"})

        made = {}
        # What a person sees when Grafana sends them to sign in: "Sign in to Grafana", one address field.
        driver.get(f"{daemon.public_url}/oidc/authorize?{query}")
        wait_for(lambda: driver.execute_script("return document.readyState") == "complete", 10, "the sign-in page")
        assert CLIENT_NAME in driver.find_element("tag name", "body").text, driver.page_source[:1500]
        field = driver.find_element("id", "email")
        assert (field.get_attribute("type"), field.get_attribute("autocomplete"), field.get_attribute("name")) == \
            ("email", "username", "email"), driver.page_source[:1500]
        assert form_path(field) == "/oidc/sign-in", driver.page_source[:1500]
        made["oidc-sign-in.png"] = os.path.join(work, "oidc-sign-in.png")
        assert driver.save_screenshot(made["oidc-sign-in.png"])

        # The address typed and the button pressed: "check your mail", its code field and a way back.
        field.send_keys(ADDRESS)
        driver.find_element("id", "send-link").click()
        wait_for(lambda: driver.find_elements("id", "code-form"), 10, "the check-mail page")
        wait_for(lambda: driver.execute_script("return document.readyState") == "complete", 10, "the check-mail page")
        assert ADDRESS in driver.find_element("id", "sent").text, driver.page_source[:1500]
        code = driver.find_element("id", "code")
        assert code.get_attribute("autocomplete") == "one-time-code" and form_path(code) == "/oidc/code", \
            driver.page_source[:1500]
        assert form_path(driver.find_element("id", "restart")) == "/oidc/restart", driver.page_source[:1500]
        # The page said the mail went out: it did, with the code the page asks for.
        assert len(six_digits(daemon.mailbox.next(ADDRESS))) == 6
        made["oidc-check-mail.png"] = os.path.join(work, "oidc-check-mail.png")
        assert driver.save_screenshot(made["oidc-check-mail.png"])
    finally:
        stop_chromium(driver, group)
        assert daemon.stop() == 0
    keep(made)


def form_path(element):
    """The path the form holding `element` posts to (the browser resolves its action), or None
    when it is no POST form."""
    form = element.find_element("xpath", "ancestor::form")
    if (form.get_attribute("method") or "").lower() != "post":
        return None
    return urllib.parse.urlsplit(form.get_attribute("action")).path


def keep(made):
    """Checks each PNG in `made` (name → path); writes it into docs/images/ with
    UPDATE_DOC_IMAGES=1, otherwise only says when it differs from the committed one."""
    for name, path in made.items():
        with open(path, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n", f"{name} is no PNG"
        committed = os.path.join(IMAGES, name)
        if os.environ.get("UPDATE_DOC_IMAGES") == "1":
            os.makedirs(IMAGES, exist_ok=True)
            shutil.copyfile(path, committed)
            print(f"\nwrote {committed}")
        elif not os.path.exists(committed):
            print(f"\n{committed} is missing: run UPDATE_DOC_IMAGES=1 Tests/integration/doc-images.sh")
        elif open(committed, "rb").read() != open(path, "rb").read():
            print(f"\n{name} renders differently from docs/images/{name} (a mail's code, for one, "
                  "differs each run; UPDATE_DOC_IMAGES=1 Tests/integration/doc-images.sh writes it)")
