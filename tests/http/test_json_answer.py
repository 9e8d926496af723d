"""``routes.json_answer`` (the answers of /search and /similar) encodes with pydantic-core
instead of ``json.dumps``: the same JSON values, the same Content-Type, and a value that
encoder refuses (a lone surrogate) still answers as ``json.dumps`` wrote it."""

from __future__ import annotations

import json
import math

from aiohttp import web
from hypothesis import given
from hypothesis import strategies as st

from arcology_oracle.http.routes import json_answer

# JSON-like values as the answers hold them: any text (control characters, U+2028,
# astral characters), floats of every size, nested lists and objects.
scalars = st.none() | st.booleans() | st.integers(-(2**63), 2**63) | st.floats(allow_nan=False) | st.text()
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4), max_leaves=20)


@given(values)
def test_same_json_values_as_json_dumps(value) -> None:
    response = json_answer({"value": value})
    assert json.loads(response.body) == json.loads(json.dumps({"value": value}))


def test_same_content_type_as_json_response() -> None:
    assert json_answer({"a": 1}).headers["Content-Type"] == web.json_response({"a": 1}).headers["Content-Type"]


def test_nan_and_infinities_as_json_dumps_writes_them() -> None:
    body = json.loads(json_answer({"s": [math.nan, math.inf, -math.inf]}).body)["s"]
    assert math.isnan(body[0]) and body[1:] == [math.inf, -math.inf]


def test_a_lone_surrogate_still_answers() -> None:
    # A file name or text read with surrogateescape; UTF-8 cannot hold it, json.dumps escapes it.
    value = {"file": "caf\udce9.org", "results": [{"title": "x\ud800y"}]}
    response = json_answer(value)
    assert response.status == 200
    assert response.body == json.dumps(value).encode("utf-8")
