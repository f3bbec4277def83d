"""Preset YAML's repeated-key check: nested, merged and self-referring nodes."""

import pytest

import purejaxdrl as pjd
from purejaxdrl.training.presets.load import presets_dir
from purejaxdrl.yaml_text import RepeatedKeyError, load_yaml


def test_a_key_twice_in_a_mapping_inside_a_list_is_refused():
    with pytest.raises(RepeatedKeyError, match=r"'x' appears twice in section a"):
        load_yaml("a:\n  - {x: 1, x: 2}\n")


def test_two_merge_keys_are_yamls_own_rule_not_a_repeated_key():
    text = "a: &a {x: 1}\nb: &b {y: 2}\nc:\n  <<: *a\n  <<: *b\n"
    assert load_yaml(text)["c"] == {"x": 1, "y": 2}


def test_an_anchor_that_names_itself_is_read_not_walked_forever(tmp_path):
    # `&x [*x]` is a list holding itself: the check walked it until Python's
    # recursion limit (a traceback); the file's fault is its unknown key.
    data = load_yaml("a: &x [*x]\n")
    assert data["a"][0] is data["a"]
    path = tmp_path / "anchors.yaml"
    path.write_text(
        (presets_dir() / "cartpole.yaml").read_text() + "anchors: &x [*x]\n"
    )
    with pytest.raises(pjd.ConfigError, match="anchors"):
        pjd.load_preset(str(path))
