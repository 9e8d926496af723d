"""A diary sexp quieted however the model's stream cuts the text (:mod:`arcology_oracle.notes.streamed_sexps`)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from arcology_oracle.notes.org_escape import diary_sexps_quieted
from arcology_oracle.notes.streamed_sexps import SexpQuieter


_TOKENS = st.lists(st.sampled_from(["%", "%%(", "&", "<", "\n", "\r", "a", " ", "("]), max_size=12).map("".join)


@given(_TOKENS, st.lists(st.integers(0, 36), max_size=6))
def test_the_pieces_join_to_the_whole_text_quieted(text, cuts):
    quieter, out, at = SexpQuieter(), [], 0
    for cut in sorted(min(cut, len(text)) for cut in cuts) + [len(text)]:
        out.append(quieter.feed(text[at:cut]))
        at = cut
    out.append(quieter.flush())
    assert "".join(out) == diary_sexps_quieted(text, cr_breaks=True)


def test_a_piece_ending_where_a_sexp_may_start_waits_for_the_next():
    quieter = SexpQuieter()
    assert quieter.feed("ok\n%") == "ok\n"  # "%" starting a line may be "%%(" yet
    assert quieter.feed("%(x)") == "\u200b%%(x)"
    assert quieter.feed(" and 5%") == " and 5%"  # not a line's start: handed on
    assert quieter.feed(" <%") == " " and quieter.flush() == "<%"
