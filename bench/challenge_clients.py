"""bench/challenge's clients: what solving Postern's proof of work costs a client, and the
reference verifier.

usage: challenge_clients.py BASE COUNT KEY PAYLOADS VERIFY_SECONDS [--chromium]

- python: COUNT times, `GET BASE/v1/challenge`, solved by PyPI's altcha (`solve_challenge_v1`,
  timed), the payload sent to `POST /v1/email-link/send` (must be 202) and sent again (must be
  400 CHALLENGE_REQUIRED).
- chromium (with --chromium): COUNT times, the challenge put into the real ALTCHA widget (2.3.0,
  from django-altcha) on a loopback page in headless Chromium, which Selenium clicks; the payload
  read from the form field `altcha` is sent as above. Timed by the widget's own `took` and from
  the click to the filled field.
- reference verify: PyPI's altcha `verify_solution_v1` over PAYLOADS (solved payloads minted by
  `postern-bench challenge` under KEY; each must verify), round-robin for VERIFY_SECONDS.

Prints one line: `clients python_solve_ms=… chromium_solve_ms=… chromium_wall_ms=…
python_verify_us=… maxnumber=… accepted=… replays_refused=… errors=…` (medians; 0 for a part not run).
"""
import base64
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "integration"))
from altcha import solve_challenge_v1, verify_solution_v1  # noqa: E402

from postern_daemon import http_request  # noqa: E402

counts = {"accepted": 0, "replays_refused": 0, "errors": 0}


def challenge(base):
    status, answer, _ = http_request(base, "GET", "/v1/challenge")
    if status != 200 or answer.get("kind") != "altcha":
        raise SystemExit(f"GET /v1/challenge answered {status}: {answer}")
    return answer


def spend(base, payload, index):
    """The payload passes once and is refused the second time."""
    body = {"email": f"bench-{index}-{time.monotonic_ns()}@example.com", "challengeSolution": payload}
    status, answer, _ = http_request(base, "POST", "/v1/email-link/send", body)
    if status == 202:
        counts["accepted"] += 1
    else:
        counts["errors"] += 1
        print(f"a solved challenge was refused: {status} {answer}", file=sys.stderr)
    status, answer, _ = http_request(base, "POST", "/v1/email-link/send", body)
    if status == 400 and answer["error"]["code"] == "CHALLENGE_REQUIRED":
        counts["replays_refused"] += 1
    else:
        counts["errors"] += 1
        print(f"a solution used twice was not refused: {status} {answer}", file=sys.stderr)


def python_solves(base, count):
    millis, maxnumber = [], 0
    for index in range(count):
        offer = challenge(base)
        maxnumber = offer["maxnumber"]
        started = time.perf_counter()
        solved = solve_challenge_v1(offer["challenge"], offer["salt"], offer["algorithm"], offer["maxnumber"])
        millis.append((time.perf_counter() - started) * 1000)
        if solved is None:
            counts["errors"] += 1
            continue
        fields = {k: offer[k] for k in ("algorithm", "challenge", "salt", "signature")}
        spend(base, base64.b64encode(json.dumps({**fields, "number": solved.number}).encode()).decode(), f"py{index}")
    return millis, maxnumber


def chromium_solves(base, count):
    import tempfile

    from altcha_widget import WidgetPage
    from postern_daemon import start_chromium, stop_chromium

    took, wall = [], []
    page = WidgetPage()
    with tempfile.TemporaryDirectory() as work:
        driver, group = start_chromium(work, "bench-chromium")
        try:
            for index in range(count):
                payload, widget_ms, wall_ms = page.solve(driver, challenge(base))
                took.append(widget_ms)
                wall.append(wall_ms)
                spend(base, payload, f"chromium{index}")
        finally:
            stop_chromium(driver, group)
            page.close()
    return took, wall


def python_verify_us(key, payloads_path, seconds):
    with open(payloads_path) as f:
        payloads = [line.strip() for line in f if line.strip()]
    for payload in payloads:
        ok, why = verify_solution_v1(payload, key)
        if not ok:
            raise SystemExit(f"altcha's verify_solution_v1 refused a payload postern-bench solved: {why}")
    done, started = 0, time.perf_counter()
    deadline = started + seconds
    while time.perf_counter() < deadline:
        for payload in payloads:
            verify_solution_v1(payload, key)
        done += len(payloads)
    return (time.perf_counter() - started) * 1e6 / done


def main():
    if len(sys.argv) not in (6, 7):
        raise SystemExit(__doc__)
    base, count, key, payloads, seconds = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5])
    chromium = sys.argv[6:] == ["--chromium"]
    solve_ms, maxnumber = python_solves(base, count)
    took, wall = chromium_solves(base, count) if chromium else ([0], [0])
    verify_us = python_verify_us(key, payloads, seconds) if seconds > 0 else 0
    median = lambda values: statistics.median(values) if values else 0  # noqa: E731
    print(f"clients python_solve_ms={median(solve_ms):.1f} chromium_solve_ms={median(took):.0f} chromium_wall_ms={median(wall):.0f}"
          f" python_verify_us={verify_us:.2f} maxnumber={maxnumber} accepted={counts['accepted']}"
          f" replays_refused={counts['replays_refused']} errors={counts['errors']}")


if __name__ == "__main__":
    main()
