"""Windows of evidence from dialogue: the turns that match a question, with their
neighbours, as ``/ask`` and ``/recall`` give them.

A dialogue heading (:mod:`arcology_oracle.notes.dialogue`) is stored per turn, and its
chunks are its scenes and its turns (:func:`arcology_oracle.notes.turns.scene_chunks`).
Turns are ranked by reciprocal rank fusion of:

* BM25 over single turns (any of the question's words but the speakers' names);
* each query vector's nearest turns, by the turns' own vectors;
* each query vector's nearest scenes: a scene ranks as a whole (each of its turns at
  the scene's rank), and within a scene the turns sharing more of the question's words
  come first;
* the turns of the speakers the question is about, in their BM25 order: the user's own
  (``settings.user_speakers``) when it is in the first person ("what did I say about",
  "when did I"), and any speaker it names ("what did Ana say").

The best turns become **windows**: a turn the keywords or its own vector found with
``settings.evidence_neighbours`` turns either side, a turn only its scene's vector found
with that scene (the vector says the scene matches, not which turn). Windows of one
heading that touch or overlap are merged, also when one grows to reach another, so no
two windows show the same turn. A window passes the relevance gate when its best
chunk's cosine reaches ``settings.min_vector_similarity`` or its turns hold
``settings.min_keyword_coverage`` of the question's words (not its time nor frame:
:func:`.timeline.subject`). A window is shown verbatim
with its speakers, date and heading; a window longer than its share of the context is
cut to the turns nearest its best one, never in the middle of a turn.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..config import Settings
from ..notes import cjk
from ..notes.dialogue import speaker_label
from ..store import Store
from ..store.dated import across_days
from . import retrieval, timeline
from .prompts import escape_data
from .sources import Source, org_link_label
from .when import DateRange

SCENES = 60  # nearest scenes read per query vector
NEAREST = 4 * SCENES  # nearest chunks read per query vector: scenes and single turns
# The most characters windows take, labels included: with the system prompt and the
# question, a prompt of windows stays within 10,000 characters (issue 28's goal).
WINDOWS_CHARS = 8000
TURNS = 200  # turns read from BM25
_NAME_WORD = re.compile(r"\b[A-Z][\w'-]+")
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|me|my|mine|myself)\b")
_STEMS = ("ing", "ed", "es", "s")


def _stem(word: str) -> str:
    """``word`` without its ending, and without a final ``e`` left then, so that "bake"
    is what "baked", "bakes" and "baking" become."""
    for suffix in _STEMS:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            word = word[: -len(suffix)]
            break
    return word[:-1] if len(word) >= 4 and word.endswith("e") else word


# The verbs of saying, stemmed: in a question about dialogue they ask for it ("what did
# ChatGPT tell me about rye"), they are not what was said.
_SAYING = frozenset(_stem(w) for w in "say said tell told talk mention ask spoke speak".split())


def terms(text: str) -> set[str]:
    """The stemmed content words of ``text``, and for its Japanese or Chinese (where a run
    of characters is no word) the pieces of its nouns and stems
    (:func:`~arcology_oracle.notes.cjk.noun_terms`)."""
    words = {_stem(w) for w in retrieval.WORD.findall(cjk.strip_nouns(text).lower()) if len(w) > 1 and w not in retrieval.STOPWORDS}
    return words | cjk.noun_terms(text)


def first_person(question: str) -> bool:
    """Whether ``question`` asks about the user ("what did I say", "my sister")."""
    return _FIRST_PERSON.search(question) is not None


def _seen(text: str, seen: Sequence[str]) -> bool:
    """Whether the turn ``text`` (without its ``Name:``) is one of the ``seen`` turns."""
    words = " ".join(retrieval.WORD.findall(text.partition(": ")[2].lower()))
    return len(words) >= 12 and any(f" {words} " in turn for turn in seen)


@dataclass(slots=True)
class Window:
    """Turns ``first``..``last`` of one dialogue heading (``row``), best first by
    ``score``; ``relevance`` is the gate's (cosine of the best scene, or keyword
    coverage) and ``best`` the ordinal of the turn that matched best."""

    row: dict
    turns: list[dict]
    score: float
    relevance: float
    best: int
    anchors: set[int] = field(default_factory=set)

    def __iter__(self):
        # A note of one member, as timeline.journal_order reads notes.
        yield self

    @property
    def first(self) -> int:
        return self.turns[0]["ordinal"]

    @property
    def last(self) -> int:
        return self.turns[-1]["ordinal"]

    @property
    def text(self) -> str:
        return "\n\n".join(t["text"] for t in self.turns)

    @property
    def speakers(self) -> list[str]:
        return [s for s in dict.fromkeys(t["speaker"] for t in self.turns) if s]

    @property
    def date(self) -> str | None:
        days = [t["date"] for t in self.turns if t["date"]]
        if not days:
            return self.row["date"]
        first, last = days[0].replace("T", " "), days[-1].replace("T", " ")
        return first if first[:10] == last[:10] else f"{first[:10]}..{last[:10]}"

    def cut(self, chars: int) -> None:
        """Keep the turns nearest ``best`` that fit in ``chars`` (at least that one)."""
        keep = [t for t in self.turns if t["ordinal"] == self.best]
        size = len(keep[0]["text"])
        others = sorted(
            (t for t in self.turns if t["ordinal"] != self.best), key=lambda t: abs(t["ordinal"] - self.best)
        )
        for t in others:
            if size + len(t["text"]) + 2 > chars:
                break
            keep.append(t)
            size += len(t["text"]) + 2
        self.turns = sorted(keep, key=lambda t: t["ordinal"])


def _ranked_turns(
    store: Store, settings: Settings, question: str, vectors: Sequence[Sequence[float]], asked: str | None = None
) -> tuple:
    """Turns ``(heading, ordinal)`` by fused score, best first; the cosine of each turn's
    best chunk (its own vector, else its best scene's); and the scene of each turn that
    only a scene's vector found; and the names of the speakers the question is about, as
    :func:`terms` reads them. ``asked``: the words to search for (``question`` without
    its time words), ``question`` still saying who it is about ("I")."""
    rankings: list[list] = []
    # The speakers the question is about: the user ("I"), or those it names; their
    # names are left out of the keyword query (every turn of theirs holds the name).
    named = store.known_speakers(
        [*_NAME_WORD.findall(question), *(settings.user_speakers if first_person(question) else ())]
    )
    unnamed = question if asked is None else asked
    if named:
        unnamed = re.sub("|".join(rf"\b{re.escape(n)}\b(?:'s)?" for n in named), " ", unnamed, flags=re.I)
    match = retrieval.fts_query(unnamed, any_term=True, bigram_columns="cjk_text")  # turns_fts's
    hits = store.turn_search(match, TURNS) if match else []
    rankings.append([(h, o) for h, o, _, _ in hits])
    pinpointed = {(h, o) for h, o, _, _ in hits}  # found as a turn, not as a scene
    cosine: dict[tuple[int, int], float] = {}
    words = terms(question if asked is None else asked)
    ties: dict[tuple[int, int], int] = {}
    scene_of: dict[tuple[int, int], tuple[int, int]] = {}
    for vector in vectors:
        near = store.knn(vector, NEAREST)
        chunks = store.scenes_for_hashes([h for h, _ in near])
        spans = [(s, retrieval.cosine_from_l2(d)) for h, d in near for s in chunks.get(h, ())]
        # The turns' own vectors, nearest first.
        alone = [((heading, first), cos) for (heading, first, last), cos in spans if first == last][:TURNS]
        rankings.append([key for key, _ in alone])
        for key, cos in alone:
            cosine[key] = max(cos, cosine.get(key, -1.0))
            pinpointed.add(key)
        scenes = [(span, cos) for span, cos in spans if span[1] != span[2]][:SCENES]
        turns = store.turns_between(span for span, _ in scenes)
        # A scene ranks as a whole: each of its turns gets the scene's rank.
        ranking: list[list[tuple[int, int]]] = []
        for (heading, first, last), cos in scenes:
            inside = [(heading, o) for o in range(first, last + 1) if (heading, o) in turns]
            new = [key for key in inside if key not in scene_of]
            for key in new:
                cosine.setdefault(key, cos)
                scene_of[key] = (first, last)
                ties[key] = len(words & terms(turns[key]["text"]))
            ranking.append(new)
        rankings.append(ranking)
    if named:
        rankings.append([(h, o) for h, o, speaker, _ in hits if speaker in named])
    scores: dict[tuple[int, int], float] = {}
    for ranking in rankings:
        for rank, entry in enumerate(ranking, start=1):
            for key in entry if isinstance(entry, list) else [entry]:
                scores[key] = scores.get(key, 0.0) + 1.0 / (retrieval.RRF_K + rank)
    # Within a scene, the turns sharing more of the question's words first.
    order = sorted(scores.items(), key=lambda item: (item[1], ties.get(item[0], 0)), reverse=True)
    # A turn found by its scene alone stands for that scene: the scene is its window.
    scene_only = {key: span for key, span in scene_of.items() if key not in pinpointed}
    return order, cosine, scene_only, terms(" ".join(named))


def find_windows(
    store: Store,
    settings: Settings,
    *,
    question: str,
    vectors: Sequence[Sequence[float]],
    k: int,
    date_range: DateRange | None = None,
    exclude_nodes: frozenset[str] = frozenset(),
    seen: Sequence[str] = (),
    with_answers: bool = False,
) -> list[Window]:
    """The best ``k`` windows of evidence for ``question`` (see the module docstring),
    best first; ``[]`` when nothing is indexed as dialogue. ``seen``: the turns of the
    conversation being answered (``" words "`` of each, lower case), whose dialogue
    gives no window. The oracle's own answers in a conversation find no window unless
    ``settings.oracle_answers_as_evidence``, and are left out of the windows of the
    user's turns around them unless that or ``with_answers`` (``/recall``: what was
    said, each turn labelled with its speaker)."""
    if not question or not store.has_turns():
        return []
    # With a range, its words ("last week", the date) are what dates the turns, not what
    # they say: the turns are searched and gated by the rest (they hid every window); so
    # is a question's frame ("when did I first write about"), the question when all frame.
    asked = timeline.subject(question, date_range) if date_range is not None else timeline.subject(question) or question
    words = terms(asked) - _SAYING
    ranked, cosine, scene_only, names = _ranked_turns(store, settings, question, vectors, asked) if words else ([], {}, {}, set())
    # A speaker the question names picks the turns (ranked above); what else it asks for
    # gates them, the name only when nothing else is asked ("what did ChatGPT tell me"):
    # every turn of the speaker's starts with the name.
    words = words - names or words
    ranked = ranked[: 20 * k]
    filler: set[tuple[int, int]] = set()
    if date_range is not None:
        # Then the range's turns, oldest first, as /ask fills a dated question with the
        # range's headings ("what did I say last week" has no word to search for).
        in_range = store.turns_in_range(*date_range.bounds(), 20 * k)
        filler, found = set(in_range), {key for key, _ in ranked}
        ranked += [(key, 0.0) for key in in_range if key not in found]
    spread = max(0, settings.evidence_neighbours)
    limit = min(settings.context_chars, WINDOWS_CHARS) // k
    oracle = set() if settings.oracle_answers_as_evidence else store.oracle_turns(h for (h, _), _ in ranked)
    rows: dict[int, dict] = {}
    windows: list[Window] = []
    for (heading, ordinal), score in ranked:
        if heading not in rows:
            rows.update(store.headings([heading]))
        row = rows.get(heading)
        if row is None or (row["node_id"] is not None and row["node_id"] in exclude_nodes) or (heading, ordinal) in oracle:
            continue
        first, last = scene_only.get((heading, ordinal), (ordinal - spread, ordinal + spread))
        span = store.turns_between([(heading, max(0, first), last)])
        turns = [span[key] for key in sorted(span)]
        if seen and any(_seen(t["text"], seen) for t in turns):
            rows[heading] = None  # the conversation being answered
            continue
        if oracle and not with_answers:
            turns = [t for t in turns if (heading, t["ordinal"]) not in oracle]
        if date_range is not None and not date_range.contains(span[(heading, ordinal)]["date"]):
            continue
        if not turns:
            continue
        # The relevance gate, for a turn that would grow a window as for a new one: on
        # the turn's own words when it was found as a turn (not on its neighbours').
        shown = turns if (heading, ordinal) in scene_only else [span[(heading, ordinal)]]
        coverage = len(words & terms(" ".join(t["text"] for t in shown))) / max(1, min(len(words), 6))
        relevance = cosine.get((heading, ordinal))
        by_vector = relevance is not None and relevance >= settings.min_vector_similarity
        if not by_vector and coverage < settings.min_keyword_coverage and (heading, ordinal) not in filler:
            continue
        relevance = relevance if relevance is not None else min(1.0, coverage)
        touching = [w for w in windows if w.row["id"] == heading and turns[0]["ordinal"] <= w.last + 1
                    and turns[-1]["ordinal"] >= w.first - 1]  # fmt: skip
        if touching:
            # A window grows up to its share of the context, no further; windows of one
            # heading that come to touch become one.
            grown = {t["ordinal"]: t for w in touching for t in w.turns} | {t["ordinal"]: t for t in turns}
            if sum(len(t["text"]) + 2 for t in grown.values()) <= limit:
                merged = touching[0]
                merged.turns = [grown[o] for o in sorted(grown)]
                merged.anchors.add(ordinal)
                for other in touching[1:]:
                    merged.anchors |= other.anchors
                    merged.relevance = max(merged.relevance, other.relevance)
                    windows.remove(other)
            continue
        if len(windows) < k:
            windows.append(Window(row, turns, score, relevance, ordinal, {ordinal}))
    return windows


class Fitted(list):
    """Windows that fit, and ``chars``: the characters they take."""

    chars: int = 0


def share(candidates: list, found: list[Window], k: int, budget: int, *, by_date: bool = False) -> tuple[list, Fitted]:
    """Heading candidates (``relevance`` each) and windows, best first each, sharing the
    ``k`` notes by relevance: the windows among the best ``k`` get a share of ``budget``
    as large as their share of those notes, at most :data:`WINDOWS_CHARS` (see :func:`fit`).
    With ``by_date`` (a question that is only its time: relevance says nothing, and a
    window of the range's turns has none), by date instead, spread over the range's days
    as its headings are (each day's first, then each day's second...), within a day what
    states its date before what is dated by its file's modification time (a
    conversation's turns state theirs), so that a busy first day leaves room for a later
    conversation."""
    entries = [(c.relevance, 0, i) for i, c in enumerate(candidates)] + [(w.relevance, 1, i) for i, w in enumerate(found)]

    def dated(entry: tuple) -> tuple[str, bool]:
        row = candidates[entry[2]].row if entry[1] == 0 else None
        day = (row["date"] if row is not None else found[entry[2]].date) or "9999"
        return day[:10], row is not None and row.get("date_source") == "mtime"

    if by_date:  # spread over the range's days as its headings are (store.dated.across_days)
        entries.sort(key=dated)
        merged = [entries[i] for i in across_days([dated(e)[0] for e in entries])][:k]
    else:
        merged = sorted(entries, key=lambda e: -e[0])[:k]
    taken = sorted(i for _, kind, i in merged if kind == 1)
    fitted = fit([found[i] for i in taken], min(WINDOWS_CHARS, budget * len(taken) // max(1, len(merged))))
    return candidates, fitted


def fit(windows: list[Window], budget: int) -> Fitted:
    """The windows, in order, within ``budget`` characters: each is cut to an equal
    share of what is left (and the first is always kept)."""
    out = Fitted()
    for i, w in enumerate(windows):
        share = budget // max(1, len(windows) - i) - 160
        if len(w.text) > share:
            w.cut(max(share, 1))
        cost = len(w.text) + 160
        if out and cost > budget:
            continue
        budget -= cost
        out.chars += cost
        out.append(w)
    return out


def interleave(groups: list[list], found: Sequence[Window]) -> list:
    """Notes (groups of heading candidates) and windows in one list, each kept in its
    own order, the more relevant head first at each step."""
    out: list = []
    g, w = list(groups), list(found)
    while g or w:
        if w and (not g or w[0].relevance > max(c.relevance for c in g[0])):
            out.append(w.pop(0))
        else:
            out.append(g.pop(0))
    return out


def source(n: int, w: Window) -> Source:
    """The window as a numbered source: its heading, first line, speakers and date."""
    row = w.row
    return Source(
        n=n, node_id=row["node_id"], title=row["node_title"], heading=row["title"], file=row["file"],
        line=w.turns[0]["start_line"], score=round(float(w.relevance), 4), olp=list(row["olp"]), date=w.date,
        speakers=w.speakers, end_line=w.turns[-1]["end_line"],
    )  # fmt: skip


def block(n: int, w: Window, file_title: str) -> str:
    """The window as a ``<note>`` for the prompt: heading, speakers, date, the turns."""
    row = w.row
    outline = " > ".join([file_title, *row["olp"], row["title"]])
    lines = [f'<note n="{n}">', f"[{n}] {org_link_label(row['node_title'])}"]
    if w.date:
        lines.append(f"Date: {w.date}")
    lines.append(f"Speakers: {speaker_label(w.speakers)}")
    lines += [f"File: {row['file']}", "", f"## {outline}", escape_data(w.text), "</note>"]
    return "\n".join(lines)
