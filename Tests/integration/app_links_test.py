"""Links that open the app (issue 12 point 5), against a real `postern serve` started with the
settings (SQLite in a temp dir, mail as files, free loopback ports). Run by app-links.sh, which
checks that every test ran and none skipped.

The formats checked are the documented ones:
- Apple, "Supporting associated domains" (developer.apple.com/documentation/xcode/supporting-
  associated-domains) and applinks.Details / applinks.Details.Components: an object with
  `applinks.details`, an array of objects with `appIDs` (each `<Team ID>.<bundle ID>`) and
  `components` (objects with `/` the path pattern and an optional `comment`), and
  `webcredentials.apps`; served at /.well-known/apple-app-site-association as application/json
  with no redirect.
- Google, Digital Asset Links (developers.google.com/digital-asset-links, Android App Links
  "Declare website associations"): a JSON array of statements with `relation`
  ["delegate_permission/common.handle_all_urls"] and `target` {`namespace`: "android_app",
  `package_name`, `sha256_cert_fingerprints`: upper-case hex pairs joined by colons}, at
  /.well-known/assetlinks.json.

Environment: POSTERN_BIN (the postern binary), E2E_WORK (a temp dir; pytest_lib.bash sets both).
"""
import hashlib
import http.client
import json
import os
import re
import subprocess
import tempfile
import urllib.parse

import pytest

from postern_daemon import POSTERN, Daemon

APPLE_IDS = ["ABCDE12345.com.example.app", "9JA89QQLNQ.com.example.app.beta"]
FINGERPRINT_RELEASE = ":".join(f"{b:02X}" for b in hashlib.sha256(b"release certificate").digest())
FINGERPRINT_DEBUG = ":".join(f"{b:02x}" for b in hashlib.sha256(b"debug certificate").digest())  # lower case on purpose
ANDROID = [("com.example.app", FINGERPRINT_RELEASE), ("com.example.app", FINGERPRINT_DEBUG),
           ("org.example.other_app", FINGERPRINT_RELEASE)]
APP_NAME = "Acme & Co <Beta>"
SUPPORT = "help@acme.example"

APPLE_PATH = "/.well-known/apple-app-site-association"
ANDROID_PATH = "/.well-known/assetlinks.json"
APP_ID = re.compile(r"^[A-Z0-9]{10}\.[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$")
FINGERPRINT = re.compile(r"^[0-9A-F]{2}(:[0-9A-F]{2}){31}$")


@pytest.fixture(scope="module")
def work():
    path = os.environ.get("E2E_WORK") or tempfile.mkdtemp(prefix="postern-app-links-")
    os.makedirs(path, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def linked(work):
    daemon = Daemon(work, "linked",
                    "--apple-app-ids", " , ".join(APPLE_IDS),
                    "--android-apps", ",".join(f"{p}:{f}" for p, f in ANDROID),
                    "--app-name", APP_NAME, "--support-email", SUPPORT)
    yield daemon
    assert daemon.stop() == 0, open(daemon.log_path).read()[-3000:]


@pytest.fixture(scope="module")
def plain(work):
    daemon = Daemon(work, "plain")
    yield daemon
    assert daemon.stop() == 0, open(daemon.log_path).read()[-3000:]


def fetch(daemon, path, method="GET"):
    """One request with http.client, which never follows a redirect: (status, headers, body)."""
    connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=10)
    try:
        connection.request(method, path)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def test_apple_app_site_association_has_apples_documented_shape(linked):
    status, headers, body = fetch(linked, APPLE_PATH)
    assert status == 200, (status, body)
    assert "location" not in headers, headers
    assert headers["content-type"] == "application/json", headers
    document = json.loads(body)
    assert set(document) == {"applinks", "webcredentials"}, document
    # applinks: the iOS 13+ form, details as an array of {appIDs, components}.
    assert set(document["applinks"]) == {"details"}, document["applinks"]
    details = document["applinks"]["details"]
    assert isinstance(details, list) and len(details) == 1, details
    assert set(details[0]) == {"appIDs", "components"}, details[0]
    assert details[0]["appIDs"] == APPLE_IDS, details[0]
    assert all(APP_ID.match(app_id) for app_id in details[0]["appIDs"]), details[0]
    components = details[0]["components"]
    assert isinstance(components, list) and len(components) == 1, components
    component = components[0]
    assert set(component) <= {"/", "?", "#", "exclude", "comment"}, component
    assert component["/"] == "/action", component
    assert isinstance(component.get("comment", ""), str)
    assert "exclude" not in component
    # The component matches the links the daemon mails, and nothing else it serves.
    assert urllib.parse.urlsplit(linked.public_url + "/action?mode=signIn&oobCode=x").path == component["/"]
    # webcredentials: the same apps, for passwords and passkeys.
    assert document["webcredentials"] == {"apps": APPLE_IDS}, document["webcredentials"]
    status, headers, body = fetch(linked, APPLE_PATH, method="HEAD")
    assert status == 200 and body == b"" and headers["content-type"] == "application/json", (status, headers)


