"""``Result.as_dict`` is spelled out field by field (it builds every result of every
answer): it must keep giving every field, in declaration order, as the generic form did."""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from arcology_oracle.answers.retrieval import Result

_text = st.text(max_size=20)
_maybe = st.none() | _text
results = st.builds(
    Result,
    node_id=_maybe, heading_id=_maybe, title=_text, heading=_text, olp=st.lists(_text, max_size=3), file=_text,
    line=st.integers(1, 10**6), score=st.floats(allow_nan=False), snippet=_text, date=_maybe,
    role=st.sampled_from([None, "oracle", "conversation"]), linked=st.booleans(), same_file=st.booleans(),
    below_cutoff=st.booleans(),
)  # fmt: skip


def generic(result: Result) -> dict:
    """What ``as_dict`` gave before it was spelled out: each field in order, ``olp`` copied."""
    return {f.name: list(result.olp) if f.name == "olp" else getattr(result, f.name) for f in dataclasses.fields(Result)}


@given(results)
def test_as_dict_is_every_field_in_order(result: Result) -> None:
    d = result.as_dict()
    assert list(d) == [f.name for f in dataclasses.fields(Result)]
    assert d == generic(result)
    assert d["olp"] == result.olp and d["olp"] is not result.olp  # a copy: callers may change it
