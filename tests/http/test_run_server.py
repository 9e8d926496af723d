"""What the daemon's process does around its app (http/app.py's run_server)."""

from __future__ import annotations

import gc

from arcology_oracle.http import app as app_module


def test_the_objects_of_the_start_are_kept_out_of_the_cyclic_gc_once_listening(make_settings, monkeypatch):
    # Each full collection scanned the start's ~82,000 objects again (~40 ms at a million
    # headings, holding the GIL): one fell in the first query after nearly every start
    # (BENCHMARKS.md, issue 30, forty-second round).
    frozen = []

    def serve(app, sockets, on_listening):
        assert gc.get_freeze_count() == 0
        on_listening()
        frozen.append(gc.get_freeze_count())

    monkeypatch.setattr(app_module, "serve", serve)
    gc.unfreeze()
    try:
        assert app_module.run_server(make_settings(port=0)) == 0
    finally:
        gc.unfreeze()  # the other tests of this process see the collector as it was
    assert frozen and frozen[0] > 1000, frozen
