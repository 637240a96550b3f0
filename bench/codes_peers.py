"""The peers of bench/codes: itsdangerous and Django minting and verifying reset tokens."""
import sys
import time

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0


def rate(fn):
    count = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(1000):
            fn()
        count += 1000
        now = time.perf_counter()
        if now >= deadline:
            return int(count / (now - start))


from itsdangerous import URLSafeTimedSerializer

serializer = URLSafeTimedSerializer("a" * 32, salt="reset-password")
token = serializer.dumps({"uid": "u1", "s": "state"})
itsd_mint = rate(lambda: serializer.dumps({"uid": "u1", "s": "state"}))
itsd_verify = rate(lambda: serializer.loads(token, max_age=3600))

import datetime
import django
from django.conf import settings

settings.configure(SECRET_KEY="b" * 50, USE_TZ=True, PASSWORD_RESET_TIMEOUT=3600)
django.setup()
from django.contrib.auth.tokens import PasswordResetTokenGenerator


class User:
    pk = 42
    password = "pbkdf2_sha256$600000$salt$hash"
    last_login = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    email = "someone@example.com"

    @classmethod
    def get_email_field_name(cls):
        return "email"


generator = PasswordResetTokenGenerator()
user = User()
django_token = generator.make_token(user)
assert generator.check_token(user, django_token)
django_mint = rate(lambda: generator.make_token(user))
django_verify = rate(lambda: generator.check_token(user, django_token))

print(f"itsd_mint={itsd_mint} itsd_verify={itsd_verify} django_mint={django_mint} django_verify={django_verify}")
