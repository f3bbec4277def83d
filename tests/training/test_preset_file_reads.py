"""A preset file is parsed once while unchanged, and each reader gets its own copy."""

import os

from purejaxdrl.training.presets import choice as preset_choice
from purejaxdrl.training.presets import files as preset_file
from purejaxdrl.training.presets.files import read_yaml


def test_an_edited_file_is_read_again_and_a_changed_copy_is_not_kept(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("env: {id: CartPole-v1}\nppo: {lr: 1}\n")
    first = read_yaml(path)
    first["ppo"]["lr"] = 99  # a caller's change stays the caller's
    assert read_yaml(path) == {"env": {"id": "CartPole-v1"}, "ppo": {"lr": 1}}
    path.write_text("env: {id: CartPole-v1}\nppo: {lr: 2}\n")
    os.utime(path, ns=(1, 1))  # an edit of the same size: a new mtime shows it
    assert read_yaml(path)["ppo"]["lr"] == 2
    # An edit within the clock's resolution (1-2 s on FAT or some network
    # mounts) keeps the mtime: a new size shows it.
    path.write_text("env: {id: CartPole-v1}\nppo: {lr: 30}\n")
    os.utime(path, ns=(1, 1))
    assert read_yaml(path)["ppo"]["lr"] == 30


def test_choosing_a_preset_by_id_parses_each_shipped_file_at_most_once(monkeypatch):
    parsed = []
    monkeypatch.setattr(preset_file, "_PARSED", {})
    real = preset_file.load_yaml
    monkeypatch.setattr(preset_file, "load_yaml", lambda t: parsed.append(t) or real(t))
    chosen = preset_choice.starting_preset(None, "CartPole-v1", "ppo")
    preset_choice.starting_note("CartPole-v1", "ppo", chosen)
    preset_choice.env_id_hint("CartPole-v2", "ppo")
    assert chosen == "cartpole"
    assert 0 < len(parsed) <= len(preset_file.preset_names())
