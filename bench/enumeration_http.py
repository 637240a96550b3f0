"""The HTTP half of bench/enumeration: the same comparison through `postern serve`.

Usage: enumeration_http.py BASE_URL CALLS. For each endpoint, CALLS requests for addresses with an
account (member<i>@example.com, seeded) and CALLS for addresses without, interleaved over one
keep-alive connection; prints one line per endpoint like the in-process run. The daemon asks for
the challenge on every request that sends (`--challenge always`): each such request carries a
proof of work fetched from GET /v1/challenge and solved before its clock starts.
"""
import base64
import hashlib
import http.client
import json
import math
import os
import sys
import time
import urllib.parse


def ks(a, b):
    a, b = sorted(a), sorted(b)
    i = j = 0
    d = 0.0
    while i < len(a) and j < len(b):
        v = min(a[i], b[j])
        while i < len(a) and a[i] <= v:
            i += 1
        while j < len(b) and b[j] <= v:
            j += 1
        d = max(d, abs(i / len(a) - j / len(b)))
    n = len(a) * len(b) / (len(a) + len(b))
    lam = (math.sqrt(n) + 0.12 + 0.11 / math.sqrt(n)) * d
    p = sum(2 * (-1) ** (k - 1) * math.exp(-2 * k * k * lam * lam) for k in range(1, 101))
    return d, min(max(p, 0.0), 1.0)


def median(values):
    s = sorted(values)
    m = len(s) // 2
    return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 2


def main():
    base, calls = sys.argv[1], int(sys.argv[2])
    url = urllib.parse.urlparse(base)
    conn = http.client.HTTPConnection(url.hostname, url.port)
    endpoints = {
        "send_link": ("/v1/email-link/send", lambda e: {"email": e, "challengeSolution": solved()}),
        "sign_up": ("/v1/password/sign-up", lambda e: {"email": e, "password": "a fine password", "challengeSolution": solved()}),
        "reset": ("/v1/password/reset", lambda e: {"email": e, "challengeSolution": solved()}),
        "password_sign_in": ("/v1/password/sign-in", lambda e: {"email": e, "password": "a wrong password"}),
    }

    def solved():
        """A proof of work from the daemon, solved: ALTCHA's payload (base64 of its JSON)."""
        conn.request("GET", "/v1/challenge")
        challenge = json.loads(conn.getresponse().read())
        for number in range(challenge["maxnumber"] + 1):
            if hashlib.sha256(f"{challenge['salt']}{number}".encode()).hexdigest() == challenge["challenge"]:
                fields = {k: challenge[k] for k in ("algorithm", "challenge", "salt", "signature")}
                return base64.b64encode(json.dumps({**fields, "number": number}).encode()).decode()
        raise SystemExit("the daemon's challenge has no solution")

    def call(path, body):
        data = json.dumps(body).encode()
        start = time.perf_counter()
        conn.request("POST", path, body=data, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        payload = response.read()
        elapsed = (time.perf_counter() - start) * 1e6
        return elapsed, f"{response.status} {payload.decode()}"

    only = [n for n in os.environ.get("ENDPOINTS", "").split(",") if n]
    for name, (path, make) in endpoints.items():
        if only and name not in only:
            continue
        for i in range(20):
            call(path, make(f"member{i}@example.com"))
            call(path, make(f"stranger{i}@example.com"))
        times = {True: [], False: []}
        answers = {True: set(), False: set()}
        for i in range(calls):
            for existing in ((True, False) if i % 2 == 0 else (False, True)):
                email = f"member{i}@example.com" if existing else f"stranger{i}@example.com"
                elapsed, answer = call(path, make(email))
                times[existing].append(elapsed)
                answers[existing].add(answer)
        a, b = median(times[True]), median(times[False])
        d, p = ks(times[True], times[False])
        identical = answers[True] == answers[False] and len(answers[True]) == 1
        print(f"http_{name} identical_answers={'true' if identical else 'false'} answer={next(iter(answers[True]))!r}"
              f" median_existing_us={a:.1f} median_unknown_us={b:.1f} median_diff={abs(a - b) / max(a, b):.3f}"
              f" ks_d={d:.4f} ks_p={p:.4f}")


if __name__ == "__main__":
    main()
