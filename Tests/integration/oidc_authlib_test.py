"""PyPI's authlib, a relying party no one here wrote, against Postern's OpenID Connect provider: a
real `postern serve` (SQLite in a temp dir, mail as .eml files), clients registered through the
admin API, a `requests.Session` as the person's browser (it keeps the `postern_browser` and
`postern_session` cookies, submits the hosted pages' forms and stops at the redirect to the
client, as a browser hands it to the relying party's callback). Run by oidc-authlib.sh.

What authlib does itself: the authorization URL (state, nonce, PKCE S256 from the verifier), the
authorization response's parsing (its state check), the token requests (client_secret_basic,
client_secret_post, none), refresh, revocation (RFC 7009), the bearer token on userinfo, the
discovery document's validation (Discovery 1.0, RFC 8414) and the ID token's claims (authlib's
CodeIDToken over joserfc: signature by the JWKS, iss, aud, exp, iat, nonce, azp). What the test
checks itself: `iss` in the authorization response (RFC 9207; authlib does not), rotation and
reuse of refresh tokens, and the attacker's sequences a relying party can drive from outside.
"""
import base64
import hashlib
import os
import secrets
import urllib.parse

import pytest
import requests

# The daemon answers on loopback http: authlib refuses http unless told (its own switch).
os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"

from authlib.common.urls import add_params_to_uri  # noqa: E402
from authlib.integrations.requests_client import OAuth2Session  # noqa: E402
from authlib.integrations.base_client.errors import OAuthError  # noqa: E402
from authlib.oidc.core import CodeIDToken  # noqa: E402
from authlib.oidc.discovery import OpenIDProviderMetadata  # noqa: E402
from joserfc import jwt  # noqa: E402
from joserfc.errors import UnsupportedAlgorithmError  # noqa: E402
from joserfc.jwk import KeySet  # noqa: E402
from joserfc.jws import JWSRegistry  # noqa: E402

from mail_scanner import PageParser  # noqa: E402
from postern_daemon import Daemon, action_link, six_digits  # noqa: E402

ADMIN = "oidc-authlib-admin-" + secrets.token_hex(8)
LIMITS_OFF = ("--mail-interval", "0", "--mail-per-hour", "0", "--mail-domain-per-hour", "0", "--mail-per-hour-total", "0", "--challenge", "off", "--ip-per-minute", "0")
# A confidential web app (not first-party: it asks for consent) and a public native app
# (first-party, PKCE alone, a loopback redirect URI registered without a port: RFC 8252 §7.3).
WEB_REDIRECT = "https://rp.example.com/callback"
WEB_SIGNED_OUT = "https://rp.example.com/signed-out"
NATIVE_REGISTERED = "http://127.0.0.1/callback"
FULL_SCOPE = "openid email profile offline_access"


def unique(tag):
    return f"{tag}-{secrets.token_hex(4)}@example.com"


class Postern:
    """The daemon, its discovery document and the values a test must never find in its log."""

    def __init__(self, daemon):
        self.daemon = daemon
        self.secrets = []
        answer = requests.get(daemon.public_url + "/.well-known/openid-configuration", timeout=30)
        assert answer.status_code == 200, (answer.status_code, answer.text[:500])
        self.discovery = answer.json()
        self.issuer = daemon.public_url

    def endpoint(self, name):
        return self.discovery[name]

    def register(self, **fields):
        status, answer, _ = self.daemon.post("/v1/admin/oidc/clients", fields, token=ADMIN)
        assert status == 201, (status, answer)
        client, secret = answer["client"], answer.get("clientSecret")
        assert client["clientId"] and client["name"] == fields["name"], answer
        if fields.get("public"):
            assert not secret, "a public client got a secret"
        else:
            assert secret, answer
            self.secrets.append(secret)
        return client["clientId"], secret

    def keys(self):
        answer = requests.get(self.endpoint("jwks_uri"), timeout=30)
        assert answer.status_code == 200, answer.text[:500]
        return KeySet.import_key_set(answer.json())


