"""A check schemathesis runs beside its own (loaded through SCHEMATHESIS_HOOKS by
schemathesis.sh): a schema-valid request may be refused only because the credential in it is
wrong, or because its new password is the address (the one rule between two fields) — never for
its shape. The operations listed in schemathesis.toml may answer a positive case 400; this says
which 400s those may be, and holds every other operation to the same."""
import schemathesis
from hypothesis import strategies

# The codes that mean "this credential does not open anything": what a made-up oobCode, refresh
# token, 6-digit code or password gets, and what no schema can rule out.
CREDENTIAL_CODES = {
    "INVALID_OOB_CODE",
    "EXPIRED_OOB_CODE",
    # A genuine code that was used, superseded or is bound to another browser (never a made-up one).
    "LINK_USED",
    "LINK_SUPERSEDED",
    "LINK_OTHER_BROWSER",
    "EMAIL_MISMATCH",
    "INVALID_CODE_VERIFIER",
    "INVALID_LOGIN_CREDENTIALS",
    "INVALID_REFRESH_TOKEN",
    "USER_DISABLED",
    # A phone claim's SMS code, made up.
    "INVALID_PHONE_CODE",
    # A number: no string schema says which numbers exist (E.164's country codes and lengths) or
    # which countries the operator sends SMS to (--sms-countries).
    "INVALID_PHONE_NUMBER",
    "SMS_COUNTRY_NOT_ALLOWED",
    # An identity provider's ID token, made up (or Apple's notification): no schema makes a signed one.
    "INVALID_PROVIDER_TOKEN",
}


# OAuth's codes for a credential that opens nothing (a made-up code, refresh token or client), or
# a form without the parameters its grant needs (grant_type says which, a rule no schema states).
OAUTH_CREDENTIAL_ERRORS = {"invalid_grant", "invalid_client", "invalid_request", "unsupported_grant_type", "invalid_scope"}


@schemathesis.check
def positive_rejection_names_a_credential(ctx, response, case):
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 400:
        return None
    if not (response.headers.get("content-type") or [""])[0].startswith("application/json"):
        return None  # the hosted page says it in HTML; its 400 is always the link's
    error = response.json().get("error", {})
    # OAuth's endpoints answer OAuth's errors (RFC 6749 §5.2): a made-up code, refresh token or
    # client is invalid_grant or invalid_client, and no schema can make a real one.
    if isinstance(error, str):
        if case.path in ("/oidc/token", "/oidc/revoke") and error in OAUTH_CREDENTIAL_ERRORS:
            return None
        raise AssertionError(f"a schema-valid request was refused {error}: {response.json().get('error_description')}")
    # The one rule between two fields: the new password must not be the address or its local part.
    if error.get("code") == "WEAK_PASSWORD" and error.get("rule") == "isTheAddress":
        return None
    # The other: bindBrowser makes the browser's cookie the link's verifier, so it takes no
    # codeChallenge and no approval (the field's description says so).
    body = case.body if isinstance(case.body, dict) else {}
    if (error.get("code") == "INVALID_ARGUMENT" and body.get("bindBrowser") is True
            and (body.get("codeChallenge") or body.get("approval") is True)
            and (error.get("message") or "").startswith("bindBrowser cannot be combined")):
        return None
    # And a webhook URL at a private address (the url field's description says so).
    if (error.get("code") == "INVALID_ARGUMENT" and case.path == "/v1/admin/webhooks"
            and "--allow-private-targets" in (error.get("message") or "")):
        return None
    # And an OpenID Connect client's redirect URIs: https, or http on a loopback address, or a
    # public client's private-use scheme; no fragment, no user information (the field's
    # description says so; no string pattern states what a URI means).
    if (error.get("code") == "INVALID_ARGUMENT" and case.path == "/v1/admin/oidc/clients"
            and (error.get("message") or "").startswith(("redirectUris[", "postLogoutRedirectUris["))):
        return None
    # And a suppression list's, the user list's or an activity's cursor: opaque, valid only as this server answered it (nextCursor).
    if (error.get("code") == "INVALID_ARGUMENT"
            and case.path in ("/v1/admin/suppressions", "/v1/admin/users", "/v1/me/activity", "/v1/admin/users/{uid}/activity")
            and (error.get("message") or "").startswith("cursor is not one this server answered")):
        return None
    # And a public client's secret: it has none to rotate (a rule between the client's stored
    # kind and the call, which no schema of the request can state; the summary says so).
    if (error.get("code") == "INVALID_ARGUMENT" and case.path == "/v1/admin/oidc/clients/{clientId}/rotate-secret"
            and "public client has no secret" in (error.get("message") or "")):
        return None
    # And a provider's delivery event: only SNS makes a message (a JSON object of its fields),
    # only Postmark or Resend a webhook body; the raw body's schema is any text.
    if error.get("code") == "INVALID_ARGUMENT" and case.path.startswith("/v1/delivery-events/"):
        return None
    if error.get("code") not in CREDENTIAL_CODES:
        raise AssertionError(
            f"a schema-valid request was refused {error.get('code')}: {error.get('message')}")
    return None


