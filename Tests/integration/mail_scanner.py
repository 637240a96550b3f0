"""A mail scanner, as the security review modelled the ones that burn links (Outlook Safe Links is
known to GET a page and then submit its form): it keeps its own cookie jar, GETs the link, then
on every page it reaches follows every same-origin link, submits every form with the values it
finds there (hidden fields, the `value` of each field, every checkbox ticked, the first option of
each choice), once for each submit button the form has, and goes on from whatever comes back, up
to a depth and a request budget. A scanner may also run a page's script: the scanner records every
`<script>` it sees and the Content-Security-Policy of every page, so a test can assert there is
none to run (the pages forbid all script).

What it never does is what a person does: read the page and type what it says into a field.

Used by scanners_test.py against every kind of hosted page; any test may use it:

    visits = MailScanner().scan(link)
"""
import html.parser
import http.cookiejar
import urllib.error
import urllib.parse
import urllib.request

SUBMIT_TYPES = {"submit", "image"}
TEXT_TYPES = {"text", "email", "number", "tel", "password", "search", "url", ""}


class Visit:
    """One request the scanner made: method, URL, the form body it sent, the answer's status."""

    def __init__(self, method, url, body, status):
        self.method, self.url, self.body, self.status = method, url, body, status

    def __repr__(self):
        return f"{self.method} {self.url} {self.body or ''} -> {self.status}"


class PageParser(html.parser.HTMLParser):
    """The links, the forms (with their fields and submit buttons) and the scripts of one page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links, self.forms, self.scripts = [], [], 0
        self.form = None
        self.select = None

    def handle_starttag(self, tag, attrs):
        a = {k: (v if v is not None else "") for k, v in attrs}
        if tag == "script":
            self.scripts += 1
        elif tag == "a" and a.get("href"):
            self.links.append(a["href"])
        elif tag == "form":
            self.form = {"action": a.get("action", ""), "method": a.get("method", "get").upper(), "fields": [], "buttons": []}
            self.forms.append(self.form)
        elif self.form is None:
            return
        elif tag == "input":
            kind = a.get("type", "text").lower()
            name = a.get("name")
            if kind in SUBMIT_TYPES:
                self.form["buttons"].append((name, a.get("value", "")))
            elif not name or kind in {"reset", "button", "file"}:
                return
            elif kind == "checkbox":
                self.form["fields"].append((name, a.get("value", "on")))  # ticked
            elif kind == "radio":
                if name not in [n for n, _ in self.form["fields"]]:
                    self.form["fields"].append((name, a.get("value", "on")))
            else:
                self.form["fields"].append((name, a.get("value", "")))
        elif tag == "button":
            if a.get("type", "submit").lower() == "submit":
                self.form["buttons"].append((a.get("name"), a.get("value", "")))
        elif tag == "select" and a.get("name"):
            self.select = a["name"]
        elif tag == "option" and self.select:
            if self.select not in [n for n, _ in self.form["fields"]]:
                self.form["fields"].append((self.select, a.get("value", "")))
        elif tag == "textarea" and a.get("name"):
            self.form["fields"].append((a["name"], ""))

    def handle_endtag(self, tag):
        if tag == "form":
            self.form = None
        elif tag == "select":
            self.select = None


class MailScanner:
    """A scanner with its own cookie jar; `scan(url)` walks everything reachable from the link."""

    def __init__(self, depth=5, budget=80, user_agent="Mozilla/5.0 (compatible; SafeLinksScanner/1.0)"):
        self.depth, self.budget = depth, budget
        self.jar = http.cookiejar.CookieJar()
        # No proxy from the environment: the scanner talks to the daemon on loopback.
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPCookieProcessor(self.jar))
        self.opener.addheaders = [("User-Agent", user_agent)]
        self.visits, self.scripts, self.policies = [], 0, set()
        self.seen = set()

    def scan(self, url):
        """Walks from `url`; returns the visits made (also in `self.visits`)."""
        origin = urllib.parse.urlsplit(url)[:2]
        self._walk("GET", url, None, origin, self.depth)
        return self.visits

    def _fetch(self, method, url, body):
        data = None if body is None else urllib.parse.urlencode(body).encode()
        request = urllib.request.Request(url, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/x-www-form-urlencoded")
        try:
            with self.opener.open(request, timeout=30) as answer:
                status, page, headers = answer.status, answer.read(), answer.headers
        except urllib.error.HTTPError as error:
            status, page, headers = error.code, error.read(), error.headers
        self.visits.append(Visit(method, url, body, status))
        if headers.get("Content-Security-Policy"):
            self.policies.add(headers["Content-Security-Policy"])
        return page.decode("utf-8", "replace") if "html" in (headers.get("Content-Type") or "") else ""

    def _walk(self, method, url, body, origin, depth):
        key = (method, url, tuple(body or ()))
        if depth < 0 or key in self.seen or len(self.visits) >= self.budget:
            return
        self.seen.add(key)
        page = self._fetch(method, url, body)
        parser = PageParser()
        parser.feed(page)
        self.scripts += parser.scripts
        for href in parser.links:
            target = urllib.parse.urljoin(url, href)
            if urllib.parse.urlsplit(target)[:2] == origin:
                self._walk("GET", target, None, origin, depth - 1)
        for form in parser.forms:
            target = urllib.parse.urljoin(url, form["action"] or url)
            if urllib.parse.urlsplit(target)[:2] != origin:
                continue
            for name, value in form["buttons"] or [(None, "")]:
                fields = list(form["fields"]) + ([(name, value)] if name else [])
                if form["method"] == "POST":
                    self._walk("POST", target, fields, origin, depth - 1)
                else:
                    query = urllib.parse.urlencode(fields)
                    self._walk("GET", target.split("?")[0] + "?" + query, None, origin, depth - 1)

    def pressed(self, field, value=None):
        """The POSTs that sent `field` (with `value`, when given)."""
        return [v for v in self.visits if v.method == "POST"
                and any(n == field and (value is None or str(val) == str(value)) for n, val in (v.body or []))]