@pytest.fixture(scope="module")
def postern():
    work = os.environ.get("E2E_WORK") or os.path.join("/tmp", "postern-oidc-authlib-" + secrets.token_hex(4))
    os.makedirs(work, exist_ok=True)
    daemon = Daemon(work, "oidc-authlib", *LIMITS_OFF, "--admin-token", ADMIN)
    try:
        provider = Postern(daemon)
    except BaseException:
        daemon.stop()
        raise
    yield provider
    assert daemon.stop() == 0, open(daemon.log_path).read()[-4000:]
    log = open(daemon.log_path).read()
    for secret in provider.secrets:
        assert secret not in log, "a client secret, code or token is in the daemon's log"


class RelyingParty:
    """One registered client as authlib drives it, with what it must remember per authorization."""

    def __init__(self, postern, client_id, secret, redirect_uri, auth_method, scope=FULL_SCOPE, alg="ES256"):
        self.postern, self.client_id, self.secret, self.redirect_uri = postern, client_id, secret, redirect_uri
        self.auth_method, self.scope, self.alg = auth_method, scope, alg

    def session(self, auth_method=None):
        session = OAuth2Session(self.client_id, self.secret, scope=self.scope, redirect_uri=self.redirect_uri,
                                code_challenge_method="S256",
                                token_endpoint_auth_method=auth_method or self.auth_method,
                                revocation_endpoint_auth_method=auth_method or self.auth_method)
        session.trust_env = False
        return session

    def start(self, **extra):
        """A new authorization: (authlib session, the authorization URL, what to check later)."""
        session = self.session()
        verifier = secrets.token_urlsafe(48)
        nonce = secrets.token_urlsafe(16)
        url, state = session.create_authorization_url(self.postern.endpoint("authorization_endpoint"),
                                                      code_verifier=verifier, nonce=nonce, **extra)
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
        assert query["code_challenge_method"] == "S256" and query["code_challenge"] == base64.urlsafe_b64encode(
            hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode(), query
        return session, url, {"verifier": verifier, "nonce": nonce, "state": state}

    def finish(self, session, callback, started):
        """The callback's part: checks `iss` (RFC 9207), lets authlib check state and redeem the
        code (raises OAuthError), and validates the ID token. Returns (token, ID token claims)."""
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(callback).query))
        assert query.get("iss") == self.postern.issuer, f"the authorization response's iss: {callback}"
        assert query.get("state") == started["state"], callback
        token = session.fetch_token(self.postern.endpoint("token_endpoint"), authorization_response=callback,
                                    code_verifier=started["verifier"])
        self.postern.secrets += [query["code"], token["access_token"], token["id_token"]]
        if token.get("refresh_token"):
            self.postern.secrets.append(token["refresh_token"])
        return token, self.id_token_claims(token, started["nonce"])

    def id_token_claims(self, token, nonce):
        """authlib's own ID token check (as its OpenIDMixin.parse_id_token does), plus aud."""
        metadata = self.postern.discovery
        decoded = jwt.decode(token["id_token"], self.postern.keys(),
                             registry=JWSRegistry(algorithms=metadata["id_token_signing_alg_values_supported"]))
        assert decoded.header["alg"] == self.alg and decoded.header.get("kid"), decoded.header
        claims = CodeIDToken(decoded.claims, decoded.header,
                             {"iss": {"essential": True, "value": self.postern.issuer},
                              "aud": {"essential": True, "value": self.client_id}},
                             {"nonce": nonce, "client_id": self.client_id, "access_token": token["access_token"]})
        claims.validate(leeway=5)
        return claims

    def userinfo(self, token):
        session = self.session()
        session.token = token
        return session.get(self.postern.endpoint("userinfo_endpoint"), timeout=30)


class Browser:
    """The person's browser: a cookie jar, forms submitted as the page has them, no redirect
    followed (the test reads each Location)."""

    def __init__(self):
        self.http = requests.Session()
        self.http.trust_env = False

    def get(self, url):
        return self.http.get(url, allow_redirects=False, timeout=30)

    def submit(self, page, action, typed=None, button=None):
        """Submits the form of `page` (a response) that posts to the path `action`, with `typed`
        written into its fields and the submit button whose value is `button` (or its first)."""
        parser = PageParser()
        parser.feed(page.text)
        forms = [f for f in parser.forms
                 if urllib.parse.urlsplit(urllib.parse.urljoin(page.url, f["action"] or page.url)).path == action]
        assert len(forms) == 1, f"want one form posting to {action} on {page.url} ({page.status_code}): {page.text[:1500]}"
        form = forms[0]
        assert form["method"] == "POST", form
        fields = list(form["fields"])
        names = [n for n, _ in fields]
        for name, value in (typed or {}).items():
            assert name in names, f"the form to {action} has no field {name}: {names}"
            fields = [(n, value if n == name else v) for n, v in fields]
        pressed = [b for b in form["buttons"] if button is None or b[1] == button]
        assert pressed or button is None, f"no button {button} in {form['buttons']}"
        if pressed and pressed[0][0]:
            fields.append(pressed[0])
        return self.http.post(urllib.parse.urljoin(page.url, form["action"]), data=fields, allow_redirects=False,
                              timeout=30)


