"""Fuzzing the daemon's whole HTTP surface with schemathesis, from its own ``/openapi.json``.

Used by ``tests/http/test_openapi.py`` (a short, derandomized run) and ``bench/fuzz_api.py``
(a long one). For every operation in the description, schemathesis generates requests
that fit the schema (positive) and requests that break it (negative): parameters,
bodies, path segments. Every answer must:

- not be a 5xx (the compatible APIs may pass on an upstream's 502/504, but the fake
  Ollama never fails unless told to). The ``model`` of native requests is not fuzzed: a
  model Ollama lacks is a 503 there by design;
- when it is a 4xx, be JSON in the called API's error shape;
- match the response schema of the description (schemathesis's own check), so the
  description cannot drift from what the handlers send;
- hold none of the words of the private notes :func:`add_private_notes` writes (and the
  example vault's secret words).

:func:`probe_private` then asks for those words and IDs directly, which random input
would never hit.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from tests.org_samples import CRYPT_ID, EXCLUDED_ID, SECRET_WORDS

FUZZ_PRIVATE_ID = "0f0f0f0f-1111-4222-8333-444455556666"
FUZZ_EXCLUDED_FILE_ID = "0f0f0f0f-1111-4222-8333-777788889999"
FUZZ_NOTES = {
    "health.org": f"""\
#+title: Health
* Appointments
Dentist on Tuesday.
* Therapy sessions :private:
:PROPERTIES:
:ID: {FUZZ_PRIVATE_ID}
:END:
We talked about the quixoticmarmoset dream.
** Medication
Dose of zyglophane noted.
* Bank codes :crypt:
-----BEGIN PGP MESSAGE-----
hQEMAwxylophonevault
-----END PGP MESSAGE-----
""",
    "attic/old.org": "* Old letters\nThe word plumbagoferret lives here.\n",
    "money.org": "#+title: Money\n* Budget\nRent and food.\n* Salary talk :private:%fin:\nAsk for the obsidianpangolin raise.\n",
    "late-filetags.org": "* First\nThe word cardamomnarwhal is private.\n#+filetags: :private:\n",
    "excluded-file.org": f"""\
:PROPERTIES:
:ID: {FUZZ_EXCLUDED_FILE_ID}
:ROAM_EXCLUDE: t
:END:
#+title: Not a note
* Draft
The word vermiculatedyak is never indexed.
""",
}
FUZZ_SECRET_WORDS = (
    "quixoticmarmoset", "zyglophane", "xylophonevault", "plumbagoferret", "vermiculatedyak", "obsidianpangolin",
    "cardamomnarwhal",
)  # fmt: skip
PRIVATE_WORDS = (*SECRET_WORDS, *FUZZ_SECRET_WORDS)
PRIVATE_IDS = (CRYPT_ID, EXCLUDED_ID, FUZZ_PRIVATE_ID, FUZZ_EXCLUDED_FILE_ID)
EXCLUDE_GLOBS = "attic/**"  # give the daemon ARCOLOGY_ORACLE_EXCLUDE_GLOBS=this


def add_private_notes(roam: Path) -> None:
    """Write private, crypt, excluded-glob and ROAM_EXCLUDE notes into ``roam``."""
    for rel, text in FUZZ_NOTES.items():
        path = roam / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def family(path: str) -> str:
    return "ollama" if path.startswith("/api/") else "openai" if path.startswith("/v1/") else "native"


def error_shape_problem(path: str, status: int, body: object) -> str | None:
    """Why ``body`` is not the error shape of the API ``path`` belongs to (None if it is)."""
    kind = family(path)
    if not isinstance(body, dict):
        return f"a {status} answer that is not a JSON object"
    if kind == "native" and not (body.get("ok") is False and body.get("status") == status and isinstance(body.get("error"), str)):
        return f"native error shape expected, got {body!r:.200}"
    if kind == "ollama" and not isinstance(body.get("error"), str):
        return f"Ollama error shape expected, got {body!r:.200}"
    if kind == "openai" and not (isinstance(body.get("error"), dict) and isinstance(body["error"].get("message"), str)):
        return f"OpenAI error shape expected, got {body!r:.200}"
    return None


def check_answer(path: str, status: int, content_type: str, text: str, sent: str = "") -> None:
    """The suite's own checks on one answer (see the module docstring); AssertionError.
    Private words or IDs the request itself held (``sent``) may come back in an error."""
    assert status < 500, f"{status} from {path}: {text[:300]}"
    secrets = [s for s in (*PRIVATE_WORDS, *PRIVATE_IDS) if not (status >= 400 and s in sent)]
    leaked = [s for s in secrets if s in text]
    assert not leaked, f"{path} answered private text {leaked}"
    if 400 <= status < 500:
        assert content_type.startswith("application/json"), f"{status} from {path} as {content_type}"
        problem = error_shape_problem(path, status, json.loads(text))
        assert problem is None, f"{path}: {problem}"


@dataclass
class FuzzReport:
    operations: int = 0
    requests: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


def fuzz(base_url: str, *, token: str | None = None, max_examples: int = 10, derandomize: bool = True) -> FuzzReport:
    """Run schemathesis over every operation of ``base_url``'s description, both
    generation modes; every failure is collected (one per operation and mode)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    schema = schemathesis.openapi.from_url(base_url + "/openapi.json", headers=headers, timeout=30)
    report = FuzzReport()
    session = requests.Session()
    for result in schema.get_all_operations():
        operation = result.ok()
        report.operations += 1
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(max_examples=max_examples, deadline=None, derandomize=derandomize, database=None,
                      suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate, Phase.shrink],
                      print_blob=False)  # fmt: skip
            def one(case) -> None:
                if family(case.path) == "native":
                    # A model Ollama lacks is a 503 on the native API by design (the
                    # README: Ollama cannot give what was asked); only that field is left alone.
                    for part in (case.body, case.query):
                        if isinstance(part, dict):
                            part.pop("model", None)
                response = case.call(base_url=base_url, session=session, headers=headers, timeout=60)
                report.requests += 1
                report.statuses[response.status_code] = report.statuses.get(response.status_code, 0) + 1
                content_type = (response.headers.get("content-type") or [""])[0]
                check_answer(case.path, response.status_code, content_type, response.text)
                if mode is GenerationMode.POSITIVE or response.status_code < 400:
                    case.validate_response(response, checks=[not_a_server_error, response_schema_conformance],
                                           headers=headers)  # fmt: skip

            try:
                one()
            except Unsatisfiable:
                pass  # nothing to break in this operation's input (negative mode)
            except Exception as exc:  # noqa: BLE001 (every failure is reported at the end)
                report.failures.append(f"{operation.method.upper()} {operation.path} ({mode.value}): {exc}"[:2000])
    return report


