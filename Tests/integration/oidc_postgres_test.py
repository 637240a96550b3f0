"""Two `postern serve` on one PostgreSQL database finish, together, a sign-in through the OpenID
Connect provider that one of them began: nothing of an authorization lives in one daemon's memory.
Run by oidc-postgres.sh (OIDC_DATABASE: the libpq string of a fresh database).

Both daemons have the same issuer (`--public-url`, only text here: neither listens there), the same
master key file (it seals the signing keys both read from the database) and one mail directory
(whichever daemon's worker claims a mail writes it). Requests go to each daemon's own listen
address; the person's browser is a `requests.Session` (its cookies are per host, not per port, so
one jar serves both daemons, as one browser behind a load balancer).

The walk: the client registered on A; the browser's GET /oidc/authorize and its address form on A;
the mail's link and its button (POST /oidc/resume), then consent, on B; the code redeemed at A's
token endpoint, the ID token checked against B's keys, userinfo asked of B; the same code again at
B refused; a second authorization on B with the browser's session answered at once with a code, no
mail sent, redeemed at B.
"""
import base64
import hashlib
import os
import secrets
import urllib.parse

import pytest
import requests
from joserfc import jwt
from joserfc.jwk import KeySet
from joserfc.jws import JWSRegistry

from oidc_authlib_test import Browser, redirected_to
from postern_daemon import Daemon, FileMailbox, action_link

ADMIN = "oidc-postgres-admin-" + secrets.token_hex(8)
ISSUER = "http://auth.postern.test"
REDIRECT = "https://rp.example.com/callback"
SCOPE = "openid email"
LIMITS_OFF = ("--mail-interval", "0", "--mail-per-hour", "0", "--mail-domain-per-hour", "0", "--mail-per-hour-total", "0", "--challenge", "off", "--ip-per-minute", "0")


class Pair:
    """Daemons A and B on one database, the shared mailbox, and what no log may hold."""

    def __init__(self, work, conninfo):
        self.mail_dir = os.path.join(work, "mail")
        self.mailbox = FileMailbox(self.mail_dir)
        self.secrets = []
        shared = ("--database", conninfo, "--public-url", ISSUER, "--smtp-url", f"file:{self.mail_dir}",
                  "--master-key-file", os.path.join(work, "postern.key"), "--admin-token", ADMIN, *LIMITS_OFF)
        # These come after Daemon's own --database, --public-url and --smtp-url, and win; its
        # public_url stays the daemon's listen address, where the test sends its requests.
        self.a = Daemon(work, "oidc-a", *shared)
        try:
            self.b = Daemon(work, "oidc-b", *shared)
        except BaseException:
            self.a.stop()
            raise

    def on(self, daemon, url):
        """`url` on the issuer (a link in a mail) sent to `daemon`'s own address instead."""
        assert url.startswith(ISSUER + "/"), url
        return daemon.public_url + url[len(ISSUER):]


def authorization(daemon, client_id):
    """A new authorization request to `daemon`: (its URL, what the client must remember)."""
    verifier = secrets.token_urlsafe(48)
    started = {"verifier": verifier, "state": secrets.token_urlsafe(12), "nonce": secrets.token_urlsafe(12)}
    query = urllib.parse.urlencode({
        "response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "scope": SCOPE,
        "state": started["state"], "nonce": started["nonce"], "code_challenge_method": "S256",
        "code_challenge": base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()})
    return f"{daemon.public_url}/oidc/authorize?{query}", started


def code_of(callback, started):
    """The code of a redirect to the client, after checking its state and iss (RFC 9207)."""
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(callback).query))
    assert query.get("state") == started["state"] and query.get("iss") == ISSUER, callback
    return query["code"]


def redeem(daemon, client, code, started):
    """The token endpoint of `daemon` with the code (client_secret_basic): the requests answer."""
    return requests.post(daemon.public_url + "/oidc/token", auth=(client["id"], client["secret"]), timeout=30, data={
        "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
        "code_verifier": started["verifier"]})


def keys_of(daemon):
    answer = requests.get(daemon.public_url + "/.well-known/jwks.json", timeout=30)
    assert answer.status_code == 200, (answer.status_code, answer.text[:500])
    return answer.json()


def id_token_claims(daemon, token, client, started):
    """The ID token verified with `daemon`'s published keys, its iss, aud and nonce checked."""
    decoded = jwt.decode(token["id_token"], KeySet.import_key_set(keys_of(daemon)),
                         registry=JWSRegistry(algorithms=["ES256"]))
    claims = decoded.claims
    assert claims["iss"] == ISSUER and claims["aud"] in (client["id"], [client["id"]]), claims
    assert claims["nonce"] == started["nonce"], claims
    return claims


