"""`postern users import` and `export` against real files and a real `postern serve`: a generated
Firebase export of 10,000 users imported in one run (users/s printed), imported users signing in
over HTTP with their old Firebase and Supabase (bcrypt) passwords and then holding Postern's
scrypt hash; a second import changing nothing; a broken row named by its line (nothing imported
with --strict); a conflict never overwritten; export + import into an empty database identical;
the attacks of the second review: an unverified row's password never usable (and one an earlier
import left gone, with the attacker's sessions, once the owner proves the address), a planted
sessionVersion or a hash costlier than Postern's own refused by row, and a session version at the
top of Int64 surviving disable/enable rounds and a password change. Google and Apple sign-ins of
`providerUserInfo` come in linked (and through export + import); one another account holds is a
conflict."""
import base64, hashlib, json, os, sqlite3, subprocess, sys, time
import bcrypt
import firebase_scrypt as fs
sys.path.insert(0, os.path.dirname(__file__))
from postern_daemon import POSTERN, Daemon, six_digits

WORK = os.environ["E2E_WORK"]
os.makedirs(WORK, exist_ok=True)
SIGNER_KEY = base64.b64encode(os.urandom(64)).decode()
SEPARATOR = "Bw=="
ROUNDS, MEM_COST = 8, 14
HASH_FLAGS = ["--hash-key", SIGNER_KEY, "--salt-separator", SEPARATOR, "--rounds", str(ROUNDS), "--mem-cost", str(MEM_COST)]
REAL = {f"fb-{i:05d}": f"old password {i}" for i in (0, 4321, 9999)}
SUPABASE = {"5b1f7a34-0000-4000-8000-00000000000%d" % i: f"supa secret {i}" for i in range(2)}


def postern(*args, check=True):
    answer = subprocess.run([POSTERN, *args], capture_output=True, text=True, cwd=WORK)
    assert SIGNER_KEY not in answer.stdout + answer.stderr, "the hash key was printed"
    if check:
        assert answer.returncode == 0, (args, answer.stdout, answer.stderr)
    return answer


def import_json(database, path, *extra, source="firebase", check=True):
    flags = HASH_FLAGS if source == "firebase" else []
    answer = postern("users", "import", path, "--from", source, "--database", database, "--json", *flags, *extra, check=check)
    return answer.returncode, json.loads(answer.stdout)


def export(database):
    return postern("users", "export", "--database", database).stdout.splitlines()


def firebase_user(i):
    uid = f"fb-{i:05d}"
    # Odd rows are unverified: their passwords are dropped (the users who sign in are verified).
    user = {"localId": uid, "email": f"User{i}@Example.com", "emailVerified": i % 2 == 0 or uid in REAL, "displayName": f"User {i}",
            "createdAt": str(1_600_000_000_000 + i * 1000), "lastSignedInAt": str(1_700_000_000_000 + i),
            "disabled": i == 17, "providerUserInfo": []}
    # One user in a hundred (6, 106, …) signed in with Google, another (8, 108, …) with Apple, behind its relay.
    if i % 100 == 6:
        user["providerUserInfo"].append({"providerId": "google.com", "rawId": f"1085174255194321{i:05d}", "email": user["email"],
                                         "displayName": user["displayName"], "photoUrl": "https://lh3.googleusercontent.com/a/x"})
    if i % 100 == 8:
        user["providerUserInfo"].append({"providerId": "apple.com", "rawId": f"001234.8f3c2b7e.{i:05d}",
                                         "email": f"relay{i}@privaterelay.appleid.com"})
    if i % 10 == 3:
        return user  # no password: signs in by link
    salt = base64.b64encode(os.urandom(12)).decode()
    if uid in REAL:
        derived = fs.generate_derived_key(REAL[uid], salt, SEPARATOR, ROUNDS, MEM_COST)
        digest = base64.b64encode(fs.encrypt(base64.b64decode(SIGNER_KEY), derived)).decode()
    else:
        digest = base64.b64encode(os.urandom(64)).decode()
    user.update(passwordHash=digest, salt=salt, customAttributes=json.dumps({"plan": "pro", "n": i}))
    return user


def write_firebase(path, users):
    # The layout `firebase auth:export --format=json` writes: one user per line.
    with open(path, "w") as f:
        f.write('{"users": [\n' + ",\n".join(json.dumps(u) for u in users) + "\n]}\n")


