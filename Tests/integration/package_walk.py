"""The HTTP and systemd sides of Tests/integration/package.sh (standard library only).

  notify-listen ADDRESS OUT   binds the datagram socket ADDRESS (@name: abstract) as systemd's
                              $NOTIFY_SOCKET and appends each datagram to OUT, one per line (\\n in
                              a datagram as ' | '), until killed
  send BASE EMAIL             asks for a sign-in link (202)
  sign-in BASE MAILDIR EMAIL  asks for a link, reads it from the file transport's next mail to
                              EMAIL, completes it; prints the Session JSON
  complete BASE MAILDIR EMAIL completes the link of a mail already asked for; prints the Session
  (the mail files already read are listed in the file $POSTERN_WALK_SEEN)
  refresh BASE TOKEN          trades a refresh token for a new Session (printed)
  me BASE ID_TOKEN            prints the account's address (GET /v1/me)
"""
import email
import email.policy
import json
import os
import re
import socket
import sys
import time
import urllib.error
import urllib.request


def request(base, method, path, body=None, token=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=30) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def expect(status, want, answer):
    if status != want:
        sys.exit(f"want {want}, got {status}: {answer}")


def link_from_mail(directory, rcpt, seen_file, timeout=30):
    """The action link in the next unread mail to `rcpt` (the names read are kept in `seen_file`)."""
    seen = set(open(seen_file).read().split()) if os.path.exists(seen_file) else set()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        names = sorted(n for n in os.listdir(directory) if n.endswith(".eml")) if os.path.isdir(directory) else []
        for name in names:
            if name in seen:
                continue
            with open(os.path.join(directory, name), "rb") as f:
                msg = email.message_from_bytes(f.read(), policy=email.policy.default)
            if msg["To"].addresses[0].addr_spec.lower() != rcpt.lower():
                continue
            with open(seen_file, "a") as f:
                f.write(name + "\n")
            links = set(re.findall(r"https?://[^\s<>\"]+/action\?[^\s<>\"]+", msg.get_body(("plain",)).get_content()))
            if len(links) != 1:
                sys.exit(f"want one action link in {name}, found {links}")
            return links.pop()
        time.sleep(0.1)
    sys.exit(f"no mail to {rcpt} in {directory} within {timeout} s")


def complete(base, directory, rcpt, timeout=30):
    link = link_from_mail(directory, rcpt, os.environ["POSTERN_WALK_SEEN"], timeout)
    status, answer = request(base, "POST", "/v1/email-link/complete", {"link": link})
    expect(status, 200, answer)
    if answer["email"] != rcpt:
        sys.exit(f"signed in as {answer['email']}, not {rcpt}")
    print(json.dumps(answer["session"]))


def notify_listen(address, out):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + address[1:] if address.startswith("@") else address)
    with open(out, "a") as f:
        f.write("listening\n")
        f.flush()
        while True:
            data = sock.recv(4096)
            f.write(data.decode().replace("\n", " | ") + "\n")
            f.flush()


def main():
    command, args = sys.argv[1], sys.argv[2:]
    if command == "notify-listen":
        notify_listen(*args)
    elif command == "send":
        base, rcpt = args
        status, answer = request(base, "POST", "/v1/email-link/send", {"email": rcpt})
        expect(status, 202, answer)
    elif command == "sign-in":
        base, directory, rcpt = args
        status, answer = request(base, "POST", "/v1/email-link/send", {"email": rcpt})
        expect(status, 202, answer)
        complete(base, directory, rcpt)
    elif command == "complete":
        # A mail queued while the relay was down: its first retry comes 30 s after the failure.
        complete(*args, timeout=120)
    elif command == "refresh":
        base, token = args
        status, answer = request(base, "POST", "/v1/token", {"refreshToken": token})
        expect(status, 200, answer)
        print(json.dumps(answer))
    elif command == "me":
        base, token = args
        status, answer = request(base, "GET", "/v1/me", token=token)
        expect(status, 200, answer)
        print(answer["email"])
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main()