def redirected_to(answer, redirect_uri):
    """The Location of a redirect to the client's `redirect_uri` (with a code, not an error)."""
    assert answer.status_code in (302, 303), (answer.status_code, answer.headers, answer.text[:1500])
    location = answer.headers["Location"]
    assert location.startswith(redirect_uri + "?"), f"redirected to {location}, not {redirect_uri}"
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query))
    assert "code" in query and "error" not in query, location
    return location


def ask_for_mail(postern, browser, url, address):
    """GET authorize (the sign-in page), type the address: the check-mail page and the mail."""
    page = browser.get(url)
    assert page.status_code == 200 and "text/html" in page.headers.get("Content-Type", ""), \
        (page.status_code, page.headers, page.text[:1000])
    assert 'type="email"' in page.text, page.text[:1500]
    checking = browser.submit(page, "/oidc/sign-in", {"email": address})
    assert checking.status_code == 200, (checking.status_code, checking.text[:1500])
    return checking, postern.daemon.mailbox.next(address)


def signed_in_by_link(postern, browser, mail):
    """Opens the mail's link in `browser` and presses the page's one button."""
    page = browser.get(action_link(mail, postern.daemon.public_url, "signIn"))
    assert page.status_code == 200, (page.status_code, page.text[:1500])
    return browser.submit(page, "/oidc/resume")


def link_opened_elsewhere(postern, browser, mail):
    """The mail's link in a browser that did not ask: its page, and what pressing a button to
    /oidc/resume answers, if the page has one."""
    page = browser.get(action_link(mail, postern.daemon.public_url, "signIn"))
    answers = [page]
    if "/oidc/resume" in page.text:
        answers.append(browser.submit(page, "/oidc/resume"))
    return answers


def consented(browser, answer, decision="allow"):
    assert answer.status_code == 200, (answer.status_code, answer.headers, answer.text[:1500])
    return browser.submit(answer, "/oidc/consent", button=decision)


@pytest.fixture(scope="module")
def web(postern):
    client_id, secret = postern.register(name="authlib web", redirectUris=[WEB_REDIRECT],
                                         postLogoutRedirectUris=[WEB_SIGNED_OUT],
                                         scopes=["openid", "email", "profile", "offline_access"])
    return RelyingParty(postern, client_id, secret, WEB_REDIRECT, "client_secret_basic")


@pytest.fixture(scope="module")
def native(postern):
    client_id, _ = postern.register(name="authlib native", redirectUris=[NATIVE_REGISTERED], public=True,
                                    firstParty=True, scopes=["openid", "email", "profile", "offline_access"])
    redirect = f"http://127.0.0.1:{postern.daemon.port + 1}/callback"
    return RelyingParty(postern, client_id, None, redirect, "none")


@pytest.fixture(scope="module")
def person(postern, web):
    """Someone signed in for the web client the first time: the link opened in the same browser,
    the consent given. Keeps the browser (its session) and what the walk returned."""
    address = unique("ann")
    browser = Browser()
    session, url, started = web.start()
    _, mail = ask_for_mail(postern, browser, url, address)
    answer = consented(browser, signed_in_by_link(postern, browser, mail))
    callback = redirected_to(answer, WEB_REDIRECT)
    token, claims = web.finish(session, callback, started)
    return {"address": address, "browser": browser, "token": token, "claims": claims, "callback": callback}


def authorize_at_once(rp, browser, **extra):
    """An authorization in a browser with a live session: a redirect with a code at once."""
    session, url, started = rp.start(**extra)
    return session, redirected_to(browser.get(url), rp.redirect_uri), started