def test_firebase_and_supabase_users_sign_in_with_old_passwords():
    path = os.path.join(WORK, "firebase-10k.json")
    write_firebase(path, [firebase_user(i) for i in range(10_000)])
    os.makedirs(os.path.join(WORK, "serve"), exist_ok=True)
    database = os.path.join(WORK, "serve", "postern.db")
    started = time.monotonic()
    status, summary = import_json(database, path)
    elapsed = time.monotonic() - started
    assert status == 0 and summary["imported"] == 10_000 and summary["malformed"] == [] and summary["conflicts"] == [], summary
    # 5,000 odd rows, 1,000 of them (i % 10 == 3) without a password, two of them in REAL (verified).
    assert summary["passwordsDropped"] == 3_998, summary
    print(f"\nimported 10000 Firebase users in {elapsed:.2f} s wall ({10_000 / elapsed:.0f} users/s; the command reports {summary['usersPerSecond']} users/s)")

    csv_path = os.path.join(WORK, "supabase.csv")
    with open(csv_path, "w") as f:
        f.write("id,email,encrypted_password,email_confirmed_at,created_at,last_sign_in_at,raw_user_meta_data,banned_until,deleted_at\n")
        for i, (uid, password) in enumerate(SUPABASE.items()):
            digest = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4, prefix=[b"2a", b"2b"][i])).decode()
            meta = json.dumps({"full_name": f"Supa {i}", "bio": "a, \"quoted\" bio"}).replace('"', '""')
            f.write(f'{uid},supa{i}@example.com,{digest},2024-01-02 03:04:05.123456+00,2023-12-01 00:00:00+00,,"{meta}",,\n')
    status, summary = import_json(database, csv_path, source="supabase")
    assert summary["imported"] == 2, summary

    daemon = Daemon(WORK, "serve")
    try:
        for uid, password in REAL.items():
            email = f"user{int(uid[3:])}@example.com"
            code, answer, _ = daemon.post("/v1/password/sign-in", {"email": email, "password": password + "x"})
            assert code == 400 and answer["error"]["code"] == "INVALID_LOGIN_CREDENTIALS", answer
            code, answer, _ = daemon.post("/v1/password/sign-in", {"email": email.upper(), "password": password})
            assert code == 200 and answer["uid"] == uid and answer["isNewUser"] is False, answer
            code, me, _ = daemon.get("/v1/me", token=answer["session"]["idToken"])
            assert code == 200 and me["displayName"] == f"User {int(uid[3:])}" and me["attributes"]["plan"] == "pro", me
        for i, (uid, password) in enumerate(SUPABASE.items()):
            code, answer, _ = daemon.post("/v1/password/sign-in", {"email": f"supa{i}@example.com", "password": password})
            assert code == 200 and answer["uid"] == uid, answer
            _, me, _ = daemon.get("/v1/me", token=answer["session"]["idToken"])
            assert me["displayName"] == f"Supa {i}" and me["emailVerified"] is True, me
        # A disabled Firebase user stays disabled; one without a password gets the same refusal as
        # a wrong password.
        code, answer, _ = daemon.post("/v1/password/sign-in", {"email": "user3@example.com", "password": "anything at all"})
        assert code == 400, answer
        rows = {json.loads(l)["uid"]: json.loads(l) for l in export(database)}
        for uid in list(REAL) + list(SUPABASE):
            assert rows[uid]["passwordHash"].startswith("$scrypt$"), rows[uid]["passwordHash"][:20]
        assert rows["fb-00002"]["passwordHash"].startswith("$firebase-scrypt$k=")
        assert "passwordHash" not in rows["fb-00001"] and "password" not in rows["fb-00001"]["providers"], rows["fb-00001"]
        assert "passwordHash" not in rows["fb-00003"]
        assert rows["fb-00017"]["disabled"] is True and rows["fb-00002"]["createdAt"] == 1_600_000_002
        # fb-00006's Google sign-in came along, its address verified as the user's own; fb-00008's
        # Apple relay address is not the user's, so not verified.
        google = rows["fb-00006"]["identities"]
        assert [(g["provider"], g["subject"], g["email"], g["emailVerified"]) for g in google] == [
            ("google", "108517425519432100006", "User6@example.com", True)], google
        assert "google" in rows["fb-00006"]["providers"] and "identities" not in rows["fb-00004"], rows["fb-00006"]
        apple = rows["fb-00008"]["identities"]
        assert [(a["provider"], a["email"], a["emailVerified"]) for a in apple] == [("apple", "relay8@privaterelay.appleid.com", False)], apple
        assert sum("identities" in row for row in rows.values()) == 200
        # Signing in again works against the new hash.
        uid, password = next(iter(REAL.items()))
        code, answer, _ = daemon.post("/v1/password/sign-in", {"email": "user0@example.com", "password": password})
        assert code == 200, answer
    finally:
        assert daemon.stop() == 0
    assert SIGNER_KEY not in open(daemon.log_path).read()


