"""Debian's mod_auth_openidc, a relying party no one here wrote, in front of a page on loopback,
walked by headless Chromium: the protected URL sends the browser to Postern's hosted sign-in page;
the person types the address, opens the mail's link in the same browser, presses its button,
allows the client (registered not first-party), and Apache shows the page with REMOTE_USER set to
the address (OIDCRemoteUserClaim email). Run by oidc-apache.sh.

Apache runs as a plain process from a config file this test writes (`apache2 -f CONF
-DFOREGROUND`, its own directory under /tmp, readable by the `nobody` its children run as when
started by root): no system service, nothing on a fixed port. The page is a server-side include
(mod_include) echoing REMOTE_USER. The config is the one docs/oidc.md shows for Apache.
"""
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import urllib.error
import urllib.request

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By

from postern_daemon import (HTTP, Daemon, action_link, free_port, remember_group, start_chromium, stop_chromium,
                            wait_for)

APACHE = os.environ.get("APACHE2", "/usr/sbin/apache2")
MODULES = "/usr/lib/apache2/modules"
ADMIN = "oidc-apache-admin-" + secrets.token_hex(8)
LIMITS_OFF = ("--mail-interval", "0", "--mail-per-hour", "0", "--mail-domain-per-hour", "0", "--mail-per-hour-total", "0", "--challenge", "off", "--ip-per-minute", "0")
PAGE = """<!DOCTYPE html>
<html><head><title>Protected</title></head>
<body><p>Signed in as <span id="remote-user"><!--#echo var="REMOTE_USER" encoding="entity" --></span></p></body></html>
"""


def apache_config(directory, port, postern_url, client_id, client_secret):
    """mod_auth_openidc protecting /private on 127.0.0.1:`port` (the docs' Apache settings)."""
    run_as = "User nobody\nGroup nogroup\n" if os.getuid() == 0 else ""
    return f"""# Written by oidc_apache_test.py: one Apache, in the foreground, on loopback.
ServerRoot {directory}
ServerName 127.0.0.1
Listen 127.0.0.1:{port}
PidFile {directory}/httpd.pid
DefaultRuntimeDir {directory}
Mutex file:{directory}
ErrorLog {directory}/error.log
LogLevel warn auth_openidc:info
{run_as}LoadModule mpm_event_module {MODULES}/mod_mpm_event.so
LoadModule authn_core_module {MODULES}/mod_authn_core.so
LoadModule authz_core_module {MODULES}/mod_authz_core.so
LoadModule authz_user_module {MODULES}/mod_authz_user.so
LoadModule include_module {MODULES}/mod_include.so
LoadModule auth_openidc_module {MODULES}/mod_auth_openidc.so
StartServers 1
DocumentRoot {directory}/www

OIDCProviderMetadataURL {postern_url}/.well-known/openid-configuration
OIDCClientID {client_id}
OIDCClientSecret {client_secret}
OIDCRedirectURI http://127.0.0.1:{port}/private/redirect_uri
OIDCCryptoPassphrase {secrets.token_hex(32)}
OIDCPKCEMethod S256
OIDCScope "openid email profile"
OIDCRemoteUserClaim email

<Location /private>
  AuthType openid-connect
  Require valid-user
  Options +Includes
  SetOutputFilter INCLUDES
</Location>
"""


