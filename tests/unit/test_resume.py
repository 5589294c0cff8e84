"""An output is resumed only by a run of the same settings."""

from __future__ import annotations

import json

import pytest

from agentcli.errors import UsageError
from agentcli.resume import (
    differing_keys,
    guard_output,
    settings_digest,
    settings_path,
    weights_identity,
)

SETTINGS = {"env": "textcraft", "policy": {"model": "models/tiny", "temperature": 0.0}}


def test_a_new_output_keeps_its_settings_and_a_same_rerun_resumes(tmp_path):
    records = tmp_path / "episodes.jsonl"
    guard_output(records, SETTINGS, overwrite=False)
    assert json.loads(settings_path(records).read_text()) == SETTINGS
    records.write_text('{"item_id": "textcraft_0"}\n')
    guard_output(records, SETTINGS, overwrite=False)  # the same settings: resumed
    assert records.read_text() == '{"item_id": "textcraft_0"}\n'


def test_other_settings_are_refused_with_what_changed_and_the_ways_out(tmp_path):
    records = tmp_path / "episodes.jsonl"
    guard_output(records, SETTINGS, overwrite=False)
    records.write_text('{"item_id": "textcraft_0"}\n')
    other = {**SETTINGS, "policy": {"model": "models/tiny1", "temperature": 0.0}}
    with pytest.raises(UsageError, match="policy.model: 'models/tiny' → 'models/tiny1'") as error:
        guard_output(records, other, overwrite=False)
    assert "--out elsewhere" in str(error.value) and "--overwrite" in str(error.value)
    assert records.read_text() == '{"item_id": "textcraft_0"}\n'  # nothing lost

    guard_output(records, other, overwrite=True)
    assert not records.exists() and json.loads(settings_path(records).read_text()) == other


def test_records_of_unknown_settings_are_refused(tmp_path):
    records = tmp_path / "episodes.jsonl"
    records.write_text('{"item_id": "textcraft_0"}\n')
    with pytest.raises(UsageError, match="settings are unknown"):
        guard_output(records, SETTINGS, overwrite=False)


def test_the_weights_identity_changes_with_the_weights_only(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "model.safetensors").write_bytes(b"a" * 3000)
    (model / "config.json").write_text("{}")
    first = weights_identity(model)
    (model / "config.json").write_text('{"note": 1}')
    assert weights_identity(model) == first
    (model / "model.safetensors").write_bytes(b"a" * 2999 + b"b")
    assert weights_identity(model) != first
    assert weights_identity(tmp_path / "missing") is None


def test_a_changed_digest_is_named_by_its_first_characters(tmp_path):
    records = tmp_path / "corrections.jsonl"
    guard_output(records, {"inputs": {"rollout": {"sha256": "a" * 64}}}, overwrite=False)
    records.write_text('{"item_id": "textcraft_0"}\n')
    with pytest.raises(UsageError) as error:
        guard_output(records, {"inputs": {"rollout": {"sha256": "b" * 64}}}, overwrite=False)
    assert f"inputs.rollout.sha256: '{'a' * 12}…' → '{'b' * 12}…'" in str(error.value)


def test_the_settings_digest_ignores_key_order_and_sees_any_value():
    reordered = {"policy": {"temperature": 0.0, "model": "models/tiny"}, "env": "textcraft"}
    assert settings_digest(reordered) == settings_digest(SETTINGS)
    hotter = {**SETTINGS, "policy": {"model": "models/tiny", "temperature": 0.7}}
    assert settings_digest(hotter) != settings_digest(SETTINGS)


@pytest.mark.parametrize("empty", [None, "", [], {}])
def test_a_setting_added_since_at_an_empty_default_is_no_change(empty):
    # records of the previous version, which had no policy.args, resume under this one
    assert differing_keys(SETTINGS, {**SETTINGS, "args": empty}) == []
    assert differing_keys({**SETTINGS, "args": empty}, SETTINGS) == []


def test_a_setting_added_or_removed_with_a_value_is_a_change():
    assert differing_keys(SETTINGS, {**SETTINGS, "args": ["--x"]}) == ["args"]
    assert differing_keys({**SETTINGS, "limit": 0}, SETTINGS) == ["limit"]
    assert differing_keys(SETTINGS, {**SETTINGS, "policy": {"model": "models/tiny"}}) == [
        "policy.temperature"
    ]
