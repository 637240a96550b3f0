"""A real `postern serve` for integration tests: started on free loopback ports with SQLite in a
temp dir and mail written as .eml files (`--smtp-url file:`), spoken to over HTTP with urllib,
and stopped with SIGTERM (the exit code and the log are checked then).

Environment: POSTERN_BIN (the binary), E2E_WORK (the temp dir; run_pytest in pytest_lib.bash
sets both).
"""
import email
import email.policy
import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
POSTERN = os.environ.get("POSTERN_BIN") or os.path.join(ROOT, ".build", "debug", "postern")

# Loopback only: no proxy from the environment for this process and what it starts.
for _name in list(os.environ):
    if _name.lower() in ("http_proxy", "https_proxy", "all_proxy", "ftp_proxy"):
        del os.environ[_name]
os.environ["NO_PROXY"] = os.environ["no_proxy"] = "*"
HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))

# SIGTERM (from the runner) unwinds like Ctrl-C, so fixtures stop what they started.
signal.signal(signal.SIGTERM, signal.default_int_handler)


def remember_group(pgid):
    """Notes a process group a test started, for the runner to end if Python itself dies."""
    work = os.environ.get("E2E_WORK")
    if work:
        os.makedirs(work, exist_ok=True)
        with open(os.path.join(work, "pgids"), "a") as f:
            f.write(f"{pgid}\n")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")


def start_chromium(work, name="chromium", extra_args=()):
    """A headless Chromium through Selenium with its own profile (`work/NAME-profile`), loopback
    only, with `extra_args` added to its command line. Returns (driver, process group);
    `stop_chromium` ends both."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=900,700",
                "--no-first-run", "--disable-extensions", "--disable-background-networking", "--disable-sync",
                "--disable-component-update", "--disable-default-apps", "--no-proxy-server",
                # Loopback only: every other host name fails to resolve inside the browser.
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--disable-crash-reporter", "--disable-breakpad",
                f"--user-data-dir={os.path.join(work, name + '-profile')}", *extra_args):
        options.add_argument(arg)
    # Explicit driver path: Selenium Manager (which would download one) is never asked.
    # Its own process group (Chromium joins it), so nothing outlives the test.
    service = Service(executable_path=CHROMEDRIVER, log_output=os.path.join(work, name + "-chromedriver.log"),
                      popen_kw={"start_new_session": True})
    driver = webdriver.Chrome(options=options, service=service)
    remember_group(service.process.pid)
    driver.set_page_load_timeout(30)
    return driver, service.process.pid


def group_alive(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def stop_chromium(driver, group):
    """Quits the driver; Chromium's processes go a moment after it, or are killed."""
    driver.quit()
    try:
        wait_for(lambda: not group_alive(group), 10, "Chromium to exit")
    except AssertionError:
        os.killpg(group, signal.SIGKILL)