def test_importing_twice_changes_nothing_and_dry_run_writes_nothing():
    database = os.path.join(WORK, "twice.db")
    path = os.path.join(WORK, "small.json")
    write_firebase(path, [firebase_user(i) for i in range(1200)])
    _, dry = import_json(database, path, "--dry-run")
    assert dry["dryRun"] is True and dry["imported"] == 1200, dry
    assert export(database) == []
    _, first = import_json(database, path, "--batch-size", "500")
    assert first["imported"] == 1200
    before = export(database)
    _, second = import_json(database, path)
    assert second["imported"] == 0 and second["skipped"] == 1200 and second["conflicts"] == [], second
    assert export(database) == before
    # The same hash key was not stored twice.
    keys = json.loads(postern("keys", "list", "--database", database, "--json").stdout)
    assert [k["purpose"] for k in keys].count("firebase-hash-key") == 1, keys


def test_broken_rows_are_named_by_line_and_strict_imports_nothing():
    path = os.path.join(WORK, "broken.json")
    users = [json.dumps(firebase_user(i)) for i in range(20)]
    users[5] = '{"localId": "fb-00005", "email": }'                        # line 7: not JSON
    users[9] = json.dumps({**firebase_user(9), "email": "not an address"})  # line 11
    users[12] = json.dumps({**firebase_user(12), "localId": ""})            # line 14
    with open(path, "w") as f:
        f.write('{"users": [\n' + ",\n".join(users) + "\n]}\n")
    strict_db = os.path.join(WORK, "strict.db")
    status, strict = import_json(strict_db, path, "--strict", check=False)
    assert status == 65 and strict["abandoned"] is True and strict["imported"] == 0, strict
    assert export(strict_db) == []
    database = os.path.join(WORK, "broken.db")
    status, summary = import_json(database, path)
    assert status == 0 and summary["imported"] == 17, summary
    assert summary["malformed"] == [
        {"line": 7, "reason": "not valid JSON"}, {"line": 11, "reason": "invalid email"}, {"line": 14, "reason": "missing uid"}], summary
    text = postern("users", "import", path, "--from", "firebase", "--database", database, *HASH_FLAGS).stdout
    assert "line 11: malformed, invalid email" in text and "not an address" not in text, text


def test_an_address_held_by_another_account_is_a_conflict_and_kept():
    database = os.path.join(WORK, "conflict.db")
    first = os.path.join(WORK, "first.json")
    write_firebase(first, [firebase_user(1)])
    import_json(database, first)
    other = {**firebase_user(2), "localId": "someone-else", "email": "USER1@example.com"}
    second = os.path.join(WORK, "second.json")
    write_firebase(second, [firebase_user(5), other])
    _, summary = import_json(database, second)
    assert summary["imported"] == 1 and summary["conflicts"] == [{"line": 3, "reason": "address held by another account"}], summary
    rows = [json.loads(l) for l in export(database)]
    holder = [r for r in rows if r["email"].lower() == "user1@example.com"]
    assert len(holder) == 1 and holder[0]["uid"] == "fb-00001", rows
    # A Google subject another account holds: the row is a conflict, the link stays where it is.
    write_firebase(first, [firebase_user(6)])
    import_json(database, first)
    taker = {**firebase_user(1205), "localId": "google-taker", "providerUserInfo": firebase_user(6)["providerUserInfo"]}
    write_firebase(second, [taker])
    _, summary = import_json(database, second)
    assert summary["imported"] == 0 and summary["conflicts"] == [{"line": 2, "reason": "identity linked to another account"}], summary
    rows = {json.loads(l)["uid"]: json.loads(l) for l in export(database)}
    assert "google-taker" not in rows and rows["fb-00006"]["identities"][0]["subject"] == "108517425519432100006", rows


def test_export_and_import_into_an_empty_database_is_identical():
    source = os.path.join(WORK, "serve", "postern.db")
    lines = export(source)
    assert len(lines) == 10_002
    path = os.path.join(WORK, "export.jsonl")
    postern("users", "export", "--database", source, "--output", path)
    assert open(path).read().splitlines() == lines
    target = os.path.join(WORK, "restored.db")
    status, summary = import_json(target, path, source="postern")
    assert status == 0 and summary["imported"] == 10_002 and summary["malformed"] == [], summary
    assert export(target) == lines


def scrypt_phc(password, ln=10, r=8, p=1):
    """A `$scrypt$` PHC string as Postern writes it (standard base64, no padding)."""
    salt = os.urandom(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=1 << ln, r=r, p=p, dklen=32, maxmem=1 << 30)
    b64 = lambda b: base64.b64encode(b).decode().rstrip("=")
    return f"$scrypt$ln={ln},r={r},p={p}${b64(salt)}${b64(digest)}"


