"""The example app driven like a person at a terminal: each prompt is awaited, then a line typed.
The mail it asks for is read back from the daemon's .eml files."""
import os
import re
import select
import subprocess
import time

import pytest

from postern_daemon import Daemon, action_link, six_digits

DEMO = os.environ.get("POSTERN_DEMO_BIN")
WORK = os.environ["E2E_WORK"]


class Terminal:
    """postern-demo on pipes: `expect` waits for text on stdout, `type` sends a line."""

    def __init__(self, server_url, state):
        self.process = subprocess.Popen(
            [DEMO, "--server", server_url, "--state", state],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.seen = ""

    def expect(self, pattern, timeout=20):
        """Waits until `pattern` (a regex) appears in what was printed since the last match."""
        deadline = time.monotonic() + timeout
        while True:
            match = re.search(pattern, self.seen)
            if match:
                self.seen = self.seen[match.end():]
                return match
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.process.poll() is not None and not select.select([self.process.stdout], [], [], 0)[0]:
                raise AssertionError(f"waited for {pattern!r}; the app printed:\n{self.seen}")
            ready, _, _ = select.select([self.process.stdout], [], [], min(remaining, 0.5))
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 65536)
                if chunk:
                    self.seen += chunk.decode()

    def type(self, line):
        self.process.stdin.write((line + "\n").encode())
        self.process.stdin.flush()

    def close(self):
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.wait()


@pytest.fixture(scope="module")
def daemon():
    d = Daemon(WORK, "demo", "--mail-interval", "0", "--mail-per-hour", "0", "--mail-domain-per-hour", "0", "--mail-per-hour-total", "0", "--challenge", "off", "--ip-per-minute", "0")
    yield d
    assert d.stop() == 0


def test_fuap_welcome_flow(daemon):
    phone = Terminal(daemon.public_url, os.path.join(daemon.work, "phone.json"))
    phone.expect(r"\[e\]mail sign-in")
    phone.type("e")
    phone.expect("Email address:")
    phone.type("ada@example.org")
    phone.expect("Link sent: check your mail\\.\n")
    mail = daemon.mailbox.next("ada@example.org")
    phone.expect("type the 6-digit code:")
    phone.type("000000" if six_digits(mail) != "000000" else "111111")
    phone.expect("Error: This link or code is not valid")
    phone.type(six_digits(mail))
    descriptor = phone.expect(r"LoginDescriptor uid=(\S+) isNewUser=true")
    uid = descriptor.group(1)
    phone.expect("What's your name\\?")
    phone.type("Ada")
    phone.expect(f"Profile: Ada <ada@example.org> uid {uid}")
    phone.type("b")
    phone.expect("Bio:")
    phone.type("Counts things.")
    phone.expect(f"Profile: Ada <ada@example.org> uid {uid} — Counts things\\.")
    phone.type("p")
    phone.expect("New password:")
    phone.type("short")
    phone.expect("Error: The password is too weak")
    phone.type("p")
    phone.expect("New password:")
    phone.type("a long enough password")
    phone.expect("Password set\\.")
    phone.type("o")
    phone.expect("Signed out\\.")
    # The same device now offers the password, because it set one — not because the server said so.
    phone.type("e")
    phone.expect("Email address:")
    phone.type("ada@example.org")
    phone.expect("Link sent: check your mail — or type your password\\.")
    phone.type("pw a long enough password")
    phone.expect(f"LoginDescriptor uid={uid} isNewUser=false")
    phone.expect(f"Profile: Ada <ada@example.org> uid {uid} — Counts things\\.")
    # The state file survives the app: a new run is still signed in, and the file is 0600.
    phone.type("q")
    assert phone.close() == 0
    assert os.stat(os.path.join(daemon.work, "phone.json")).st_mode & 0o777 == 0o600
    again = Terminal(daemon.public_url, os.path.join(daemon.work, "phone.json"))
    again.expect(f"Profile: Ada <ada@example.org> uid {uid}")
    again.type("q")
    assert again.close() == 0


def test_rxfireauth_guest_migration(daemon):
    # An account made on one device...
    first = Terminal(daemon.public_url, os.path.join(daemon.work, "first.json"))
    first.expect(r"\[e\]mail sign-in")
    first.type("e")
    first.expect("Email address:")
    first.type("grace@example.org")
    code = six_digits(daemon.mailbox.next("grace@example.org"))
    first.expect("type the 6-digit code:")
    first.type(code)
    owner = first.expect(r"LoginDescriptor uid=(\S+) isNewUser=true").group(1)
    first.expect("What's your name\\?")
    first.type("")
    first.type("q")
    first.close()

    # ...and a second device that starts as a guest, then signs in to that account by link.
    second = Terminal(daemon.public_url, os.path.join(daemon.work, "second.json"))
    second.expect(r"\[g\]uest")
    second.type("g")
    guest = second.expect(r"Guest: guest (\S+)").group(1)
    second.expect(r"\[l\]ink an email")
    second.type("l")
    second.expect("Email address:")
    second.type("grace@example.org")
    second.expect("Link sent")
    link = action_link(daemon.mailbox.next("grace@example.org"), daemon.public_url, "signIn")
    second.expect("Paste the link")
    second.type(link)
    second.expect(f"The guest account {guest} on this device will be replaced\\.")
    second.expect(r"Move the guest's data to it\? \[y/n\]")
    second.type("y")
    second.expect(f"LoginDescriptor uid={owner} isNewUser=false allowMigration=true oldUserId={guest} newUserId={owner}")
    second.expect(f"Profile: \\(no name\\) <grace@example.org> uid {owner}")
    second.type("q")
    assert second.close() == 0
