"""``/openapi.json`` describes every route, is generated from the pydantic models, sits
behind the token, and the schemathesis run over it against the real daemon finds no 5xx,
no badly shaped error and no private text (see tests/api_fuzz.py; the long run is
bench/fuzz_api.py)."""

from __future__ import annotations

import asyncio
import re

from arcology_oracle.http.app import create_app
from arcology_oracle.http.openapi import build_spec
from arcology_oracle.http.ask_schemas import AskRequest

from tests.api_fuzz import (
    EXCLUDE_GLOBS,
    add_private_notes,
    all_routes,
    fuzz,
    probe_private,
)
from tests.runners import start_daemon, wait_indexed


def test_every_route_is_described(make_settings):
    app = create_app(make_settings(), watch=False)
    paths = build_spec()["paths"]
    described = {(method.upper(), re.sub(r"\{[^}]+\}", "x", path)) for path, ops in paths.items() for method in ops}
    served = {(m, p) for m, p in all_routes(app) if m not in ("HEAD", "*")}
    served = {(m, "/static/x" if p.startswith("/static/") else p) for m, p in served}
    assert served == described


def test_bodies_are_described_by_the_models_the_handlers_use():
    spec = build_spec()
    body = spec["paths"]["/ask"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/AskRequest"}
    assert spec["components"]["schemas"]["AskRequest"]["properties"]["k"]["maximum"] == (
        AskRequest.model_json_schema()["properties"]["k"]["maximum"]
    )
    assert spec["openapi"].startswith("3.1")


async def test_openapi_is_behind_the_token(make_client, make_settings, fake_ollama):
    client = await make_client(make_settings(ollama_host=fake_ollama.url, token="tok"))
    assert (await client.get("/openapi.json")).status == 401
    resp = await client.get("/openapi.json", headers={"Authorization": "Bearer tok"})
    assert resp.status == 200 and (await resp.json())["paths"]["/search"]


async def test_schemathesis_finds_no_5xx_no_bad_error_and_nothing_private(tmp_path, roam_dir, fake_ollama):
    add_private_notes(roam_dir)
    daemon = await start_daemon(tmp_path, roam_dir=roam_dir, ollama_url=fake_ollama.url, token="fuzz-token",
                                env={"ARCOLOGY_ORACLE_EXCLUDE_GLOBS": EXCLUDE_GLOBS})  # fmt: skip
    try:
        await wait_indexed(daemon)
        # The fuzzer is synchronous (requests): run it in a thread, so this loop keeps
        # serving the fake Ollama the daemon talks to.
        report = await asyncio.to_thread(fuzz, daemon.url, token="fuzz-token", max_examples=12)
        assert report.failures == [], "\n\n".join(report.failures)
        assert report.operations >= 25 and report.requests > 300, report
        assert any(400 <= status < 500 for status in report.statuses) and 200 in report.statuses, report.statuses
        leaks = await asyncio.to_thread(probe_private, daemon.url, token="fuzz-token")
        assert leaks == []
        assert "Traceback" not in daemon.log()
    finally:
        daemon.stop()