def test_assetlinks_has_googles_documented_shape(linked):
    status, headers, body = fetch(linked, ANDROID_PATH)
    assert status == 200, (status, body)
    assert "location" not in headers, headers
    assert headers["content-type"] == "application/json", headers
    statements = json.loads(body)
    assert isinstance(statements, list) and len(statements) == 2, statements
    by_package = {}
    for statement in statements:
        assert set(statement) == {"relation", "target"}, statement
        assert statement["relation"] == ["delegate_permission/common.handle_all_urls"], statement
        target = statement["target"]
        assert set(target) == {"namespace", "package_name", "sha256_cert_fingerprints"}, target
        assert target["namespace"] == "android_app", target
        assert all(FINGERPRINT.match(f) for f in target["sha256_cert_fingerprints"]), target
        by_package[target["package_name"]] = target["sha256_cert_fingerprints"]
    assert by_package == {
        "com.example.app": [FINGERPRINT_RELEASE, FINGERPRINT_DEBUG.upper()],
        "org.example.other_app": [FINGERPRINT_RELEASE],
    }, by_package


def test_without_the_settings_both_files_answer_404(plain):
    for path in (APPLE_PATH, ANDROID_PATH):
        status, headers, body = fetch(plain, path)
        assert status == 404 and "location" not in headers, (path, status, headers)
        assert headers["content-type"] == "application/json", headers
        error = json.loads(body)["error"]
        assert error["code"] == "NOT_FOUND" and error["message"], error
    # Both stay in the contract either way.
    status, _, body = fetch(plain, "/openapi.json")
    paths = json.loads(body)["paths"]
    assert APPLE_PATH in paths and ANDROID_PATH in paths, sorted(paths)


def test_the_hosted_page_names_the_app_and_the_support_address(linked):
    status, headers, body = fetch(linked, "/action?oobCode=nothing&lang=de")
    page = body.decode()
    assert status == 400 and headers["content-type"].startswith("text/html"), (status, headers)
    assert "<title>Acme &amp; Co &lt;Beta&gt; – Dieser Link kann nicht verwendet werden</title>" in page, page
    assert f'<a href="mailto:{SUPPORT}">{SUPPORT}</a>' in page, page
    assert APP_NAME not in page, "the app name reached the page unescaped"


BAD_VALUES = [
    ("--apple-app-ids", "com.example.app", "Team ID"),
    ("--apple-app-ids", "abcde12345.com.example.app", "Team ID"),
    ("--apple-app-ids", "ABCDE12345.app", "bundle ID"),
    ("--android-apps", "com.example.app", "package:SHA256_FINGERPRINT"),
    ("--android-apps", "example:" + FINGERPRINT_RELEASE, "package name"),
    ("--android-apps", "com.example.app:" + FINGERPRINT_RELEASE[:-3], "fingerprint"),
    ("--support-email", "not an address", "email address"),
    ("--app-name", " ", "--app-name"),
]


def test_bad_values_stop_the_start_naming_the_setting(work):
    # One test, not parametrized: app-links.sh counts `def test_` lines against what ran.
    for flag, value, says in BAD_VALUES:
        result = subprocess.run([POSTERN, "serve", flag, value, "--listen", "127.0.0.1:1", "--metrics-listen", "off"],
                                cwd=work, capture_output=True, text=True, timeout=30)
        assert result.returncode == 64, (flag, value, result.returncode, result.stderr)
        assert flag in result.stderr and says in result.stderr, (flag, value, result.stderr)
