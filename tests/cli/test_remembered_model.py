"""The index remembers its embedding model as it remembers its notes directory: a
command given no model, and none configured, takes the index's. A `status` after
`index --embed-model M` recorded the default model instead and dropped every vector."""

from __future__ import annotations

import json

from tests.runners import run_cli


async def test_a_command_without_a_model_keeps_the_indexs_vectors(tmp_path, roam_dir, fake_ollama):
    db = str(tmp_path / "m.db")
    at = ("--db", db, "--ollama-host", fake_ollama.url)
    code, out, err = await run_cli("index", str(roam_dir), "--embed-model", "all-minilm", *at)
    assert code == 0 and "0 pending" in out, (out, err)
    for command in (("status", "--json"), ("search", "bread hydration", "--json"), ("index",)):
        code, out, err = await run_cli(*command, *at)
        assert code == 0 and "embedding model changed" not in err, (command, err)
        if command[0] == "search":
            assert json.loads(out)["mode"] == "hybrid"
    code, out, _ = await run_cli("status", "--json", *at)
    status = json.loads(out)
    assert status["embedder"]["model"] == "all-minilm" and status["embedded"] == status["chunks"] > 0, status
    code, out, err = await run_cli("status", "--json", "--embed-model", "nomic-embed-text", *at)  # given: it is the user's
    assert code == 0 and json.loads(out)["embedded"] == 0 and "embedding model changed" in err
