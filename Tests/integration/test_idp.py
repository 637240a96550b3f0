"""An OpenID provider no one here wrote, for the identity provider tests (issue 46): PyPI's authlib
server side (its `AuthorizationServer`, the code grant with `CodeChallenge` S256 and its OpenID
Connect `OpenIDCode` extension, the discovery document checked by its `OpenIDProviderMetadata`)
signing RS256 ID tokens with joserfc, the JOSE library authlib's OpenID grants sign with
(`authlib.jose` is deprecated in its favour). What this file adds is the glue: the HTTP server,
the in-memory client, codes and users.

It serves, on loopback HTTPS with a certificate from a test CA made here (smtp_server's
`make_certificates`: CA + leaf for 127.0.0.1 and localhost):
- `/.well-known/openid-configuration` (issuer `https://127.0.0.1:PORT`), `/jwks` (one RS256 key,
  `Cache-Control: max-age=300`);
- `/authorize`: the code flow (PKCE S256 required, state, nonce). GET shows a tiny form (sub and
  email, the email prefilled from `login_hint`); POST signs that user in and redirects with the
  code. `?login_hint=E&auto=1` signs in at once, without the form;
- `/token`: client_secret_basic only, answers `id_token` (RS256, `email`, `email_verified` true).

And on a second, plain-HTTP loopback port, for tests only:
- `GET /test/mint?sub=S&email=E&email_verified=true|false&aud=A&nonce=N[&exp=..&iat=..&iss=..&kid=..&events=JSON]`
  answers an ID token as text/plain signed by the same key (`iss` defaults to the issuer, `iat` to
  now, `exp` to `iat` + 600, a random `jti`; `kid` only changes the header: the signature is the
  provider's key);
  `email_verified_string=1` writes it as Apple does (`"true"`/`"false"`); `count=N` answers N
  tokens, one a line (with `spread=S` their subjects are `SUB-0` … `SUB-(S-1)` in turn), for
  bench/providers' pool;
- `GET /test/stats` answers `{"jwks": N, "discovery": N, "token": N}`: how often each was asked for.

Usage: test_idp.py --dir DIR --client ID:SECRET_FILE:REDIRECT_PREFIX (repeatable). When ready it
prints one JSON line: {"issuer", "mint", "stats", "ca", "kid"}; SIGTERM or SIGINT stops it.
"""
import argparse
import base64
import hashlib
import html
import json
import os
import secrets
import signal
import ssl
import sys
import threading
import time
import traceback
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from authlib.oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import ClientMixin, OAuth2Payload, OAuth2Request
from authlib.oauth2.rfc6749.errors import InvalidRequestError, OAuth2Error
from authlib.oauth2.rfc6749.grants import AuthorizationCodeGrant as CodeGrant
from authlib.oauth2.rfc6750 import BearerTokenGenerator
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oidc.core import UserInfo
from authlib.oidc.core.grants import OpenIDCode
from authlib.oidc.discovery import OpenIDProviderMetadata
from joserfc import jwt
from joserfc.jwk import RSAKey

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from smtp_server import make_certificates  # noqa: E402

KEY_ID = "test-idp-rs256"
ID_TOKEN_SECONDS = 600


class Client(ClientMixin):
    """A confidential web client: client_secret_basic, redirect URIs under one prefix."""

    def __init__(self, client_id, secret, redirect_prefix):
        self.client_id, self.secret, self.redirect_prefix = client_id, secret, redirect_prefix

    def get_client_id(self):
        return self.client_id

    def get_default_redirect_uri(self):
        return None

    def get_allowed_scope(self, scope):
        return " ".join(s for s in (scope or "").split() if s in ("openid", "email", "profile"))

    def check_redirect_uri(self, redirect_uri):
        return bool(redirect_uri) and redirect_uri.startswith(self.redirect_prefix)

    def check_client_secret(self, client_secret):
        return secrets.compare_digest(client_secret.encode(), self.secret.encode())

    def check_endpoint_auth_method(self, method, endpoint):
        return method == "client_secret_basic"

    def check_response_type(self, response_type):
        return response_type == "code"

    def check_grant_type(self, grant_type):
        return grant_type == "authorization_code"


class User:
    def __init__(self, sub, email):
        self.sub, self.email = sub, email


