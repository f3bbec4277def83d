"""Option text from Python is saved as the flag reads it, so resumes match (pg18 #2).

`env.options={"episode_length": "25", "randomize": "true"}` built the same
environment as `--env.option episode_length=25 --env.option randomize=true`,
but config.yaml kept the text: resuming with 25 and True was refused as
"changes that alter the run" ('25' -> 25).
"""

import yaml

import purejaxdrl as pjd
from purejaxdrl.config import to_dict
from purejaxdrl.training.resume import binding_changes, config_from_dict

TEXT = {
    "episode_length": "25",
    "randomize": "true",
    "scale": "1e-2",
    "on": "1",
    "reward_config": {"scales": {"energy": "0"}},
    "observation_key": "state",
    "note": "a: b",  # a mapping to YAML: meant as text
    "bad": "[1,",  # no YAML: stays, for the environment to refuse
}
TYPED = {
    "episode_length": 25,
    "randomize": True,
    "scale": 0.01,
    "on": 1,
    "reward_config": {"scales": {"energy": 0}},
    "observation_key": "state",
    "note": "a: b",
    "bad": "[1,",
}


def _with(options):
    return pjd.apply_overrides(pjd.TrainConfig(), {"env": {"options": options}})


def test_text_options_are_kept_as_the_flag_reads_them():
    config = _with(TEXT)
    assert config.env.options == TYPED
    assert type(config.env.options["randomize"]) is bool
    saved = yaml.safe_load(yaml.safe_dump(to_dict(config)))  # its config.yaml
    assert saved["env"]["options"] == TYPED


def test_a_resume_with_typed_values_matches_a_run_given_text():
    saved = config_from_dict(yaml.safe_load(yaml.safe_dump(to_dict(_with(TEXT)))), "x")
    assert binding_changes(saved, _with(TYPED)) == []
    assert binding_changes(saved, _with(TEXT)) == []
    # A real change is still one.
    (change,) = binding_changes(saved, _with(TYPED | {"episode_length": 26}))
    assert change.startswith("env.options: {") and "'episode_length': 26" in change


def test_text_that_yaml_quoted_stays_text():
    # A preset's or config.yaml's `name: '1e3'` (and the flag's `name="1e3"`)
    # was read as YAML already: its quotes say text, which stays text.
    data = to_dict(pjd.TrainConfig())
    data["env"]["options"] = {"name": "1e3", "n": 2}
    assert config_from_dict(data, "config.yaml").env.options == data["env"]["options"]
    config = pjd.apply_overrides(pjd.TrainConfig(), data, read_texts=False)
    assert config.env.options == {"name": "1e3", "n": 2}
