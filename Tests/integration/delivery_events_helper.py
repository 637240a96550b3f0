"""The providers of delivery_events.sh, made with libraries nobody here wrote:

- `serve DIR PORT`: Amazon SNS's side. Makes (with `cryptography`) a test CA and a certificate for
  `localhost` signed by it (DIR/ca.pem, for the daemon's --sns-ca-file), and an RSA key with its
  self-signed signing certificate; serves that certificate over https on 127.0.0.1:PORT at
  /SimpleNotificationService-test.pem, and answers any other GET (a SubscribeURL) 200, printing
  `get PATH` for each request; prints `listening` once up.
- `sns DIR notification TOPIC CERT_URL MESSAGE` and `sns DIR confirmation TOPIC CERT_URL
  SUBSCRIBE_URL`: prints an SNS message signed with that key (SignatureVersion 2: SHA256withRSA,
  PKCS#1 v1.5) over the canonical string AWS documents, written out here field by field.
- `smtp PORT DIR`: a relay (aiosmtpd) that keeps each message as DIR/N.eml and its envelope
  sender (MAIL FROM) as DIR/N.from; prints `listening`.
- `resend SECRET TYPE ADDRESS BODY_FILE`: a Resend-style event (`email.bounced`,
  `email.complained`) for ADDRESS written to BODY_FILE, signed with the `standardwebhooks`
  library; prints its three `svix-*` header lines.
"""
import base64
import datetime
import http.server
import json
import os
import ssl
import sys
import time
import uuid

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID


def _certificate(subject, issuer, public_key, signing_key, ca, dns=None):
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (
        x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)])).public_key(public_key)
        .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if dns:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(dns)]), critical=False)
    return builder.sign(signing_key, hashes.SHA256())


def _pem(key):
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def serve(directory, port):
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca = _certificate("delivery events test CA", "delivery events test CA", ca_key.public_key(), ca_key, True)
    tls_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    tls = _certificate("localhost", "delivery events test CA", tls_key.public_key(), ca_key, False, dns="localhost")
    signing_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    signing = _certificate("sns.amazonaws.com", "sns.amazonaws.com", signing_key.public_key(), signing_key, False)
    with open(os.path.join(directory, "ca.pem"), "wb") as f:
        f.write(ca.public_bytes(serialization.Encoding.PEM))
    with open(os.path.join(directory, "tls.pem"), "wb") as f:
        f.write(tls.public_bytes(serialization.Encoding.PEM) + _pem(tls_key))
    with open(os.path.join(directory, "signing-key.pem"), "wb") as f:
        f.write(_pem(signing_key))
    pem = signing.public_bytes(serialization.Encoding.PEM)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            print(f"get {self.path}", flush=True)
            body = pem if self.path == "/SimpleNotificationService-test.pem" else b"<ConfirmSubscriptionResponse/>"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.path.join(directory, "tls.pem"))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print("listening", flush=True)
    server.serve_forever()


def sns(directory, kind, topic, cert_url, value):
    with open(os.path.join(directory, "signing-key.pem"), "rb") as f:
        key = serialization.load_pem_private_key(f.read(), password=None)
    fields = {
        "MessageId": str(uuid.uuid4()), "TopicArn": topic, "Timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        "SignatureVersion": "2", "SigningCertURL": cert_url,
    }
    if kind == "notification":
        fields.update({"Type": "Notification", "Message": value, "Subject": "Amazon SES Email Event Notification"})
        order = ["Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"]
    else:
        fields.update({"Type": "SubscriptionConfirmation", "Message": f"You have chosen to subscribe to the topic {topic}.",
                       "SubscribeURL": value, "Token": uuid.uuid4().hex})
        order = ["Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"]
    canonical = "".join(f"{name}\n{fields[name]}\n" for name in order)
    signature = key.sign(canonical.encode(), padding.PKCS1v15(), hashes.SHA256())
    fields["Signature"] = base64.b64encode(signature).decode()
    print(json.dumps(fields))


def smtp(port, directory):
    import asyncio
    from aiosmtpd.controller import Controller

    class Handler:
        count = 0

        async def handle_DATA(self, server, session, envelope):
            Handler.count += 1
            with open(os.path.join(directory, f"{Handler.count}.eml"), "wb") as f:
                f.write(envelope.original_content or envelope.content)
            with open(os.path.join(directory, f"{Handler.count}.from"), "w") as f:
                f.write(envelope.mail_from)
            print(f"accepted {Handler.count} {','.join(envelope.rcpt_tos)}", flush=True)
            return "250 OK"

    controller = Controller(Handler(), hostname="127.0.0.1", port=port)
    controller.start()
    print("listening", flush=True)
    try:
        while True:
            time.sleep(3600)
    finally:
        controller.stop()


def resend(secret, kind, address, body_file):
    import standardwebhooks

    data = {"email_id": str(uuid.uuid4()), "from": "Postern <no-reply@relay.test>", "to": [address], "subject": "Sign in"}
    if kind == "email.bounced":
        data["bounce"] = {"type": "Permanent", "subType": "General", "message": "550 5.1.1 The email account does not exist."}
    body = json.dumps({"type": kind, "created_at": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()), "data": data})
    with open(body_file, "w") as f:
        f.write(body)
    message_id = f"msg_{uuid.uuid4().hex}"
    now = datetime.datetime.now(datetime.timezone.utc)
    signature = standardwebhooks.Webhook(secret).sign(message_id, now, body)
    print(f"svix-id: {message_id}")
    print(f"svix-timestamp: {int(now.timestamp())}")
    print(f"svix-signature: {signature}")


if __name__ == "__main__":
    command, arguments = sys.argv[1], sys.argv[2:]
    if command == "serve":
        serve(arguments[0], int(arguments[1]))
    elif command == "sns":
        sns(*arguments)
    elif command == "smtp":
        smtp(int(arguments[0]), arguments[1])
    elif command == "resend":
        resend(*arguments)
    else:
        sys.exit(f"unknown command {command}")