class AuthorizationCode:
    """What a code stands for until it is redeemed (once)."""

    def __init__(self, code, request):
        data = request.payload.data
        self.code, self.client_id, self.user = code, request.client.get_client_id(), request.user
        self.redirect_uri, self.scope = data.get("redirect_uri"), data.get("scope", "")
        self.nonce, self.code_challenge = data.get("nonce"), data.get("code_challenge")
        self.code_challenge_method = data.get("code_challenge_method")
        self.auth_time, self.expires = int(time.time()), time.time() + 60

    def get_redirect_uri(self):
        return self.redirect_uri

    def get_scope(self):
        return self.scope

    def get_nonce(self):
        return self.nonce

    def get_auth_time(self):
        return self.auth_time

    def get_acr(self):
        return None

    def get_amr(self):
        return None


class S256Only(CodeChallenge):
    """authlib's PKCE check, with S256 required of every client (authlib asks it of public ones)."""

    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]

    def validate_code_challenge(self, grant, redirect_uri):
        data = grant.request.payload.data
        if not data.get("code_challenge") or data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("PKCE with S256 is required", redirect_uri=redirect_uri)
        return super().validate_code_challenge(grant, redirect_uri)


class Payload(OAuth2Payload):
    def __init__(self, values):
        self.values = values

    @property
    def data(self):
        return {k: v[0] for k, v in self.values.items()}

    @property
    def datalist(self):
        return self.values


class Request(OAuth2Request):
    """An authlib request over what http.server read: query and form as {name: [values]}."""

    def __init__(self, method, uri, headers, query, form):
        super().__init__(method, uri, headers=headers)
        self._args, self._form = query, form
        merged = {k: list(v) for k, v in query.items()}
        for k, v in form.items():
            merged.setdefault(k, []).extend(v)
        self.payload = Payload(merged)

    @property
    def args(self):
        return {k: v[0] for k, v in self._args.items()}

    @property
    def form(self):
        return {k: v[0] for k, v in self._form.items()}


class Provider:
    """The state: the key, the clients, live codes, nonces seen, counters; one lock."""

    def __init__(self, issuer, clients):
        self.issuer = issuer
        self.key = RSAKey.generate_key(2048, parameters={"kid": KEY_ID, "use": "sig", "alg": "RS256"})
        self.clients = clients
        self.codes, self.nonces = {}, set()  # nonces: those a code was issued for
        self.counts = {"jwks": 0, "discovery": 0, "token": 0}
        self.lock = threading.Lock()
        self.server = self.make_server()

    def count(self, what):
        with self.lock:
            self.counts[what] += 1

    def jwks(self):
        return {"keys": [self.key.as_dict(private=False)]}

    def discovery(self):
        metadata = OpenIDProviderMetadata({
            "issuer": self.issuer,
            "authorization_endpoint": self.issuer + "/authorize",
            "token_endpoint": self.issuer + "/token",
            "jwks_uri": self.issuer + "/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "scopes_supported": ["openid", "email", "profile"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic"],
            "grant_types_supported": ["authorization_code"],
            "code_challenge_methods_supported": ["S256"],
            "claims_supported": ["sub", "email", "email_verified", "nonce"],
        })
        metadata.validate()
        return dict(metadata)

    def sign(self, claims, kid=KEY_ID):
        """An ID token with the provider's key; `kid` only names a key in the header."""
        return jwt.encode({"alg": "RS256", "kid": kid, "typ": "JWT"}, claims, self.key, algorithms=["RS256"])

    def make_server(self):
        provider = self

        class Grant(CodeGrant):
            TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic"]

            def save_authorization_code(self, code, request):
                item = AuthorizationCode(code, request)
                with provider.lock:
                    provider.codes[code] = item
                    if item.nonce:
                        provider.nonces.add(item.nonce)

            def query_authorization_code(self, code, client):
                with provider.lock:
                    item = provider.codes.get(code)
                if item and item.client_id == client.get_client_id() and item.expires > time.time():
                    return item
                return None

            def delete_authorization_code(self, authorization_code):
                with provider.lock:
                    provider.codes.pop(authorization_code.code, None)

            def authenticate_user(self, authorization_code):
                return authorization_code.user

        class IDToken(OpenIDCode):
            def exists_nonce(self, nonce, request):
                # A nonce a code was already issued for (authlib asks on the form and on its post).
                with provider.lock:
                    return nonce in provider.nonces

            def resolve_client_private_key(self, client):
                return provider.key

            def get_client_algorithm(self, client):
                return "RS256"

            def get_encode_header(self, client):
                return {"alg": "RS256", "kid": KEY_ID, "typ": "JWT"}

            def get_client_claims(self, client):
                now = int(time.time())
                return {"iss": provider.issuer, "aud": [client.get_client_id()], "iat": now, "exp": now + ID_TOKEN_SECONDS}

            def generate_user_info(self, user, scope):
                return UserInfo(sub=user.sub, email=user.email, email_verified=True)

        class Server(AuthorizationServer):
            def query_client(self, client_id):
                return provider.clients.get(client_id)

            def save_token(self, token, request):
                pass

            def create_oauth2_request(self, request):
                return request

            def handle_response(self, status, body, headers):
                return status, body, headers

            def send_signal(self, name, *args, **kwargs):
                pass

        server = Server(scopes_supported=["openid", "email", "profile"])
        server.register_token_generator("default", BearerTokenGenerator(lambda **_: secrets.token_urlsafe(32)))
        server.register_grant(Grant, [S256Only(required=True), IDToken(require_nonce=True)])
        return server