def token_error(call):
    with pytest.raises(OAuthError) as raised:
        call()
    return raised.value.error


def test_discovery_is_what_authlib_accepts(postern):
    document = postern.discovery
    # Discovery 1.0 §3: RS256 MUST be among the ID token's algorithms. It is (a client is registered
    # for ES256, the default, or RS256), and authlib's validator takes the whole document as it is.
    OpenIDProviderMetadata(document).validate()
    # The control: without RS256 the same validator refuses it.
    with pytest.raises(ValueError, match="RS256"):
        OpenIDProviderMetadata({**document, "id_token_signing_alg_values_supported": ["ES256"]}).validate()
    base = postern.issuer
    assert document["issuer"] == base
    assert document["authorization_endpoint"] == base + "/oidc/authorize"
    assert document["token_endpoint"] == base + "/oidc/token"
    assert document["userinfo_endpoint"] == base + "/oidc/userinfo"
    assert document["revocation_endpoint"] == base + "/oidc/revoke"
    assert document["end_session_endpoint"] == base + "/oidc/logout"
    assert document["jwks_uri"] == base + "/.well-known/jwks.json"
    assert document["code_challenge_methods_supported"] == ["S256"]
    assert document["response_types_supported"] == ["code"]
    assert document["id_token_signing_alg_values_supported"] == ["ES256", "RS256"]
    assert document["authorization_response_iss_parameter_supported"] is True
    assert set(document["token_endpoint_auth_methods_supported"]) == {"client_secret_basic", "client_secret_post", "none"}
    keys = postern.keys().as_dict()["keys"]
    # The ES256 keys first, then the RS256 ones (2048 bits, e = 65537), each with its kid.
    assert [k["kty"] for k in keys] == ["EC", "RSA"] and all(k.get("kid") for k in keys), keys
    assert keys[0]["crv"] == "P-256", keys
    modulus = base64.urlsafe_b64decode(keys[1]["n"] + "=" * (-len(keys[1]["n"]) % 4))
    assert len(modulus) == 256 and modulus[0] >= 0x80 and keys[1]["e"] == "AQAB", keys[1]


def test_web_client_link_in_the_same_browser_consent_and_a_valid_id_token(postern, web, person):
    claims = person["claims"]
    assert claims["email"] == person["address"] and claims.get("email_verified") is True, dict(claims)
    assert claims["sub"] and claims.get("azp", web.client_id) == web.client_id
    assert isinstance(claims.get("auth_time"), int) and claims["auth_time"] <= claims["iat"] <= claims["exp"], dict(claims)
    token = person["token"]
    assert token["token_type"].lower() == "bearer" and token.get("refresh_token") and int(token["expires_in"]) > 0, token
    assert set(token["scope"].split()) == set(FULL_SCOPE.split()), token
    # The access token is a JWT for resource servers (RFC 9068): signed by the same keys.
    access = jwt.decode(token["access_token"], postern.keys(), registry=JWSRegistry(algorithms=["ES256"]))
    assert access.header.get("typ") == "at+jwt" and access.claims["sub"] == claims["sub"], (access.header, access.claims)
    assert access.claims["iss"] == postern.issuer and access.claims["client_id"] == web.client_id, access.claims


