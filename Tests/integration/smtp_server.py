"""A scriptable SMTP server for the outbox integration tests (aiosmtpd).

Writes each accepted message to OUT/<n>-<recipient>.eml and prints one line per event.
Options: --port, --out, --tls-dir (makes a CA and a server certificate for 127.0.0.1 there and
requires STARTTLS, or with --implicit-tls speaks TLS from the first byte), --auth USER:PASS (AUTH required), --fail-seconds S --fail-code C (answer RCPT
with C for the first S seconds), --reject-prefix P (550 for recipients starting with P).
"""
import argparse
import asyncio
import datetime
import ipaddress
import os
import signal
import ssl
import sys
import threading
import time

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


def make_certificates(directory):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Postern test CA")])
    ca = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                                     encipher_only=False, decipher_only=False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    os.makedirs(directory, exist_ok=True)
    paths = {name: os.path.join(directory, name) for name in ("ca.pem", "server.pem", "server.key")}
    if not os.path.exists(paths["ca.pem"]):
        with open(paths["ca.pem"], "wb") as f:
            f.write(ca.public_bytes(serialization.Encoding.PEM))
        with open(paths["server.pem"], "wb") as f:
            f.write(cert.public_bytes(serialization.Encoding.PEM))
        with open(paths["server.key"], "wb") as f:
            f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return paths


class Handler:
    def __init__(self, args):
        self.args = args
        self.started = time.monotonic()
        self.count = 0
        self.lock = threading.Lock()

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if self.args.reject_prefix and address.startswith(self.args.reject_prefix):
            print(f"reject {address}", flush=True)
            return "550 5.1.1 <%s>: recipient rejected" % address
        if time.monotonic() - self.started < self.args.fail_seconds:
            print(f"fail {self.args.fail_code} {address}", flush=True)
            return f"{self.args.fail_code} 4.3.0 try again later"
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_QUIT(self, server, session, envelope):
        # A session's end, with what it reached: check-config's relay check ends here unsent.
        print(f"quit tls={session.ssl is not None} auth={session.authenticated} mail={envelope.mail_from is not None}", flush=True)
        return "221 Bye"

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            self.count += 1
            n = self.count
        for rcpt in envelope.rcpt_tos:
            path = os.path.join(self.args.out, f"{n:06d}-{rcpt}.eml")
            with open(path + ".tmp", "wb") as f:
                f.write(envelope.original_content or envelope.content)
            os.rename(path + ".tmp", path)
        print(f"accepted {n} {','.join(envelope.rcpt_tos)} tls={session.ssl is not None} auth={session.authenticated}", flush=True)
        return "250 2.0.0 accepted as %d" % n


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--tls-dir")
    parser.add_argument("--implicit-tls", action="store_true", help="TLS from the first byte (smtps) instead of STARTTLS")
    parser.add_argument("--auth")
    parser.add_argument("--fail-seconds", type=float, default=0)
    parser.add_argument("--fail-code", default="451")
    parser.add_argument("--reject-prefix")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    kwargs = {}
    if args.tls_dir:
        paths = make_certificates(args.tls_dir)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(paths["server.pem"], paths["server.key"])
        if args.implicit_tls:
            kwargs.update(ssl_context=context)
        else:
            kwargs.update(tls_context=context, require_starttls=True)
    if args.auth:
        user, password = args.auth.split(":", 1)

        def authenticator(server, session, envelope, mechanism, auth_data):
            ok = isinstance(auth_data, LoginPassword) and auth_data.login == user.encode() and auth_data.password == password.encode()
            print(f"auth {mechanism} {'ok' if ok else 'refused'}", flush=True)
            return AuthResult(success=ok, handled=False)

        kwargs.update(authenticator=authenticator, auth_required=True, auth_require_tls=bool(args.tls_dir) and not args.implicit_tls)
    controller = Controller(Handler(args), hostname="127.0.0.1", port=args.port, server_hostname="localhost", **kwargs)
    controller.start()
    print(f"listening {args.port}", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    controller.stop()


if __name__ == "__main__":
    main()