def login_form(query, error=None):
    hint = query.get("login_hint", [""])[0]
    hidden = "".join(f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v[0])}">'
                     for k, v in query.items() if k not in ("sub", "email"))
    message = f"<p>{html.escape(error)}</p>" if error else ""
    return ("<!doctype html><html><head><title>Test IdP sign-in</title></head><body>"
            f"<h1>Test IdP</h1>{message}<form method=\"post\" action=\"/authorize\">{hidden}"
            f'<label>Subject <input name="sub" id="sub" value="{html.escape(hint_sub(hint))}"></label>'
            f'<label>Email <input name="email" id="email" value="{html.escape(hint)}"></label>'
            '<button type="submit" id="sign-in">Sign in</button></form></body></html>')


def hint_sub(email):
    """The subject a `login_hint` address signs in as when the form leaves it as it is."""
    return "sub-" + hashlib.sha256(email.lower().encode()).hexdigest()[:16] if email else ""


def handler_for(provider, mint_only):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format, *args):
            sys.stderr.write("test_idp: %s %s\n" % (self.address_string(), format % args))

        def answer(self, status, body, content_type="application/json", headers=()):
            data = body if isinstance(body, bytes) else (json.dumps(body) if isinstance(body, dict) else body).encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def authlib_answer(self, result):
            status, body, headers = result
            body = json.dumps(body) if isinstance(body, dict) else (body or "")
            kind = next((v for k, v in headers if k.lower() == "content-type"), "application/json")
            self.answer(status, body, kind, [(k, v) for k, v in headers if k.lower() not in ("content-type", "cache-control")])

        def request_for(self, query, form):
            uri = (provider.issuer if not mint_only else "http://127.0.0.1") + self.path
            return Request(self.command, uri, dict(self.headers.items()), query, form)

        def read_form(self):
            length = int(self.headers.get("Content-Length") or 0)
            return urllib.parse.parse_qs(self.rfile.read(length).decode(), keep_blank_values=True)

        def do_GET(self):
            self.guarded(self.get)

        def do_POST(self):
            self.guarded(self.post)

        def guarded(self, handle):
            """A bug in the glue answers 500 and is logged, rather than a dropped connection."""
            try:
                handle()
            except Exception:
                traceback.print_exc()
                self.answer(500, {"error": "server_error"})

        def get(self):
            url = urllib.parse.urlsplit(self.path)
            query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
            if mint_only:
                if url.path == "/test/mint":
                    return self.mint(query)
                if url.path == "/test/stats":
                    with provider.lock:
                        return self.answer(200, dict(provider.counts))
                return self.answer(404, {"error": "not_found"})
            if url.path == "/.well-known/openid-configuration":
                provider.count("discovery")
                return self.answer(200, provider.discovery())
            if url.path == "/jwks":
                provider.count("jwks")
                body = json.dumps(provider.jwks()).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "public, max-age=300")
                self.end_headers()
                self.wfile.write(body)
                return
            if url.path == "/authorize":
                return self.authorize(query, {})
            return self.answer(404, {"error": "not_found"})

        def post(self):
            url = urllib.parse.urlsplit(self.path)
            query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
            if mint_only:
                return self.answer(404, {"error": "not_found"})
            form = self.read_form()
            if url.path == "/authorize":
                return self.authorize(query, form)
            if url.path == "/token":
                provider.count("token")
                return self.authlib_answer(provider.server.create_token_response(self.request_for(query, form)))
            return self.answer(404, {"error": "not_found"})

        def authorize(self, query, form):
            """GET: the request checked by authlib, then the form (or `auto=1` with a hint);
            POST: the form's user signed in and authlib's redirect with the code."""
            params = {k: v for k, v in (form or query).items() if k not in ("sub", "email", "auto")}
            request = self.request_for(params, {})
            try:
                grant = provider.server.get_consent_grant(request)
            except OAuth2Error as error:
                return self.answer(400, dict(error.get_body()))
            if self.command == "GET" and not (query.get("auto") == ["1"] and query.get("login_hint")):
                return self.answer(200, login_form(params), "text/html; charset=utf-8")
            source = form if self.command == "POST" else query
            email = (source.get("email") or source.get("login_hint") or [""])[0].strip()
            sub = (source.get("sub") or [""])[0].strip() or hint_sub(email)
            if not email or not sub:
                return self.answer(200, login_form(params, "Both a subject and an email are needed."), "text/html; charset=utf-8")
            result = provider.server.create_authorization_response(request, grant_user=User(sub, email), grant=grant)
            return self.authlib_answer(result)

        def mint(self, query):
            value = lambda name, default=None: query.get(name, [default])[0]
            now = int(time.time())
            try:
                iat = int(value("iat", now))
                exp = int(value("exp", iat + ID_TOKEN_SECONDS))
                count, spread = int(value("count", 1)), int(value("spread", 0))
            except ValueError:
                return self.answer(400, "iat, exp, count and spread are numbers\n", "text/plain")
            sub, aud = value("sub"), value("aud")
            if not sub or not aud or not 1 <= count <= 100_000:
                return self.answer(400, "sub and aud are required, count is 1 to 100000\n", "text/plain")
            claims = {"iss": value("iss", provider.issuer), "sub": sub, "aud": aud, "iat": iat, "exp": exp,
                      "auth_time": iat}
            if value("email"):
                verified = value("email_verified", "false") == "true"
                claims["email"] = value("email")
                claims["email_verified"] = ("true" if verified else "false") if value("email_verified_string") == "1" else verified
            if value("nonce"):
                claims["nonce"] = value("nonce")
            # Apple's server-to-server notification carries `events`, a JSON string (providers_test).
            if value("events"):
                claims["events"] = value("events")
            # Each token its own `jti`: two for the same claims in one second differ, as a real
            # provider's do. A pool (bench/providers) has subjects sub-0 … sub-(spread-1) in turn.
            tokens = []
            for i in range(count):
                one = dict(claims, jti=secrets.token_urlsafe(12))
                if spread:
                    one["sub"] = f"{sub}-{i % spread}"
                tokens.append(provider.sign(one, kid=value("kid", KEY_ID)))
            self.answer(200, "\n".join(tokens) + "\n", "text/plain; charset=utf-8")

    return Handler


