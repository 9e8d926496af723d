"""The rows of ``node_labels``: what the graph signal of similarity compares between
nodes besides links (a module of its own so that writes and migrations share it)."""

from __future__ import annotations

from collections.abc import Sequence


def node_labels(tags: Sequence[str], refs: Sequence[str]) -> list[str]:
    """``"tag:X"`` for each tag (inherited ones included) and ``"ref:Y"`` for each
    ``ROAM_REFS`` entry of a node, without repeats."""
    return [f"tag:{t}" for t in dict.fromkeys(tags)] + [f"ref:{r}" for r in dict.fromkeys(refs)]