def http_request(base_url, method, path, body=None, token=None, headers=None, raw=None, content_type="application/json"):
    """One request to a daemon: JSON `body` (or `raw` bytes), a bearer `token`, extra `headers`.
    Returns (status, the JSON answer or the raw bytes, the headers); HTTP errors are answers too."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(base_url + path, data=data, method=method)
    if data is not None and content_type:
        req.add_header("Content-Type", content_type)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    for name, value in (headers or {}).items():
        req.add_header(name, value)
    try:
        with HTTP.open(req, timeout=30) as r:
            status, payload, hdrs = r.status, r.read(), r.headers
    except urllib.error.HTTPError as e:
        status, payload, hdrs = e.code, e.read(), e.headers
    if payload and (hdrs.get("Content-Type") or "").startswith("application/json"):
        return status, json.loads(payload), hdrs
    return status, payload, hdrs


def start_serve(args, cwd, log_path, public_url):
    """Starts `postern serve` (`args`) in its own process group, logging to `log_path`, and waits
    until it answers /readyz. Returns (process, log file)."""
    log = open(log_path, "w")
    process = subprocess.Popen(args, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    remember_group(process.pid)

    def up():
        if process.poll() is not None:
            raise AssertionError(f"postern serve exited {process.returncode}:\n{open(log_path).read()}")
        # Its own answer only: another test's daemon on a port taken in between would answer too.
        if '"msg":"listening"' not in open(log_path).read():
            return False
        try:
            return http_request(public_url, "GET", "/readyz")[0] == 200
        except OSError:
            return False

    wait_for(up, 30, "postern serve to answer /readyz")
    return process, log


class FileMailbox:
    """The .eml files the `file:` transport writes, read by recipient."""

    def __init__(self, directory):
        self.directory = directory
        self.seen = set()

    def _messages(self):
        try:
            names = sorted(os.listdir(self.directory))
        except FileNotFoundError:
            return []
        return [n for n in names if n.endswith(".eml")]

    def next(self, rcpt, timeout=20):
        """Waits for the next message to `rcpt` not yet read and returns it parsed."""
        def new():
            for name in self._messages():
                if name in self.seen:
                    continue
                with open(os.path.join(self.directory, name), "rb") as f:
                    msg = email.message_from_bytes(f.read(), policy=email.policy.default)
                if msg["To"].addresses[0].addr_spec.lower() == rcpt.lower():
                    self.seen.add(name)
                    return msg
            return None

        return wait_for(new, timeout, f"a mail to {rcpt}")

    def count_for(self, rcpt):
        count = 0
        for name in self._messages():
            with open(os.path.join(self.directory, name), "rb") as f:
                msg = email.message_from_bytes(f.read(), policy=email.policy.default)
            count += msg["To"].addresses[0].addr_spec.lower() == rcpt.lower()
        return count


def text_of(msg):
    return msg.get_body(("plain",)).get_content()


def action_link(msg, public_url, mode):
    """The one action link of `mode` in the text part."""
    links = set(re.findall(re.escape(public_url) + r"/action\?[^\s<>\"]+", text_of(msg)))
    assert len(links) == 1, f"want one action link, found {links}"
    link = links.pop()
    assert urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)["mode"] == [mode], (mode, link)
    return link


def six_digits(msg):
    # On a line of its own, as the template sets it: an address may hold six digits in a row.
    found = re.findall(r"^\s*(\d{6})\s*$", text_of(msg), re.M)
    assert found, "the mail has no 6-digit code"
    return found[0]


# The receivers, fake providers and gateways of these tests listen on loopback, which outgoing
# HTTP (webhooks, the HTTP mail provider, SMS gateways) refuses unless this allows it.
LOOPBACK_TARGETS = ("--allow-private-targets", "127.0.0.1/32")

# The states of a queued row (an outbox mail, a webhook delivery, an SMS) a worker may still act
# on: with none left, no worker has anything to claim or holds a claim (OutboxState.isFinished).
UNFINISHED = ("queued", "claimed", "retrying")


class Daemon:
    """`postern serve` with its own database and mail directory under `work/name`."""

    def __init__(self, work, name, *extra):
        self.work = os.path.join(work, name)
        # `cli` passes the daemon's allowance on (`postern webhooks add` checks the URL with it).
        at = extra.index("--allow-private-targets") if "--allow-private-targets" in extra else None
        self.cli_settings = list(extra[at:at + 2]) if at is not None else []
        os.makedirs(self.work, exist_ok=True)
        self.database = os.path.join(self.work, "postern.db")
        self.mail_dir = os.path.join(self.work, "mail")
        self.mailbox = FileMailbox(self.mail_dir)
        self.log_path = os.path.join(self.work, "serve.log")
        # The ports are free when probed, not always when the daemon binds them (another test may
        # take one in between): then again on new ones.
        for attempt in range(5):
            self.port, self.metrics_port = free_port(), free_port()
            if self.port == self.metrics_port:
                continue
            self.public_url = f"http://127.0.0.1:{self.port}"
            self.args = [
                POSTERN, "serve", "--database", self.database, "--public-url", self.public_url,
                "--listen", f"127.0.0.1:{self.port}", "--smtp-url", f"file:{self.mail_dir}",
                "--allowed-continue-hosts", "app.example.com", "--scrypt-log-n", "12",
                # Its own metrics port, so daemons side by side do not race for the default 9464
                # (a later --metrics-listen in `extra` wins).
                "--metrics-listen", f"127.0.0.1:{self.metrics_port}", *extra,
            ]
            try:
                self.process, self.log = start_serve(self.args, self.work, self.log_path, self.public_url)
                break
            except AssertionError as error:
                if "Address already in use" not in str(error) or attempt == 4:
                    raise

    def request(self, method, path, body=None, token=None, headers=None, raw=None, content_type="application/json"):
        return http_request(self.public_url, method, path, body=body, token=token, headers=headers, raw=raw,
                            content_type=content_type)

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, {} if body is None else body, **kw)

    def metrics(self):
        """The samples of the daemon's /metrics (on its metrics listener): {"name{labels}": value}."""
        status, text, _ = http_request(f"http://127.0.0.1:{self.metrics_port}", "GET", "/metrics")
        assert status == 200, status
        return {m[0]: float(m[1]) for m in re.findall(r"^([a-z_]+(?:\{[^}]*\})?) (\S+)$", text.decode(), re.M)}

    def unfinished(self, gauge, metrics=None):
        """Rows of a by-state gauge (postern_outbox_messages, postern_webhook_deliveries) a worker
        may still act on."""
        metrics = metrics if metrics is not None else self.metrics()
        return sum(metrics.get(f'{gauge}{{state="{state}"}}', 0) for state in UNFINISHED)

    def kill_hard(self):
        """SIGKILL to the daemon's process group: no shutdown, no lease given back."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def restart(self):
        """Starts it again on the same database, port and mail directory (after `kill_hard` or
        `stop`), its log appended to the first."""
        self.log.close()
        # A killed daemon may have left half a line: the next log is checked on stop.
        self.log_path += ".restart"
        self.process, self.log = start_serve(self.args, self.work, self.log_path, self.public_url)

    def cli(self, *args):
        """Runs `postern ARGS --database DB` beside the daemon; returns (exit code, stdout, stderr)."""
        done = subprocess.run([POSTERN, *args, "--database", self.database, *self.cli_settings], cwd=self.work,
                              capture_output=True, text=True, timeout=60)
        return done.returncode, done.stdout, done.stderr

    def stop(self):
        """SIGTERM; returns the exit code after checking the log holds JSON lines only."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        for line in open(self.log_path).read().splitlines():
            json.loads(line)
        return self.process.returncode


def check_error(answer, status, code, expected_status):
    assert status == expected_status, (status, answer)
    assert isinstance(answer, dict) and answer["error"]["code"] == code, answer
