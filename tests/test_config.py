"""Settings precedence and validation."""

from __future__ import annotations

import pytest

from arcology_oracle.config import DEFAULT_PORT, load_settings
from arcology_oracle.errors import ConfigError


def test_defaults_are_loopback_and_documented_port():
    s = load_settings(environ={})
    assert s.host == "127.0.0.1" and s.is_loopback and s.port == DEFAULT_PORT
    assert DEFAULT_PORT not in (11434, 8765, 42110)
    assert s.embed_model == "nomic-embed-text"
    assert s.prefixes_for("nomic-embed-text").document == "search_document: "
    assert s.prefixes_for("nomic-embed-text:latest").query == "search_query: "
    assert s.prefixes_for("all-minilm").document == ""


def test_precedence_file_then_env_then_flags(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text('port = 1111\nollama_host = "gpu-box:11434"\nprivate_tags = ["private", "journal"]\n')
    s = load_settings(config_file=config, environ={})
    assert s.port == 1111 and s.ollama_host == "http://gpu-box:11434" and "journal" in s.private_tags
    s = load_settings(config_file=config, environ={"ARCOLOGY_ORACLE_PORT": "2222", "OLLAMA_HOST": "http://x:1"})
    assert s.port == 2222 and s.ollama_host == "http://x:1"
    s = load_settings(config_file=config, environ={"ARCOLOGY_ORACLE_PORT": "2222"}, overrides={"port": 3333, "host": None})
    assert s.port == 3333 and s.host == "127.0.0.1"


def test_specific_env_beats_generic_ollama_host():
    s = load_settings(environ={"OLLAMA_HOST": "http://a:1", "ARCOLOGY_ORACLE_OLLAMA_HOST": "http://b:2"})
    assert s.ollama_host == "http://b:2"


def test_invalid_values_are_listed():
    with pytest.raises(ConfigError) as err:
        load_settings(environ={"ARCOLOGY_ORACLE_PORT": "99999", "ARCOLOGY_ORACLE_CHUNK_CHARS": "10"})
    assert "port" in str(err.value) and "chunk_chars" in str(err.value)


def test_missing_explicit_config_file_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_settings(config_file=tmp_path / "missing.toml", environ={})


def test_non_loopback_detection():
    assert not load_settings(environ={}, overrides={"host": "0.0.0.0"}).is_loopback
    assert load_settings(environ={}, overrides={"host": "::1"}).is_loopback
    assert load_settings(environ={}, overrides={"host": "localhost"}).is_loopback
    assert not load_settings(environ={}, overrides={"host": "100.64.1.2"}).is_loopback


def test_allowed_hosts_from_file_env_and_flags(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text('allowed_hosts = ["MyBox.tail-1.ts.net.", "other:8443", "::1"]\n')
    assert load_settings(config_file=config, environ={}).allowed_hosts == ("mybox.tail-1.ts.net", "other", "::1")
    env = {"ARCOLOGY_ORACLE_ALLOWED_HOSTS": "a.ts.net, b.ts.net"}
    assert load_settings(config_file=config, environ=env).allowed_hosts == ("a.ts.net", "b.ts.net")
    s = load_settings(config_file=config, environ=env, overrides={"allowed_hosts": ["c.ts.net"]})
    assert s.allowed_hosts == ("c.ts.net",)
    for bad in ("https://x.ts.net/", "x.ts.net/path", "a b"):
        with pytest.raises(ConfigError, match="allowed_hosts"):
            load_settings(environ={}, overrides={"allowed_hosts": [bad]})


def test_a_token_a_browser_cannot_send_is_refused():
    # The web page sends the token in a header: only printable ASCII can go there.
    for token in ("пароль-для-заметок", "right-token…", "two words"):
        with pytest.raises(ConfigError, match="printable ASCII"):
            load_settings(overrides={"token": token}, environ={})
    assert load_settings(overrides={"token": " s3cret-T0ken_~ "}, environ={}).token == "s3cret-T0ken_~"


def test_list_settings_from_the_environment_as_json_lists_too():
    """A JSON list, as the TOML file writes it, is read as one: split at its commas, its
    items were '["private"' and '"therapy"]', so no heading was private."""
    env = {
        "ARCOLOGY_ORACLE_PRIVATE_TAGS": '["private", "therapy"]',
        "ARCOLOGY_ORACLE_EXCLUDE_GLOBS": '["attic/**", "**/*.draft.org"]',
    }
    s = load_settings(environ=env)
    assert s.private_tags == ("private", "therapy")
    assert s.exclude_globs == ("attic/**", "**/*.draft.org")
    s = load_settings(environ={"ARCOLOGY_ORACLE_EXCLUDE_GLOBS": "[ab]*.org, attic/**"})
    assert s.exclude_globs == ("[ab]*.org", "attic/**")


def test_private_tags_are_org_tags():
    """Written with Org's colons they are the same tags; anything no heading can carry
    is refused with the setting named, rather than keeping nothing private."""
    config = {"private_tags": [":private:", "therapy:journal", "日記", "निजी"]}
    assert load_settings(environ={}, overrides=config).private_tags == ("private", "therapy", "journal", "日記", "निजी")
    for bad in ('["private"', "my private", "", "private!", "secret½"):
        with pytest.raises(ConfigError, match="private_tags.*not an Org tag"):
            load_settings(environ={}, overrides={"private_tags": [bad]})
