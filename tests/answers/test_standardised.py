""":func:`~arcology_oracle.answers.fusion.standardised` computes its mean and spread
without numpy's ``mean()`` and ``std()`` (BENCHMARKS.md, issue 30, thirty-fourth round);
the z-scores must stay theirs to the last bit, or /similar's order and scores move."""

from __future__ import annotations

import numpy as np

from arcology_oracle.answers.fusion import standardised


def numpys(scored):
    """The z-scores as numpy's own ``std()`` and ``mean()`` give them."""
    if not scored:
        return {}
    values = np.asarray([s for _, s in scored], dtype=np.float64)
    spread = float(values.std())
    if spread == 0.0:
        return {h: 0.0 for h, _ in scored}
    mean = float(values.mean())
    return {h: (float(s) - mean) / spread for h, s in scored}


def test_z_scores_are_numpys_to_the_last_bit():
    rng = np.random.default_rng(30)
    cases = [[], [(0, 1.5)], [(0, 2.0), (1, 2.0), (2, 2.0)], [(3, 0), (1, 5), (2, 0.0)]]
    for n in [2, 3, 7, 8, 9, 16, 31, 35, 64, 127, 128, 129, 300]:
        for scale in (1e-6, 1.0, 1e6):
            cases.append([(i, float(v)) for i, v in enumerate(rng.standard_normal(n) * scale + scale * 3)])
            cases.append([(i, float(v)) for i, v in enumerate(rng.exponential(scale, n))])  # BM25-like, many near 0
            cases.append([(i, 0.0 if i % 3 else float(v)) for i, v in enumerate(rng.random(n))])  # notes sharing no word
    for scored in cases:
        assert standardised(scored) == numpys(scored), scored
