"""The real ALTCHA widget (altcha 2.3.0, MIT, as PyPI's django-altcha bundles it:
`django_altcha/static/altcha/altcha.min.js`) in headless Chromium, solving a challenge Postern
minted: a loopback page holds `<altcha-widget challengejson='…'>` in a form, Selenium clicks the
widget's checkbox, and the payload is read from the form field `altcha` the widget fills — what a
site's own page submits. Used by challenge_test.py and bench/challenge.
"""
import base64
import html
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from postern_daemon import free_port, wait_for


def widget_script():
    """altcha.min.js as django-altcha ships it (an ES module)."""
    import django_altcha

    path = os.path.join(os.path.dirname(django_altcha.__file__), "static", "altcha", "altcha.min.js")
    with open(path, "rb") as f:
        return f.read()


class WidgetPage:
    """A loopback page with the widget and the challenge set by `solve` (`/` the page,
    `/altcha.min.js` the script)."""

    def __init__(self):
        script = widget_script()
        self.challenge = None
        page = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                if self.path == "/altcha.min.js":
                    body, kind = script, "text/javascript"
                elif self.path.startswith("/?"):
                    body = (
                        "<!doctype html><html><head><meta charset=utf-8><title>ALTCHA</title>"
                        '<script type="module" src="/altcha.min.js"></script></head><body>'
                        '<form id="f" method="post" action="/nowhere">'
                        f"<altcha-widget challengejson='{html.escape(json.dumps(page.challenge), quote=True)}'></altcha-widget>"
                        "</form></body></html>"
                    ).encode()
                    kind = "text/html; charset=utf-8"
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def solve(self, driver, challenge, timeout=120):
        """Loads the page with `challenge` (Postern's `GET /v1/challenge` answer), clicks the
        widget and waits for its payload. Returns (payload, the widget's own `took` in ms, the
        wall time from the click to the filled field in ms)."""
        from selenium.webdriver.common.by import By

        self.challenge = challenge
        driver.get(self.url + f"?n={time.monotonic_ns()}")
        box = wait_for(lambda: (driver.find_elements(By.CSS_SELECTOR, 'altcha-widget input[type="checkbox"]') or [None])[0],
                       30, "the ALTCHA widget's checkbox")
        started = time.monotonic()
        box.click()

        def payload():
            values = driver.execute_script(
                "return Array.from(document.querySelectorAll('form#f [name=altcha]')).map(e => e.value)")
            return next((v for v in values if v), None)

        value = wait_for(payload, timeout, "the widget's payload in the form field altcha")
        wall = (time.monotonic() - started) * 1000
        took = json.loads(base64.b64decode(value)).get("took", 0)
        return value, float(took), wall

    def close(self):
        self.server.shutdown()
        self.server.server_close()