@pytest.fixture(scope="module")
def pair():
    work = os.environ["E2E_WORK"]
    os.makedirs(work, exist_ok=True)
    daemons = Pair(work, os.environ["OIDC_DATABASE"])
    yield daemons
    codes = [daemons.a.stop(), daemons.b.stop()]
    assert codes == [0, 0], codes
    for daemon in (daemons.a, daemons.b):
        log = open(daemon.log_path).read()
        for secret in daemons.secrets:
            assert secret not in log, f"a client secret, code or token is in {daemon.log_path}"


@pytest.fixture(scope="module")
def client(pair):
    status, answer, _ = pair.a.post("/v1/admin/oidc/clients", {
        "name": "Two daemons", "redirectUris": [REDIRECT], "scopes": ["openid", "email"]}, token=ADMIN)
    assert status == 201, (status, answer)
    assert answer["clientSecret"], answer
    pair.secrets.append(answer["clientSecret"])
    return {"id": answer["client"]["clientId"], "secret": answer["clientSecret"]}


@pytest.fixture(scope="module")
def signed_in(pair, client):
    """The first sign-in, begun on A and finished on B: the browser, the address, the code's
    redirect and what the client remembered."""
    address = f"ann-{secrets.token_hex(4)}@example.com"
    browser = Browser()
    url, started = authorization(pair.a, client["id"])
    page = browser.get(url)
    assert page.status_code == 200 and 'autocomplete="username"' in page.text, (page.status_code, page.text[:1500])
    checking = browser.submit(page, "/oidc/sign-in", {"email": address})
    assert checking.status_code == 200 and 'action="/oidc/code"' in checking.text, \
        (checking.status_code, checking.text[:1500])
    assert checking.url.startswith(pair.a.public_url + "/"), checking.url

    mail = pair.mailbox.next(address)
    link = pair.on(pair.b, action_link(mail, ISSUER, "signIn"))
    page = browser.get(link)
    assert page.status_code == 200 and 'action="/oidc/resume"' in page.text, (page.status_code, page.text[:1500])
    consent = browser.submit(page, "/oidc/resume")
    assert consent.status_code == 200 and consent.url.startswith(pair.b.public_url + "/"), \
        (consent.status_code, consent.url, consent.text[:1500])
    callback = redirected_to(browser.submit(consent, "/oidc/consent", button="allow"), REDIRECT)
    code = code_of(callback, started)
    pair.secrets.append(code)
    return {"address": address, "browser": browser, "code": code, "started": started}


def test_a_sign_in_begun_on_a_is_finished_on_b_and_its_code_redeemed_on_a(pair, client, signed_in):
    answer = redeem(pair.a, client, signed_in["code"], signed_in["started"])
    assert answer.status_code == 200, (answer.status_code, answer.text)
    token = answer.json()
    pair.secrets += [token["access_token"], token["id_token"]]
    assert token["token_type"] == "Bearer" and set(token["scope"].split()) == set(SCOPE.split()), token
    # One set of signing keys for both (sealed in the database with the shared master key).
    assert keys_of(pair.a) == keys_of(pair.b)
    claims = id_token_claims(pair.b, token, client, signed_in["started"])
    assert claims["email"] == signed_in["address"] and claims.get("email_verified") is True, claims

    info = requests.get(pair.b.public_url + "/oidc/userinfo", timeout=30,
                        headers={"Authorization": f"Bearer {token['access_token']}"})
    assert info.status_code == 200, (info.status_code, info.text)
    assert info.json()["sub"] == claims["sub"] and info.json()["email"] == signed_in["address"], info.json()
    signed_in["sub"] = claims["sub"]

    # The code, redeemed on A, is spent on B too.
    again = redeem(pair.b, client, signed_in["code"], signed_in["started"])
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant", (again.status_code, again.text)


def test_a_second_authorization_on_b_with_the_browser_session_redirects_at_once(pair, client, signed_in):
    before = pair.mailbox.count_for(signed_in["address"])
    url, started = authorization(pair.b, client["id"])
    callback = redirected_to(signed_in["browser"].get(url), REDIRECT)
    code = code_of(callback, started)
    pair.secrets.append(code)
    answer = redeem(pair.b, client, code, started)
    assert answer.status_code == 200, (answer.status_code, answer.text)
    token = answer.json()
    pair.secrets += [token["access_token"], token["id_token"]]
    claims = id_token_claims(pair.a, token, client, started)
    assert claims["sub"] == signed_in.get("sub") and claims["email"] == signed_in["address"], claims
    assert pair.mailbox.count_for(signed_in["address"]) == before, "a mail was sent for a live session"