class Apache:
    """`apache2 -f CONF -DFOREGROUND` in its own process group, stopped with SIGTERM."""

    def __init__(self, postern_url, register):
        # Under /tmp, not the test's private work dir: the children (nobody) must read the page.
        self.directory = tempfile.mkdtemp(prefix="postern-apache-")
        try:
            self._start(postern_url, register)
        except BaseException:
            shutil.rmtree(self.directory, ignore_errors=True)
            raise

    def _start(self, postern_url, register):
        os.chmod(self.directory, 0o755)
        os.makedirs(os.path.join(self.directory, "www", "private"), mode=0o755)
        with open(os.path.join(self.directory, "www", "private", "whoami.shtml"), "w") as f:
            f.write(PAGE)
        os.chmod(os.path.join(self.directory, "www", "private", "whoami.shtml"), 0o644)
        self.port = free_port()
        self.origin = f"http://127.0.0.1:{self.port}"
        client_id, client_secret = register(f"{self.origin}/private/redirect_uri")
        self.config = os.path.join(self.directory, "httpd.conf")
        with open(self.config, "w") as f:
            f.write(apache_config(self.directory, self.port, postern_url, client_id, client_secret))
        os.chmod(self.config, 0o600)
        check = subprocess.run([APACHE, "-f", self.config, "-t"], capture_output=True, text=True, timeout=30)
        assert check.returncode == 0, check.stderr
        self.log = open(os.path.join(self.directory, "apache.out"), "w")
        self.process = subprocess.Popen([APACHE, "-f", self.config, "-DFOREGROUND"], stdout=self.log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        remember_group(self.process.pid)
        wait_for(self.answers, 30, "Apache to answer")

    def answers(self):
        if self.process.poll() is not None:
            raise AssertionError(f"apache2 exited {self.process.returncode}: {self.error_log()}")
        try:
            HTTP.open(self.origin + "/", timeout=5).close()
        except urllib.error.HTTPError:
            pass
        except OSError:
            return False
        return True

    def error_log(self):
        try:
            return open(os.path.join(self.directory, "error.log")).read()[-4000:]
        except FileNotFoundError:
            return "(no error.log)"

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log.close()
        shutil.rmtree(self.directory, ignore_errors=True)


@pytest.fixture(scope="module")
def postern():
    work = os.environ["E2E_WORK"]
    os.makedirs(work, exist_ok=True)
    daemon = Daemon(work, "oidc-apache", *LIMITS_OFF, "--admin-token", ADMIN)
    yield daemon
    assert daemon.stop() == 0, open(daemon.log_path).read()[-4000:]


@pytest.fixture(scope="module")
def apache(postern):
    def register(redirect_uri):
        status, answer, _ = postern.post("/v1/admin/oidc/clients", {
            "name": "Apache mod_auth_openidc", "redirectUris": [redirect_uri]}, token=ADMIN)
        assert status == 201, (status, answer)
        return answer["client"]["clientId"], answer["clientSecret"]

    server = Apache(postern.public_url, register)
    yield server
    log = server.error_log()
    server.stop()
    print("\n--- Apache's error.log (tail)\n" + log)


def form_posting_to(driver, path):
    """The one form on the page whose action is `path` on Postern."""
    forms = [f for f in driver.find_elements(By.TAG_NAME, "form")
             if (f.get_attribute("action") or "").split("?")[0].endswith(path)]
    assert len(forms) == 1, f"want one form to {path} at {driver.current_url}: {driver.page_source[:1500]}"
    return forms[0]


def press(form, value=None):
    """Clicks the form's submit button (the one with `value`, if given), as a person would."""
    buttons = [b for b in form.find_elements(By.CSS_SELECTOR, "button, input[type=submit]")
               if (b.get_attribute("type") or "submit") == "submit"
               and (value is None or b.get_attribute("value") == value)]
    assert buttons, f"no submit button {value or ''} in {form.get_attribute('outerHTML')[:1000]}"
    buttons[0].click()


def console(driver):
    """What Chromium logged (a Content-Security-Policy refusal shows here, not on the page)."""
    try:
        return [entry.get("message") for entry in driver.get_log("browser")]
    except Exception as error:  # the log is a diagnosis only
        return [f"(no console log: {error})"]


def on_page_with_form(driver, path, timeout=20):
    def found():
        # Asked while the browser may still be leaving the last page: its elements go stale.
        try:
            return any((f.get_attribute("action") or "").split("?")[0].endswith(path)
                       for f in driver.find_elements(By.TAG_NAME, "form"))
        except StaleElementReferenceException:
            return False
    try:
        wait_for(found, timeout, f"a page with a form to {path}")
    except AssertionError:
        raise AssertionError(f"no form to {path} at {driver.current_url}: {driver.page_source[:2000]}")


def test_chromium_walks_from_the_protected_page_through_the_mail_link_to_remote_user(postern, apache):
    work = os.environ["E2E_WORK"]
    address = f"apache-{secrets.token_hex(4)}@example.com"
    driver, group = start_chromium(work, "oidc-apache-chromium")
    try:
        protected = apache.origin + "/private/whoami.shtml"
        driver.get(protected)
        # mod_auth_openidc sent the browser to Postern's authorization endpoint: the sign-in page.
        on_page_with_form(driver, "/oidc/sign-in")
        assert driver.current_url.startswith(postern.public_url + "/oidc/authorize?"), driver.current_url
        form = form_posting_to(driver, "/oidc/sign-in")
        field = form.find_element(By.CSS_SELECTOR, "input[type=email]")
        assert field.get_attribute("name") == "email" and field.get_attribute("autocomplete") == "username"
        field.send_keys(address)
        press(form)
        on_page_with_form(driver, "/oidc/code")

        # The mail's link, opened in this same browser: one button to press.
        driver.get(action_link(postern.mailbox.next(address), postern.public_url, "signIn"))
        on_page_with_form(driver, "/oidc/resume")
        press(form_posting_to(driver, "/oidc/resume"))

        # Not a first-party client: the consent page, then back to Apache, which redeems the code.
        on_page_with_form(driver, "/oidc/consent")
        press(form_posting_to(driver, "/oidc/consent"), "allow")

        def shown():
            try:
                found = driver.find_elements(By.ID, "remote-user")
                return found and found[0].text
            except StaleElementReferenceException:
                return False
        try:
            user = wait_for(shown, 30, "the protected page")
        except AssertionError:
            raise AssertionError(f"at {driver.current_url}: {driver.page_source[:2000]}\n"
                                 f"the browser's console: {console(driver)}\n{apache.error_log()}")
        assert driver.current_url == protected, driver.current_url
        assert user == address, (user, driver.page_source[:1000])

        # Apache's own session now: the page again without Postern.
        driver.get(protected)
        assert wait_for(shown, 10, "the protected page again") == address
        assert driver.current_url == protected
    finally:
        stop_chromium(driver, group)