def probe_private(base_url: str, *, token: str | None = None) -> list[str]:
    """Ask for every private word and ID directly; the requests whose answers leak.

    The fake model echoes the question, so for ``/ask`` and ``/summarize`` the notes
    given to it are checked (the answer's sources), not the echo.
    """
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    calls: list[tuple[str, str, dict]] = []
    for word in PRIVATE_WORDS:
        calls += [
            ("GET", "/search", {"params": {"q": word}}),
            ("POST", "/similar", {"json": {"text": word}}),
            ("POST", "/ask", {"json": {"question": f"what about {word}?"}}),
            ("GET", "/ask", {"params": {"q": word}}),
            ("POST", "/summarize", {"json": {"question": word}}),
        ]
    for node in PRIVATE_IDS:
        calls += [("GET", f"/nodes/{node}", {}), ("GET", "/similar", {"params": {"node": node}}),
                  ("POST", "/summarize", {"json": {"node": node}})]  # fmt: skip
    for rel in FUZZ_NOTES:
        calls += [("GET", "/heading", {"params": {"file": rel, "line": str(n)}}) for n in range(1, 12)]
    leaks = []
    with requests.Session() as session:
        for method, path, kwargs in calls:
            response = session.request(method, base_url + path, headers=headers, timeout=60, **kwargs)
            text = response.text
            if path in ("/ask", "/summarize") and response.status_code == 200:
                text = text.partition("Sources:")[2] if method == "GET" else json.dumps(response.json()["sources"])
            try:
                check_answer(path, response.status_code, response.headers.get("Content-Type", ""), text,
                             sent=f"{path} {kwargs}")  # fmt: skip
            except AssertionError as exc:
                leaks.append(f"{method} {path} {kwargs}: {exc}")
    return leaks


def all_routes(app):
    """(method, concrete path) for every registered route, placeholders filled in."""
    for route in app.router.routes():
        info = route.resource.get_info() if route.resource else {}
        path = info.get("path") or info.get("formatter") or info.get("prefix")
        if path is None:
            continue
        path = re.sub(r"\{[^}]+\}", "x", path)
        if "prefix" in info and "formatter" not in info and "path" not in info:
            path = path.rstrip("/") + "/app.js"
        yield route.method, path