# POST /v1/admin/bounces takes the raw report as mail brought it (message/rfc822), which
# schemathesis cannot make by itself: mail-shaped bytes, some of them delivery reports naming a
# made-up reverse path (answered `ignored`: no tag of ours), the rest any text after a header.
_REPORT = (
    b"Content-Type: multipart/report; report-type=delivery-status; boundary=\"B\"\r\n\r\n"
    b"--B\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; relay.test\r\n\r\n"
    b"Final-Recipient: rfc822; a@example.org\r\nAction: failed\r\nStatus: 5.1.1\r\n\r\n--B--\r\n"
)
_MAIL = strategies.one_of(
    strategies.just(_REPORT),
    strategies.text(min_size=1).map(lambda body: ("Subject: x\r\n\r\n" + body).encode("utf-8")),
    strategies.binary(min_size=1).map(lambda body: b"To: bounce+1.1.0000000000000000@relay.test\r\n\r\n" + body),
)
schemathesis.openapi.media_type("message/rfc822", _MAIL)


# URLs in answers. schemathesis scans every string of a 2xx JSON body (and Location) for links
# to infer, with Python's `urlsplit`, which raises on a string that looks like a URL but is none
# (`http://[ab`: "Invalid IPv6 URL"; `http://a／b`: NFKC) — and the raise crashed the whole run
# instead of saying which answer held it. That happened when POST /v1/admin/webhooks stored and
# echoed such a URL (a daemon bug, fixed: WebhookEndpointRequestBody.urlPattern). So two parts:
# - a check: a URL the daemon emits (a Location header, a field named `url`, `…Url`, `…Link`)
#   must split — a finding with the case to replay, never a crash;
# - free text the daemon stores as given (displayName, attributes) may legitimately look like a
#   broken URL: for the link scan such a string is no link, not a reason to stop the run.
from urllib.parse import urlsplit

from schemathesis.engine import observations as _observations


def _url_fields(value, pointer=""):
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str) and (key == "url" or key.endswith(("Url", "URL", "Link"))):
                yield f"{pointer}/{key}", item
            else:
                yield from _url_fields(item, f"{pointer}/{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _url_fields(item, f"{pointer}/{index}")


@schemathesis.check
def emitted_urls_are_urls(ctx, response, case):
    if not 200 <= response.status_code < 400:
        return None
    for location in response.headers.get("location", []):
        try:
            urlsplit(location)
        except ValueError as error:
            raise AssertionError(f"Location {location!r} is no URL: {error}") from None
    if not (response.headers.get("content-type") or [""])[0].startswith("application/json"):
        return None
    try:
        document = response.json()
    except ValueError:
        return None
    for pointer, value in _url_fields(document):
        try:
            urlsplit(value)
        except ValueError as error:
            raise AssertionError(f"the answer's {pointer} {value!r} is no URL: {error}") from None
    return None


# schemathesis is pinned (Tests/requirements.txt); if its scan moves, say so rather than run unguarded.
assert hasattr(_observations, "_same_origin_path"), "schemathesis moved its body-URL scan: revisit schemathesis_hooks.py"
_same_origin_path = _observations._same_origin_path


def _same_origin_path_or_none(value, origin):
    try:
        return _same_origin_path(value, origin)
    except ValueError:
        return None  # not a URL after all: nothing to link to


_observations._same_origin_path = _same_origin_path_or_none
