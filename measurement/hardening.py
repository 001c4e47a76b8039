"""The hostile cases tried against TRACE, and the answer each gets: ``manage.py hardening_report``.

Each case sends one hostile input the way an outsider (or a careless folder) would: a request to
the application through Django's test client (CSRF checks on, a made-up well-formed CSRF cookie),
a request on the wire to a web process of the embedded server, a folder to the importer, a URL to
the IIIF check. The answer actually received is recorded next to the one expected; the command
fails when any differs, and writes ``docs/hardening.md`` from what it saw. The application cases
run on a throwaway test database (created and destroyed by the command), the import cases in a
temporary folder.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings

from agent.investigations import services
from agent.models import Batch, Investigation, Verdict
from archive import alto_memory
from archive.iiif import iiif_url_problem
from archive.importers import scan_file
from trace_site.web_server import bind_listener

MADE_UP_CSRF = "A" * 32


@dataclass(frozen=True)
class Case:
    area: str
    sent: str  # what was sent, in words
    expected: str
    received: str

    @property
    def held(self) -> bool:
        return self.received.startswith(self.expected)


def _first_line(content: bytes) -> str:
    text = content.decode("utf-8", "replace").strip()
    return text.splitlines()[0][:110] if text else ""


def _answer(response) -> str:
    line = _first_line(response.content) if response.status_code != 302 else (
        f"to {response['Location']}")
    return f"{response.status_code} {line}".strip()


def _full_width(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


# ----------------------------------------------------------------------------- application


def _gate_cases() -> Iterator[Case]:
    anonymous = Client(enforce_csrf_checks=True)
    anonymous.cookies["csrftoken"] = MADE_UP_CSRF
    bodies = [
        ("a form declared utf-16", "username=a".encode("utf-16"),
         "application/x-www-form-urlencoded; charset=utf-16"),
        ("a form declared latin-1", "username=caf\xe9".encode("latin-1"),
         "application/x-www-form-urlencoded; charset=latin-1"),
        ("a form declared in an unknown charset", b"username=a",
         "application/x-www-form-urlencoded; charset=x-nothing"),
        ("form bytes not UTF-8 (%FF, raw 0xFF)", b"username=%FF&password=\xff",
         "application/x-www-form-urlencoded"),
        ("a multipart field not UTF-8", b"--b\r\nContent-Disposition: form-data; "
         b"name=\"username\"\r\n\r\n\xff\xfe\r\n--b--\r\n", "multipart/form-data; boundary=b"),
        ("a multipart body without boundary", b"x", "multipart/form-data"),
    ]
    for sent, body, content_type in bodies:
        response = anonymous.generic("POST", "/accounts/login/", body, content_type=content_type)
        yield Case("request gate", f"anonymous POST /accounts/login/: {sent}", "400",
                   _answer(response))
    yield Case("request gate", "anonymous GET /accounts/login/?next=%FF (not UTF-8)", "400",
               _answer(anonymous.get("/accounts/login/?next=%FF")))
    yield Case("request gate", "anonymous POST with Content-Length: abc", "400",
               _answer(anonymous.generic("POST", "/accounts/login/", b"a=b", CONTENT_LENGTH="abc",
                                         content_type="application/x-www-form-urlencoded")))
    yield Case("request gate", "a NUL in the path (/archive/%00/)", "400",
               _answer(anonymous.get("/archive/%00/")))
    yield Case("request gate", "a NUL in the session cookie", "400",
               _answer(anonymous.get("/accounts/login/", HTTP_COOKIE="sessionid=ab\x00cd")))


def _logged_in_cases(user, finished_pk: int, key: str) -> Iterator[Case]:
    client = Client()
    client.force_login(user)
    yield Case("request gate", "GET /investigations/<40 digits>/", "400",
               _answer(client.get(f"/investigations/{'9' * 40}/")))
    page = client.get("/search/?q=budget&cap=٣").content.decode()
    yield Case("forms", "GET /search/?cap=٣ (an Arabic-Indic three)", "refused:",
               "refused: " + ("Write numbers with the digits 0-9."
                              if "Write numbers with the digits 0-9." in page else "read as 3"))
    note = f"/investigations/{finished_pk}/note/"
    yield Case("forms", "a note on a document key of 401 characters", "400",
               _answer(client.post(note, {"document": "k" * 401, "note": "n"})))
    yield Case("forms", "a note on a key the investigation never saw", "400",
               _answer(client.post(note, {"document": "x:never-seen", "note": "n"})))
    yield Case("forms", "a note on an empty key", "400",
               _answer(client.post(note, {"document": "", "note": "n"})))
    response = client.post("/investigations/batches/new/", {
        "name": "", "file": SimpleUploadedFile("q" * 236 + ".csv", b"question\nQui ?\n")})
    batch = Batch.objects.order_by("-pk").first()
    yield Case("forms", "a batch with no name and a file name of 240 characters",
               "302, named after the file cut to 200",
               f"{response.status_code}, named after the file cut to {len(batch.name)}"
               if batch else _answer(response))
    response = client.post("/investigations/batches/new/", {
        "name": "", "file": SimpleUploadedFile("q.csv", b'question\n"Qui a dit\nrien\n')})
    yield Case("forms", "a batch CSV with an unterminated quote", "refused:",
               "refused: unreadable CSV" if "unreadable CSV" in response.content.decode()
               else _answer(response))
    token = services.investigation_share(investigation=Investigation.objects.get(pk=finished_pk))
    other = Client()
    other.force_login(type(user).objects.create_user(f"viewer-{uuid.uuid4().hex[:6]}"))
    yield Case("sharing", "a share token with its last character changed", "404",
               _answer(other.get(f"/investigations/{finished_pk}/review/",
                                 {"token": token[:-1] + ("A" if token[-1] != "A" else "B")})))
    staff = type(user).objects.create_superuser(f"root-{uuid.uuid4().hex[:6]}", password=None)
    admin = Client()
    admin.force_login(staff)
    yield Case("admin", "GET /admin/auth/user/<id>/change/?_to_field= (staff)", "400",
               _answer(admin.get(f"/admin/auth/user/{user.pk}/change/?_to_field=")))
    yield Case("admin", "GET /admin/auth/user/<id>/delete/?_to_field= (staff)", "400",
               _answer(admin.get(f"/admin/auth/user/{user.pk}/delete/?_to_field=")))


def _throttle_cases() -> Iterator[Case]:
    client = Client()
    tries = settings.TRACE_LOGIN_MAX_FAILURES
    for plain, spelled, password in (
            (f"bob{uuid.uuid4().hex[:6]}", _full_width, "wrong"),
            (f"carol{uuid.uuid4().hex[:6]}", _full_width, "Right-password-1")):
        get_user_model().objects.create_user(plain, password="Right-password-1")
        address = f"192.0.2.{uuid.uuid4().int % 250 + 1}"
        for _ in range(tries):
            client.post("/accounts/login/", {"username": plain, "password": "wrong"},
                        REMOTE_ADDR=address)
        response = client.post("/accounts/login/", {"username": spelled(plain),
                                                    "password": password}, REMOTE_ADDR=address)
        what = "the right password" if password != "wrong" else "a wrong password"
        yield Case("login throttle", f"after {tries} failures of '{plain[:5]}…', its full-width "
                                     f"spelling with {what}", "429",
                   f"{response.status_code}")


def _cookie_cases(user_name: str, password: str) -> Iterator[Case]:
    with override_settings(SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https"),
                           SESSION_COOKIE_SECURE=False):
        client = Client(HTTP_X_FORWARDED_PROTO="https")
        response = client.post("/accounts/login/", {"username": user_name, "password": password})
        secure = response.cookies["sessionid"]["secure"] if "sessionid" in response.cookies else ""
    yield Case("cookies", "a log-in forwarded from https by the proxy "
                          "(TRACE_SECURE_COOKIES unset)", "sessionid Secure",
               "sessionid Secure" if secure else "sessionid not Secure")


def application_cases() -> list[Case]:
    """Run the application's cases (a database must be set up: the command makes a test one)."""
    user = get_user_model().objects.create_user(f"alice-{uuid.uuid4().hex[:6]}",
                                                password="Right-password-1")
    investigation = services.investigation_create(owner=user, question="Qui parle du budget ?",
                                                  enqueue=False)
    Investigation.objects.filter(pk=investigation.pk).update(status="finished")
    key = "legaulois_1887_v1:seen"
    Verdict.objects.create(investigation=investigation, document_key=key, decision="accept")
    cases = [*_gate_cases(), *_logged_in_cases(user, investigation.pk, key), *_throttle_cases(),
             *_cookie_cases(user.get_username(), "Right-password-1")]
    return cases