def test_rs256_client_gets_id_and_access_tokens_authlib_validates_against_the_jwks(postern):
    """A confidential client registered for RS256 (client_secret_post): the link in the same
    browser, consent, and an ID token authlib checks against the JWKS's RSA key; the access token
    is RS256 too and works at userinfo; a refresh is RS256 again."""
    client_id, secret = postern.register(name="authlib rs256", redirectUris=[WEB_REDIRECT],
                                         scopes=["openid", "email", "offline_access"], idTokenSignedResponseAlg="RS256")
    status, listed, _ = postern.daemon.get("/v1/admin/oidc/clients", token=ADMIN)
    assert status == 200 and [c["idTokenSignedResponseAlg"] for c in listed["clients"] if c["clientId"] == client_id] == ["RS256"], listed
    rp = RelyingParty(postern, client_id, secret, WEB_REDIRECT, "client_secret_post", scope="openid email offline_access",
                      alg="RS256")
    address = unique("rsa")
    browser = Browser()
    session, url, started = rp.start()
    _, mail = ask_for_mail(postern, browser, url, address)
    callback = redirected_to(consented(browser, signed_in_by_link(postern, browser, mail)), WEB_REDIRECT)
    token, claims = rp.finish(session, callback, started)
    assert claims["email"] == address and claims["aud"] == client_id, dict(claims)
    rsa_kids = [k["kid"] for k in postern.keys().as_dict()["keys"] if k["kty"] == "RSA"]
    assert jwt.decode(token["id_token"], postern.keys(), registry=JWSRegistry(algorithms=["RS256"])).header["kid"] in rsa_kids
    # A relying party that allows ES256 only refuses it: the header's alg is the key's.
    with pytest.raises(UnsupportedAlgorithmError):
        jwt.decode(token["id_token"], postern.keys(), registry=JWSRegistry(algorithms=["ES256"]))
    access = jwt.decode(token["access_token"], postern.keys(), registry=JWSRegistry(algorithms=["RS256"]))
    assert access.header["alg"] == "RS256" and access.header.get("typ") == "at+jwt", access.header
    assert access.claims["client_id"] == client_id and access.claims["sub"] == claims["sub"], access.claims
    answer = rp.userinfo(token)
    assert answer.status_code == 200 and answer.json()["sub"] == claims["sub"], (answer.status_code, answer.text)
    refreshed = rp.session().refresh_token(postern.endpoint("token_endpoint"), refresh_token=token["refresh_token"])
    postern.secrets += [refreshed["access_token"], refreshed["id_token"], refreshed["refresh_token"]]
    assert jwt.decode(refreshed["id_token"], postern.keys(), registry=JWSRegistry(algorithms=["RS256"])).claims["sub"] == claims["sub"]


def test_userinfo_answers_the_bearer_of_the_access_token(postern, web, person):
    answer = web.userinfo(person["token"])
    assert answer.status_code == 200, (answer.status_code, answer.text)
    info = answer.json()
    assert info["sub"] == person["claims"]["sub"] and info["email"] == person["address"], info
    assert info["email_verified"] is True, info
    refused = requests.get(postern.endpoint("userinfo_endpoint"), headers={"Authorization": "Bearer not-a-token"},
                           timeout=30)
    assert refused.status_code == 401 and "invalid_token" in refused.headers.get("WWW-Authenticate", ""), \
        (refused.status_code, refused.headers)


def test_a_second_authorization_with_the_browser_session_needs_no_mail(postern, web, person):
    before = postern.daemon.mailbox.count_for(person["address"])
    session, callback, started = authorize_at_once(web, person["browser"])
    token, claims = web.finish(session, callback, started)
    assert claims["sub"] == person["claims"]["sub"] and claims["nonce"] == started["nonce"]
    assert postern.daemon.mailbox.count_for(person["address"]) == before, "a mail was sent for a live session"


def test_refresh_rotates_and_a_reused_refresh_token_is_invalid_grant_and_ends_its_family(postern, web, person):
    session, callback, started = authorize_at_once(web, person["browser"])
    first, _ = web.finish(session, callback, started)
    endpoint = postern.endpoint("token_endpoint")
    # client_secret_post this time (the first exchange used client_secret_basic).
    second = web.session("client_secret_post").refresh_token(endpoint, refresh_token=first["refresh_token"])
    postern.secrets += [second["refresh_token"], second["access_token"]]
    assert second["refresh_token"] != first["refresh_token"] and second.get("id_token"), second
    assert web.userinfo(dict(second)).status_code == 200
    # Two tabs refreshing at once: the same token again, while its successor is unused, gets that
    # same successor (the reuse grace), not a second live token.
    again = web.session().refresh_token(endpoint, refresh_token=first["refresh_token"])
    assert again["refresh_token"] == second["refresh_token"], "a reuse within the grace gave a second live token"
    third = web.session().refresh_token(endpoint, refresh_token=second["refresh_token"])
    postern.secrets += [third["refresh_token"], third["access_token"]]
    # The first token again, after its successor was used: theft (RFC 9700 §4.14.2), the family dies.
    assert token_error(lambda: web.session().refresh_token(endpoint, refresh_token=first["refresh_token"])) == "invalid_grant"
    assert token_error(lambda: web.session().refresh_token(endpoint, refresh_token=third["refresh_token"])) == "invalid_grant"