def main():
    parser = argparse.ArgumentParser(description="A test OpenID provider on loopback (authlib).")
    parser.add_argument("--dir", required=True, help="where the CA and the server certificate are written")
    parser.add_argument("--client", action="append", default=[], help="ID:SECRET_FILE:REDIRECT_PREFIX")
    args = parser.parse_args()

    paths = make_certificates(os.path.join(args.dir, "tls"))
    https = ThreadingHTTPServer(("127.0.0.1", 0), None)
    issuer = f"https://127.0.0.1:{https.server_address[1]}"
    clients = {}
    for spec in args.client:
        client_id, secret_file, prefix = spec.split(":", 2)
        with open(secret_file) as f:
            clients[client_id] = Client(client_id, f.read().strip(), prefix)
    provider = Provider(issuer, clients)
    https.RequestHandlerClass = handler_for(provider, mint_only=False)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(paths["server.pem"], paths["server.key"])
    https.socket = context.wrap_socket(https.socket, server_side=True)
    https.daemon_threads = True
    plain = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(provider, mint_only=True))
    plain.daemon_threads = True

    for server in (https, plain):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    mint_base = f"http://127.0.0.1:{plain.server_address[1]}"
    print(json.dumps({"issuer": issuer, "mint": mint_base + "/test/mint", "stats": mint_base + "/test/stats",
                      "ca": paths["ca.pem"], "kid": KEY_ID}), flush=True)

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    https.shutdown()
    plain.shutdown()


if __name__ == "__main__":
    main()