# ----------------------------------------------------------------------------- imports


def import_cases() -> list[Case]:
    """Hostile folders given to the importer; each must be refused, nothing written."""
    cases = []
    with tempfile.TemporaryDirectory() as work:
        root = Path(work)
        secret = root / "outside" / "secret.xml"
        secret.parent.mkdir()
        secret.write_text(_ALTO_PAGE, encoding="utf-8")

        def refused(sent: str, folder: Path, fmt: str) -> None:
            scan = scan_file(folder, fmt=fmt)
            shown = scan.errors[0].message if scan.errors else f"{scan.records} document(s) read"
            cases.append(Case("imports", sent, "refused:",
                              f"refused: {shown}" if scan.errors else shown))

        folder = root / "alto_link"
        folder.mkdir()
        (folder / "0001.xml").write_text(_ALTO_PAGE, encoding="utf-8")
        (folder / "0002.xml").symlink_to(secret)
        refused("an ALTO folder without METS, one page a link to a file outside", folder, "alto")
        folder = root / "txt_link"
        folder.mkdir()
        (folder / "a.txt").write_text("Séance du 3 mars 1887.", encoding="utf-8")
        (folder / "b.txt").symlink_to("/etc/hostname")
        refused("a .txt folder, one file a link to /etc/hostname", folder, "txt")
        for href in ("../../etc/passwd", "file:///etc/passwd"):
            folder = root / f"mets_{len(cases)}"
            folder.mkdir()
            (folder / "p1.xml").write_text(_ALTO_PAGE, encoding="utf-8")
            (folder / "issue_mets.xml").write_text(_mets(href), encoding="utf-8")
            refused(f"a METS file naming {href} beside its page", folder, "alto")
    return cases