def test_revocation_ends_the_refresh_token(postern, web, person):
    session, callback, started = authorize_at_once(web, person["browser"])
    token, _ = web.finish(session, callback, started)
    answer = web.session().revoke_token(postern.endpoint("revocation_endpoint"), token=token["refresh_token"],
                                        token_type_hint="refresh_token")
    assert answer.status_code == 200, (answer.status_code, answer.text)
    assert token_error(lambda: web.session().refresh_token(postern.endpoint("token_endpoint"),
                                                           refresh_token=token["refresh_token"])) == "invalid_grant"
    # RFC 7009 §2.2: an unknown token is answered 200 too; a wrong secret is invalid_client.
    assert web.session().revoke_token(postern.endpoint("revocation_endpoint"), token="no-such-token").status_code == 200
    wrong = RelyingParty(postern, web.client_id, "wrong-" + secrets.token_hex(16), WEB_REDIRECT, "client_secret_basic")
    refused = wrong.session().revoke_token(postern.endpoint("revocation_endpoint"), token="no-such-token")
    assert refused.status_code == 401 and refused.json()["error"] == "invalid_client", (refused.status_code, refused.text)
    # Its access token, revoked by the client (it names the grant): the refresh token it came with dies.
    session, callback, started = authorize_at_once(web, person["browser"])
    token, _ = web.finish(session, callback, started)
    answer = web.session().revoke_token(postern.endpoint("revocation_endpoint"), token=token["access_token"],
                                        token_type_hint="access_token")
    assert answer.status_code == 200, (answer.status_code, answer.text)
    assert token_error(lambda: web.session().refresh_token(postern.endpoint("token_endpoint"),
                                                           refresh_token=token["refresh_token"])) == "invalid_grant"


def test_userinfo_refuses_the_access_token_of_a_revoked_grant(postern, web, person):
    # docs/oidc.md: an access token is not revocable alone, "its family is revoked, which userinfo
    # checks": revoked by the client, and by a replayed code.
    session, callback, started = authorize_at_once(web, person["browser"])
    token, _ = web.finish(session, callback, started)
    assert web.userinfo(token).status_code == 200
    assert web.session().revoke_token(postern.endpoint("revocation_endpoint"), token=token["refresh_token"],
                                      token_type_hint="refresh_token").status_code == 200
    after = web.userinfo(token)
    assert after.status_code == 401, ("after revocation", after.status_code, after.text)
    session, callback, started = authorize_at_once(web, person["browser"])
    token, _ = web.finish(session, callback, started)
    assert token_error(lambda: web.finish(web.session(), callback, started)) == "invalid_grant"
    after = web.userinfo(token)
    assert after.status_code == 401, ("after the code's replay", after.status_code, after.text)


def test_public_client_pkce_alone_code_typed_loopback_any_port(postern, native):
    address = unique("bo")
    browser = Browser()
    session, url, started = native.start()
    checking, mail = ask_for_mail(postern, browser, url, address)
    # First-party: the typed code leads straight back to the app, no consent page.
    answer = browser.submit(checking, "/oidc/code", {"code": six_digits(mail)})
    callback = redirected_to(answer, native.redirect_uri)
    token, claims = native.finish(session, callback, started)
    assert claims["email"] == address and token.get("refresh_token"), (dict(claims), token)
    assert native.userinfo(token).json()["email"] == address
    rotated = native.session().refresh_token(postern.endpoint("token_endpoint"), refresh_token=token["refresh_token"])
    postern.secrets += [rotated["refresh_token"], rotated["access_token"]]
    assert rotated["refresh_token"] != token["refresh_token"]
    assert native.session().revoke_token(postern.endpoint("revocation_endpoint"), token=rotated["refresh_token"],
                                         token_type_hint="refresh_token").status_code == 200
    assert token_error(lambda: native.session().refresh_token(postern.endpoint("token_endpoint"),
                                                              refresh_token=rotated["refresh_token"])) == "invalid_grant"