def test_unproved_passwords_planted_counters_and_costly_hashes():
    attacker, owner = "the attacker's password", "the owner's password"
    line = lambda uid, email, verified, **more: json.dumps(
        {"uid": uid, "email": email, "emailVerified": verified, "disabled": False, "createdAt": 1_700_000_000,
         "providers": ["password"], **more})
    bcrypt_body = "$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"
    lines = [
        line("planted", "victim@example.com", False, passwordHash=scrypt_phc(attacker)),             # line 1
        line("earlier", "earlier@example.com", True, passwordHash=scrypt_phc(attacker)),            # line 2
        line("owner", "owner@example.com", True, passwordHash=scrypt_phc(owner)),                   # line 3
        line("huge", "huge@example.com", True, sessionVersion=9223372036854775807),                 # line 4
        line("bcrypt16", "b16@example.com", True, passwordHash="$2b$16" + bcrypt_body),              # line 5
        line("scrypt20", "s20@example.com", True,                                                   # line 6
             passwordHash="$scrypt$ln=20,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g"),
    ]
    path = os.path.join(WORK, "planted.jsonl")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    name = "planted"
    database = os.path.join(WORK, name, "postern.db")
    os.makedirs(os.path.dirname(database), exist_ok=True)
    status, summary = import_json(database, path, source="postern")
    assert status == 0 and summary["imported"] == 3 and summary["passwordsDropped"] == 1, summary
    reasons = {m["line"]: m["reason"] for m in summary["malformed"]}
    assert reasons[4] == "invalid sessionVersion (an integer from 0 to 2^53 - 1)", reasons
    assert reasons[5].startswith("passwordHash: bcrypt cost above 10"), reasons
    assert reasons[6].startswith("passwordHash: scrypt N·r·p above 2^18"), reasons
    text = postern("users", "import", path, "--from", "postern", "--database", os.path.join(WORK, "planted-text.db")).stdout
    assert "1 password(s) dropped: address not verified" in text, text

    # What an earlier import (before this fix) could leave: an unverified account holding the
    # attacker's password, and a session version near Int64.max.
    with sqlite3.connect(database) as db:
        db.execute("UPDATE accounts SET email_verified = 0 WHERE uid = 'earlier'")
        db.execute("UPDATE accounts SET session_version = 9223372036854775806 WHERE uid = 'owner'")
    db.close()

    token = "import-admin-" + base64.b16encode(os.urandom(16)).decode()
    daemon = Daemon(WORK, name, "--admin-token", token)
    try:
        sign_in = lambda email, password: daemon.post("/v1/password/sign-in", {"email": email, "password": password})
        code, answer, _ = sign_in("victim@example.com", attacker)
        assert code == 400 and answer["error"]["code"] == "INVALID_LOGIN_CREDENTIALS", answer

        # The attacker is in with the password an earlier import kept; the owner proves the
        # address with the 6-digit code of a sign-in mail.
        code, held, _ = sign_in("earlier@example.com", attacker)
        assert code == 200 and held["uid"] == "earlier", held
        code, _, _ = daemon.post("/v1/email-link/send", {"email": "earlier@example.com"})
        assert code == 202
        digits = six_digits(daemon.mailbox.next("earlier@example.com"))
        code, proved, _ = daemon.post("/v1/email-link/complete", {"code": digits, "email": "earlier@example.com"})
        assert code == 200 and proved["uid"] == "earlier" and proved["needsPassword"] is True, proved
        code, answer, _ = sign_in("earlier@example.com", attacker)
        assert code == 400 and answer["error"]["code"] == "INVALID_LOGIN_CREDENTIALS", answer
        code, _, _ = daemon.get("/v1/me", token=held["session"]["idToken"])
        assert code == 401, code
        code, answer, _ = daemon.post("/v1/token", {"refreshToken": held["session"]["refreshToken"]})
        assert code in (400, 401), (code, answer)
        code, me, _ = daemon.get("/v1/me", token=proved["session"]["idToken"])
        assert code == 200 and me["emailVerified"] is True and "password" not in me["providers"], me

        # The session version at the top: disabled and enabled three times, then a password change.
        admin = {"Authorization": f"Bearer {token}"}
        for disabled in (True, False) * 3:
            code, answer, _ = daemon.request("PATCH", "/v1/admin/users/owner", {"disabled": disabled}, headers=admin)
            assert code == 200 and answer["disabled"] is disabled, (code, answer)
        code, signed, _ = sign_in("owner@example.com", owner)
        assert code == 200, signed
        code, changed, _ = daemon.post("/v1/me/password", {"password": "a brand new password"}, token=signed["session"]["idToken"])
        assert code == 200, changed
        code, _, _ = daemon.get("/v1/me", token=signed["session"]["idToken"])
        assert code == 401, code
        code, me, _ = daemon.get("/v1/me", token=changed["idToken"])
        assert code == 200 and me["uid"] == "owner", me
        assert daemon.process.poll() is None, "the daemon died"
    finally:
        assert daemon.stop() == 0