_ALTO_PAGE = """<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v3#"><Layout><Page WIDTH="10" HEIGHT="10">
<PrintSpace><TextBlock ID="B1"><TextLine><String CONTENT="Séance"/><SP/>
<String CONTENT="secrète"/></TextLine></TextBlock></PrintSpace></Page></Layout></alto>
"""


def _mets(other_href: str) -> str:
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink"
 OBJID="issue1"><mets:fileSec>
<mets:fileGrp USE="ALTO"><mets:file ID="A1"><mets:FLocat xlink:href="p1.xml"/></mets:file>
</mets:fileGrp><mets:fileGrp USE="OTHER"><mets:file ID="O1">
<mets:FLocat xlink:href="{other_href}"/></mets:file></mets:fileGrp></mets:fileSec></mets:mets>
"""


def alto_memory_case() -> Case:
    """A valid ALTO page near TRACE_ALTO_MAX_FILE_BYTES, read in a child process."""
    with tempfile.TemporaryDirectory() as work:
        measured = alto_memory.measure(Path(work) / "large.xml", 19_500_000)
    growth = measured["peak_mb_after"] - measured["peak_mb_before"]
    return Case("imports", f"a valid ALTO page of {measured['bytes'] / 1e6:.1f} MB "
                           f"({measured['characters']:,} characters of text)",
                "read within 150 MB",
                f"read within 150 MB ({growth:.0f} MB over the process's baseline at peak)"
                if growth < 150 else f"read with {growth:.0f} MB over the baseline at peak")


# ----------------------------------------------------------------------------- IIIF

IIIF_HOSTS = ["http://127.0.0.1.nip.io/iiif", "http://localtest.me/iiif",
              "http://[::127.0.0.1]/iiif", "http://[64:ff9b::a9fe:a9fe]/iiif",
              "http://[2002:7f00:1::]/iiif", "http://10-0-0-5.example.org/iiif",
              "http://2130706433/iiif", "http://[::ffff:169.254.169.254]/iiif"]


def iiif_cases() -> list[Case]:
    return [Case("IIIF", url, "refused:",
                 f"refused: {problem}" if (problem := iiif_url_problem(url)) else "accepted")
            for url in IIIF_HOSTS]


# ----------------------------------------------------------------------------- the server


def _exchange(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(data)
        received = b""
        try:
            while chunk := connection.recv(65536):
                received += chunk
        except TimeoutError:
            received += b" (no answer within 10 s)"
        return received


def server_cases(spawn: Callable[[int], subprocess.Popen]) -> list[Case]:
    """Requests on the wire to one web process of the embedded server (its own listener)."""
    listener = bind_listener("127.0.0.1", 0)
    process = spawn(listener.fileno())
    port = listener.getsockname()[1]
    listener.close()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if _exchange(port, b"NONSENSE\r\n\r\n"):
                    break
            except OSError:
                time.sleep(0.3)
        over = settings.TRACE_MAX_REQUEST_BYTES + 1
        started = time.monotonic()
        answer = _exchange(port, b"POST /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                 b"Content-Type: application/x-www-form-urlencoded\r\n"
                                 + f"Content-Length: {over}\r\n\r\n".encode())
        seconds = time.monotonic() - started
        status = answer.split(b"\r\n", 1)[0].decode("latin-1")
        cases = [Case("web server", f"anonymous POST announcing {over:,} bytes, none sent",
                      "HTTP/1.1 413", f"{status} after {seconds:.2f} s, before any byte")]
        answer = _exchange(port, b"GET /\x01 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                 b"Content-Length: x\r\n\r\n")
        head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1")
        csp = "with" if "Content-Security-Policy: default-src 'none'" in head else "without"
        cases.append(Case("web server", "a request waitress cannot parse (Content-Length: x)",
                          "HTTP/1.1 400", f"{head.splitlines()[0]}, {csp} a CSP"))
        return cases
    finally:
        process.terminate()
        process.wait(timeout=30)


def spawn_web_process(fd: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "trace_site.web_server", "--fd", str(fd),
                             "--threads", "1"], pass_fds=[fd], env=dict(os.environ),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


# ----------------------------------------------------------------------------- the page


def report(cases: list[Case], *, command: str) -> str:
    """The Markdown page: every case, what came back, and whether it is the answer expected."""
    held = sum(case.held for case in cases)
    lines = [
        "# Hardening: the hostile cases tried, and their answers", "",
        "Written by the command that sent them (on a throwaway test database, a temporary "
        "folder and one web process of the embedded server on loopback):", "",
        "```", command, "```", "",
        f"{held} of {len(cases)} cases got the answer expected. The fuzz walk over every URL "
        "pattern (`tests/site/test_request_gate.py`, `tests/site/test_hostile_requests.py`) "
        "sends these values and more to every route and asserts no 500 and no traceback.", "",
        "| area | sent | expected | received | held |", "|---|---|---|---|---|",
    ]
    for case in cases:
        cells = [case.area, case.sent, case.expected, case.received,
                 "yes" if case.held else "**no**"]
        lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ")
                                       for c in cells) + " |")
    return "\n".join(lines) + "\n"