def test_the_link_opened_in_another_browser_signs_nothing_in(postern, web):
    address = unique("cy")
    asking = Browser()
    session, url, started = web.start()
    checking, mail = ask_for_mail(postern, asking, url, address)
    # The mail opened elsewhere (a phone, a scanner, someone the mail was forwarded to).
    elsewhere = Browser()
    for answer in link_opened_elsewhere(postern, elsewhere, mail):
        assert answer.status_code not in (301, 302, 303), (answer.status_code, answer.headers)
        assert "/oidc/consent" not in answer.text, "another browser reached the consent page"
    assert not any(c.name in ("postern_session", "__Host-postern_session") for c in elsewhere.http.cookies), \
        "another browser got a session"
    # Where it began, the typed code still finishes it.
    answer = consented(asking, asking.submit(checking, "/oidc/code", {"code": six_digits(mail)}))
    web.finish(session, redirected_to(answer, WEB_REDIRECT), started)


def test_a_replayed_code_is_invalid_grant_and_revokes_what_it_gave(postern, web, person):
    session, callback, started = authorize_at_once(web, person["browser"])
    token, _ = web.finish(session, callback, started)
    assert token_error(lambda: web.finish(web.session(), callback, started)) == "invalid_grant"
    assert token_error(lambda: web.session().refresh_token(postern.endpoint("token_endpoint"),
                                                           refresh_token=token["refresh_token"])) == "invalid_grant"


def test_a_code_redeemed_by_another_client_is_invalid_grant(postern, web, native, person):
    _, callback, started = authorize_at_once(native, person["browser"])
    code = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(callback).query))["code"]
    # The web client, authenticated with its own secret, sends the native app's code, redirect
    # URI and verifier.
    thief = web.session()
    assert token_error(lambda: thief.fetch_token(postern.endpoint("token_endpoint"), grant_type="authorization_code",
                                                 code=code, redirect_uri=native.redirect_uri,
                                                 code_verifier=started["verifier"])) == "invalid_grant"


def test_a_wrong_code_verifier_is_invalid_grant(postern, web, person):
    session, callback, started = authorize_at_once(web, person["browser"])
    wrong = dict(started, verifier=secrets.token_urlsafe(48))
    assert token_error(lambda: web.finish(session, callback, wrong)) == "invalid_grant"
    # No verifier at all for a code with a challenge: refused as well (a PKCE downgrade).
    session, callback, started = authorize_at_once(web, person["browser"])
    code = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(callback).query))["code"]
    assert token_error(lambda: session.fetch_token(postern.endpoint("token_endpoint"), grant_type="authorization_code",
                                                   code=code)) in ("invalid_grant", "invalid_request")


def test_logout_asks_without_a_hint_and_redirects_with_one(postern, web, person):
    browser = person["browser"]
    end_session = postern.endpoint("end_session_endpoint")
    # No id_token_hint: a page asking, never a redirect, and the session lives on.
    asking = browser.get(add_params_to_uri(end_session, {"client_id": web.client_id,
                                                         "post_logout_redirect_uri": WEB_SIGNED_OUT}))
    assert asking.status_code == 200, (asking.status_code, asking.headers)
    authorize_at_once(web, browser)
    # Signing out for real, as authlib's create_logout_url builds it.
    session, callback, started = authorize_at_once(web, browser)
    token, _ = web.finish(session, callback, started)
    state = secrets.token_urlsafe(12)
    answer = browser.get(add_params_to_uri(end_session, {"id_token_hint": token["id_token"],
                                                         "post_logout_redirect_uri": WEB_SIGNED_OUT, "state": state}))
    assert answer.status_code in (302, 303), (answer.status_code, answer.headers, answer.text[:1000])
    location = answer.headers["Location"]
    assert location.split("?")[0] == WEB_SIGNED_OUT, location
    assert dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query)).get("state") == state, location
    # The browser session is over: the next authorization shows the sign-in page again.
    _, url, _ = web.start()
    page = browser.get(url)
    assert page.status_code == 200 and 'type="email"' in page.text, (page.status_code, page.headers)
    # A valid hint with a post_logout_redirect_uri not registered (a suffix of one): no redirect there.
    for unregistered in (WEB_SIGNED_OUT + "/x", WEB_SIGNED_OUT.upper(), "https://evil.example/signed-out"):
        answer = browser.get(add_params_to_uri(end_session, {"id_token_hint": token["id_token"],
                                                             "post_logout_redirect_uri": unregistered}))
        assert answer.status_code not in (301, 302, 303, 307, 308), (unregistered, answer.status_code, answer.headers)
