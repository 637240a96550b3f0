"""bench/oidc's one sign-in: a browser session on the hosted page, for the load that follows.

usage: oidc_session.py BASE CLIENT_ID REDIRECT_URI CHALLENGE MAIL_DIR ADDRESS

GETs the authorization endpoint (PKCE S256 with CHALLENGE), types ADDRESS on the sign-in page,
reads the 6-digit code from the mail the daemon wrote into MAIL_DIR (`--smtp-url file:`), types it,
and checks the answer is a redirect to REDIRECT_URI with a code (a first-party client: no consent).
Prints the Cookie header of the signed-in browser (its `postern_browser` and `postern_session`).
"""
import email
import email.policy
import http.cookiejar
import os
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "integration"))
from mail_scanner import PageParser  # noqa: E402


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def main():
    base, client_id, redirect_uri, challenge, mail_dir, address = sys.argv[1:7]
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPCookieProcessor(jar),
                                         NoRedirect())

    def fetch(url, fields=None):
        data = None if fields is None else urllib.parse.urlencode(fields).encode()
        try:
            with opener.open(urllib.request.Request(url, data=data), timeout=30) as answer:
                return answer.status, answer.headers, answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read().decode("utf-8", "replace")

    def submit(page_url, page, action, typed):
        parser = PageParser()
        parser.feed(page)
        forms = [f for f in parser.forms if urllib.parse.urlsplit(urllib.parse.urljoin(page_url, f["action"])).path == action]
        if len(forms) != 1:
            sys.exit(f"oidc_session: no form to {action} on {page_url}: {page[:500]}")
        fields = [(n, typed.get(n, v)) for n, v in forms[0]["fields"]]
        return fetch(urllib.parse.urljoin(page_url, forms[0]["action"]), fields)

    query = urllib.parse.urlencode({"response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri,
                                    "scope": "openid email", "state": "bench", "nonce": "bench",
                                    "code_challenge": challenge, "code_challenge_method": "S256"})
    authorize = f"{base}/oidc/authorize?{query}"
    status, _, page = fetch(authorize)
    if status != 200:
        sys.exit(f"oidc_session: authorize answered {status}: {page[:500]}")
    before = set(os.listdir(mail_dir)) if os.path.isdir(mail_dir) else set()
    status, _, checking = submit(authorize, page, "/oidc/sign-in", {"email": address})
    if status != 200:
        sys.exit(f"oidc_session: sign-in answered {status}: {checking[:500]}")
    code = None
    deadline = time.monotonic() + 20
    while code is None and time.monotonic() < deadline:
        for name in sorted(set(os.listdir(mail_dir) if os.path.isdir(mail_dir) else []) - before):
            with open(os.path.join(mail_dir, name), "rb") as f:
                mail = email.message_from_bytes(f.read(), policy=email.policy.default)
            found = re.findall(r"^\s*(\d{6})\s*$", mail.get_body(("plain",)).get_content(), re.M)
            if found:
                code = found[0]
        time.sleep(0.05)
    if code is None:
        sys.exit(f"oidc_session: no mail with a code in {mail_dir}")
    status, headers, page = submit(f"{base}/oidc/sign-in", checking, "/oidc/code", {"code": code})
    location = headers.get("Location") or ""
    if status not in (302, 303) or not location.startswith(redirect_uri + "?") or "code=" not in location:
        sys.exit(f"oidc_session: the typed code answered {status} {location}: {page[:500]}")
    print("; ".join(f"{c.name}={c.value}" for c in jar))


main()
