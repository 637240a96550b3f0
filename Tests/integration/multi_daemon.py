"""Three `postern serve` on one PostgreSQL database, as multi-daemon.sh runs it.

1. 10,000 send-links spread round-robin over the 3 daemons (each request from its own client
   address, through X-Forwarded-For and --trust-proxy), and `kill -9` of daemon B once half are
   acknowledged. The load balancer (this script) then sends B's share to A and C. Checked, by
   recipient, on the SMTP server (smtp_server.py, one file per accepted mail):
   - 0 lost: every acknowledged (202) send-link's mail arrives;
   - duplicates only of messages B had claimed when it died, and no more than B's in-flight
     deliveries (sent over SMTP, their outcome not yet recorded: at most three per worker);
   - A and C deliver what B had claimed within 15 s of its death (measured, printed).
2. B restarted; one address sent to 6 times across the 3 daemons (--mail-per-hour 5): 5 mails,
   the 6th refused — once in turn, once all 6 at the same moment.
3. The per-IP limit (--ip-per-minute) is one limit for all daemons: one client address sending
   to all 3 at once gets that many requests through, not 3 times as many.

Arguments: CONNINFO (a libpq string naming a fresh database) WORK (a temp dir).
Environment: POSTERN_BIN. Prints `multi-daemon … key=value` lines; exits non-zero on a failure.
"""
import collections
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from postern_daemon import POSTERN, free_port, http_request, start_serve, wait_for  # noqa: E402

COUNT = int(os.environ.get("MULTI_DAEMON_COUNT", "10000"))
WORKERS = 4
IP_PER_MINUTE = 30
CLIENTS = 12


def psql(conninfo, query):
    out = subprocess.run(["psql", conninfo, "-qAtX", "-v", "ON_ERROR_STOP=1", "-c", query],
                         check=True, capture_output=True, text=True).stdout
    return [line.split("|") for line in out.splitlines() if line]


def settled(conninfo):
    """Whether no outbox row is left that a daemon may still deliver (queued, claimed, retrying).
    A daemon delivers only a row it holds claimed and records it sent after the server's 250,
    which smtp_server.py gives after writing the mail's file: then every delivery A and C made is
    on disk, and none will follow. B's last DATA, sent before its death, was in the server's
    socket from that moment; the server's event loop reads every ready socket each turn and has
    accepted the mails of B's claims since (taken back no sooner than 6 s after its death), so it
    has been read and written too."""
    return psql(conninfo, "SELECT count(*) FROM outbox WHERE state NOT IN ('sent', 'dead')")[0][0] == "0"


class Serve:
    def __init__(self, name, work, conninfo, smtp_port, port=None):
        self.name = name
        self.dir = os.path.join(work, name)
        os.makedirs(self.dir, exist_ok=True)
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.args = [
            POSTERN, "serve", "--database", conninfo, "--master-key-file", os.path.join(work, "postern.key"),
            "--public-url", self.url, "--listen", f"127.0.0.1:{self.port}", "--metrics-listen", "off",
            "--smtp-url", f"smtp+plain://127.0.0.1:{smtp_port}", "--workers", str(WORKERS),
            "--trust-proxy", "--ip-per-minute", str(IP_PER_MINUTE), "--mail-interval", "0", "--mail-per-hour", "5",
            # 10,000 mails to one domain: the domain and total caps (issue 47) are off here.
            "--mail-domain-per-hour", "0", "--mail-per-hour-total", "0", "--challenge", "off",
            "--allowed-continue-hosts", "app.example.com", "--scrypt-log-n", "12", "--pg-connections", "8",
        ]
        self.process, self.log = start_serve(self.args, self.dir, os.path.join(self.dir, "serve.log"), self.url)

    @property
    def alive(self):
        return self.process.poll() is None

    def stop(self):
        if self.alive:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


def send_link(daemon, email, ip, connection=None):
    """(status, connection) — status None when the daemon never answered (refused or reset)."""
    body = json.dumps({"email": email}).encode()
    headers = {"Content-Type": "application/json", "X-Forwarded-For": ip}
    try:
        if connection is None:
            connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=30)
        connection.request("POST", "/v1/email-link/send", body, headers)
        response = connection.getresponse()
        response.read()
        return response.status, connection
    except (OSError, http.client.HTTPException) as error:
        if connection is not None:
            connection.close()
        return ("refused" if isinstance(error, ConnectionRefusedError) else None), None


def client_ip(i):
    return f"10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}"


def deliveries(out):
    """recipient → sorted delivery times (mtime of each accepted mail's file)."""
    per = collections.defaultdict(list)
    for name in os.listdir(out):
        if name.endswith(".eml"):
            per[name.split("-", 1)[1][:-4]].append(os.stat(os.path.join(out, name)).st_mtime)
    for times in per.values():
        times.sort()
    return per


