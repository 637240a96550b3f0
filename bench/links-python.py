"""The same unwrapping as the Swift parser's Safe Links path, in Python with urllib.parse.

usage: links-python.py INPUTS SECONDS   (INPUTS: `oobCode<TAB>text` a line, as for links-bench)

For each pasted Safe Links URL: split it, check the gateway host, take `url=`, split the inner
link, check its origin, read mode / oobCode / continueUrl / lang, and check the continue URL's
host. Prints `python pastes=… seconds=… mean_per_s=… per_s=…` (per_s: the best of five rounds).
"""
import sys
import time
from urllib.parse import parse_qs, urlsplit

MODES = {"signIn", "resetPassword", "verifyEmail", "verifyAndChangeEmail", "recoverEmail"}
ALLOWED = {"app.example.com", "auth.example.com"}


def parse(text):
    url = urlsplit(text.strip())
    if not url.hostname or not url.hostname.endswith(".safelinks.protection.outlook.com"):
        return None
    inner_values = parse_qs(url.query).get("url")
    if not inner_values:
        return None
    inner = urlsplit(inner_values[0])
    if inner.scheme != "https" or inner.hostname != "auth.example.com" or inner.port not in (None, 443) or "@" in inner.netloc:
        return None
    query = parse_qs(inner.query)
    mode = query.get("mode", [None])[0]
    code = query.get("oobCode", [None])[0]
    if mode not in MODES or not code:
        return None
    continue_url = query.get("continueUrl", [None])[0]
    if continue_url is not None:
        target = urlsplit(continue_url)
        if target.scheme != "https" or target.hostname not in ALLOWED or "@" in target.netloc:
            return None
    return (mode, code, continue_url, query.get("lang", [None])[0])


def main():
    path, seconds = sys.argv[1], float(sys.argv[2])
    cases = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            code, _, text = line.rstrip("\n").partition("\t")
            cases.append((code, text.replace("\\n", "\n")))
    for index, (code, text) in enumerate(cases):
        result = parse(text)
        if result is None or result[1] != code:
            sys.exit(f"links-python: case {index} did not parse to its code")
    # Five equal rounds, best round reported, exactly as the Swift side does.
    rounds = 5
    pastes = 0
    total = 0.0
    best = 0.0
    for _ in range(rounds):
        round_pastes = 0
        start = time.perf_counter()
        elapsed = 0.0
        while elapsed < seconds / rounds:
            for _, text in cases:
                parse(text)
            round_pastes += len(cases)
            elapsed = time.perf_counter() - start
        pastes += round_pastes
        total += elapsed
        best = max(best, round_pastes / elapsed)
    print(f"python pastes={pastes} seconds={total:.3f} mean_per_s={int(pastes / total)} per_s={int(best)}")

if __name__ == "__main__":
    main()