def load_and_kill(daemons, conninfo, out):
    a, b, c = daemons
    next_index = iter(range(COUNT))
    lock = threading.Lock()
    acknowledged, refused_by_limit, unanswered = set(), [], set()
    killed = threading.Event()
    kill_info = {}

    def kill_b():
        owner = f"{socket.gethostname()}:{b.process.pid}:%"
        os.kill(b.process.pid, signal.SIGKILL)
        b.process.wait()
        kill_info["at"] = time.time()
        # A and C cannot take B's claims back before its heartbeat has been silent for 6 s: this
        # snapshot is what B held when it died.
        rows = psql(conninfo, "SELECT recipient_local || '@' || recipient_domain, state FROM outbox "
                              f"WHERE lease_owner LIKE '{owner}' AND state = 'claimed'")
        kill_info["claimed"] = {r[0] for r in rows}
        kill_info["delivered_before"] = sum(len(v) for v in deliveries(out).values())
        killed.set()

    def client():
        connections = {}
        while True:
            with lock:
                i = next(next_index, None)
                if i is None:
                    break
                if len(acknowledged) >= COUNT // 2 and "at" not in kill_info and not kill_info.get("killing"):
                    kill_info["killing"] = True
                    threading.Thread(target=kill_b).start()
            email = f"user{i}@example.com"
            target = daemons[i % 3]
            while True:
                if target is b and (kill_info.get("killing") or not b.alive):
                    target = a if i % 2 else c  # the load balancer's other backends
                status, connection = send_link(target, email, client_ip(i), connections.get(target.name))
                connections[target.name] = connection
                if status == "refused" and target is b:
                    target = a if i % 2 else c
                    continue
                break
            with lock:
                if status == 202:
                    acknowledged.add(email)
                elif status is None or status == "refused":
                    unanswered.add(email)  # in flight to B when it died: may or may not be queued
                else:
                    refused_by_limit.append((email, status))
        for connection in connections.values():
            if connection is not None:
                connection.close()

    started = time.time()
    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    load_seconds = time.time() - started
    assert killed.wait(30), "daemon B was never killed"
    assert not refused_by_limit, f"refused under load: {refused_by_limit[:5]}"
    print(f"multi-daemon load: acknowledged={len(acknowledged)} unanswered={len(unanswered)} seconds={load_seconds:.1f} "
          f"rate={COUNT / load_seconds:.0f}/s", flush=True)
    claimed = kill_info["claimed"]
    print(f"multi-daemon kill: B held {len(claimed)} claims at its death, {kill_info['delivered_before']} mails delivered by then",
          flush=True)
    assert claimed, "B held no claims when it died: nothing to take back (the kill came at the wrong time)"

    # Every acknowledged mail arrives (A and C take over B's claims): waited for while the
    # deliveries progress (the cores may be shared), failed after 30 s without one.
    last_count, last_progress = -1, time.monotonic()
    while True:
        per = deliveries(out)
        missing = sum(1 for e in acknowledged if not per.get(e))
        if missing == 0:
            break
        count = sum(len(t) for t in per.values())
        if count != last_count:
            last_count, last_progress = count, time.monotonic()
        assert time.monotonic() - last_progress < 30, f"{missing} acknowledged mails missing, no delivery for 30 s"
        time.sleep(0.5)
    # Late duplicates, if any, have come once no daemon has mail left to act on (see settled).
    wait_for(lambda: settled(conninfo), 60, "no mail left to send")
    per = deliveries(out)
    death = kill_info["at"]
    lost = [e for e in acknowledged if not per.get(e)]
    duplicates = {e: len(t) - 1 for e, t in per.items() if len(t) > 1}
    # B's in-flight deliveries: its claims that reached the server although B never recorded them.
    # A and C cannot deliver any of B's claims before they take them back (B's heartbeat silent
    # for 6 s, its last beat at most 2 s before its death), so a delivery within 2 s of the death
    # is B's own (its last DATA, written by the server a moment after B died).
    in_flight = {e for e in claimed if per.get(e) and per[e][0] <= death + 2}
    pending = [e for e in claimed if e not in in_flight]
    takeover = max((per[e][0] for e in pending), default=death) - death
    strays = [e for e in duplicates if e not in claimed]
    unanswered_delivered = sum(1 for e in unanswered if per.get(e))
    print(f"multi-daemon result: sent={COUNT} acknowledged={len(acknowledged)} delivered={sum(len(t) for t in per.values())} "
          f"lost={len(lost)} duplicates={sum(duplicates.values())} b_claimed={len(claimed)} b_in_flight={len(in_flight)} "
          f"takeover_seconds={takeover:.2f} unanswered={len(unanswered)} unanswered_delivered={unanswered_delivered}", flush=True)
    assert not lost, f"{len(lost)} acknowledged mails never arrived: {lost[:5]}"
    assert not strays, f"duplicates of messages B did not hold: {strays[:5]}"
    assert sum(duplicates.values()) <= len(in_flight), f"{duplicates} duplicates, B had {len(in_flight)} in flight"
    # Three per worker: a message is completed while the outcomes of the two before it may still be
    # uncommitted (OutboxWorker.recordsInFlight).
    assert len(in_flight) <= 3 * WORKERS, f"B had {len(in_flight)} deliveries in flight with {WORKERS} workers"
    assert takeover <= 30, f"B's claims were delivered {takeover:.2f} s after its death (limit 30 s; its lease is far longer)"
    return per


def six_sends(daemons, conninfo, out):
    """One address, 6 send-links over the 3 daemons: 5 mails (--mail-per-hour 5), in turn and at once."""
    results = {}
    for mode in ("in-turn", "at-once"):
        email = f"six-{mode}@example.com"
        statuses = []
        if mode == "in-turn":
            for k in range(6):
                statuses.append(send_link(daemons[k % 3], email, f"192.0.2.{10 + k}")[0])
        else:
            barrier = threading.Barrier(6)

            def one(k):
                barrier.wait()
                statuses.append(send_link(daemons[k % 3], email, f"192.0.2.{20 + k}")[0])
            threads = [threading.Thread(target=one, args=(k,)) for k in range(6)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        assert sorted(statuses, key=str) == [202] * 5 + [429], (mode, statuses)
        mails = wait_for(lambda: len(deliveries(out).get(email, [])) >= 5 and deliveries(out)[email], 30, f"5 mails to {email}")
        # A 6th would have come by now: every send was answered, so a 6th queued is in the outbox,
        # and sent before it holds.
        wait_for(lambda: settled(conninfo), 30, "no mail left to send")
        count = len(deliveries(out).get(email, []))
        results[mode] = count
        assert count == 5, f"{email}: {count} mails, want 5"
        del mails
    print(f"multi-daemon six-sends: in_turn_mails={results['in-turn']} at_once_mails={results['at-once']}", flush=True)


def one_ip_over_three(daemons):
    """One client address sends to all 3 daemons at once: the single --ip-per-minute limit."""
    ip = "198.51.100.77"
    per_daemon = 30
    statuses = collections.Counter()
    lock = threading.Lock()
    started = time.time()

    def burst(daemon, base):
        connection = None
        for k in range(per_daemon):
            status, connection = send_link(daemon, f"ip-{base + k}@example.com", ip, connection)
            with lock:
                statuses[status] += 1
    threads = [threading.Thread(target=burst, args=(d, n * 1000)) for n, d in enumerate(daemons)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.time() - started
    allowed = statuses[202]
    # A bucket of IP_PER_MINUTE that refills at IP_PER_MINUTE a minute while the burst lasts.
    ceiling = IP_PER_MINUTE + int(seconds * IP_PER_MINUTE / 60) + 1
    print(f"multi-daemon one-ip: sent={3 * per_daemon} over 3 daemons allowed={allowed} refused={statuses[429]} "
          f"limit={IP_PER_MINUTE} seconds={seconds:.1f}", flush=True)
    assert set(statuses) <= {202, 429}, statuses
    assert IP_PER_MINUTE <= allowed <= ceiling, f"{allowed} allowed from one address over 3 daemons (limit {IP_PER_MINUTE})"


def main():
    conninfo, work = sys.argv[1], sys.argv[2]
    smtp_port = free_port()
    out = os.path.join(work, "smtp")
    smtp_log = open(os.path.join(work, "smtp.log"), "w")
    smtp = subprocess.Popen([sys.executable, os.path.join(HERE, "smtp_server.py"), "--port", str(smtp_port), "--out", out],
                            stdout=smtp_log, stderr=subprocess.STDOUT, start_new_session=True)
    daemons = []
    try:
        wait_for(lambda: "listening" in open(os.path.join(work, "smtp.log")).read(), 20, "the SMTP server")
        # A first: it creates the master key file the others read; B and C then start together.
        daemons.append(Serve("a", work, conninfo, smtp_port))
        starters = [threading.Thread(target=lambda n=n: daemons.append(Serve(n, work, conninfo, smtp_port))) for n in "bc"]
        for t in starters:
            t.start()
        for t in starters:
            t.join()
        daemons.sort(key=lambda d: d.name)
        assert len(daemons) == 3, "a daemon did not start"
        phase = os.environ.get("MULTI_DAEMON_PHASES", "load,six,ip").split(",")
        if "ip" in phase:
            one_ip_over_three(daemons)
        if "load" in phase:
            load_and_kill(daemons, conninfo, out)
            b = daemons[1]
            b.log.close()
            daemons[1] = Serve("b", work, conninfo, smtp_port, port=b.port)
        if "six" in phase:
            six_sends(daemons, conninfo, out)
        beats = psql(conninfo, "SELECT count(*) FROM daemon_heartbeats")[0][0]
        print(f"multi-daemon heartbeats: {beats} rows with 3 daemons running", flush=True)
    finally:
        for d in daemons:
            d.stop()
        smtp.send_signal(signal.SIGTERM)
        smtp.wait(10)
    for d in daemons:
        assert d.process.returncode == 0, f"{d.name} exited {d.process.returncode}"
    print("multi-daemon: ok", flush=True)


if __name__ == "__main__":
    main()
