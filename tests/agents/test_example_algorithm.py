"""The "Adding an algorithm" guide's module, registered and trained as a user would."""

import dataclasses
import importlib.util
import pathlib

import pytest

import purejaxdrl as pjd
from purejaxdrl.agents import registry
from purejaxdrl.config import field_docs

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "reinforce.py"
GUIDE = ROOT / "docs" / "guide" / "adding-an-algorithm.md"


def _example():
    spec = importlib.util.spec_from_file_location("reinforce", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_guide_shows_the_module_the_tests_train():
    assert f"```python\n{EXAMPLE.read_text()}```" in GUIDE.read_text()


@pytest.mark.timeout(300)
def test_the_example_registers_and_learns_cartpole(monkeypatch):
    reinforce = _example()
    # What the guide's two lines in agents/registry.py do: the record in
    # _ALGORITHMS and a section of TrainConfig.
    monkeypatch.setitem(registry._ALGORITHMS, "reinforce", reinforce.ALGORITHM)

    section = reinforce.ReinforceConfig
    field = dataclasses.field(default_factory=section)
    Config = dataclasses.make_dataclass(  # noqa: N806  (a class)
        "Config",
        [("reinforce", section, field)],
        bases=(pjd.TrainConfig,),
        frozen=True,
        kw_only=True,
    )

    for name in ("baseline_cost", "learning_rate", "gamma", "max_grad_norm"):
        assert field_docs(reinforce.ReinforceConfig)[name]
    config = pjd.apply_overrides(
        Config(algo="reinforce"),
        {
            "env": {"id": "CartPole-v1"},
            "num_envs": 16,
            "unroll_length": 32,
            "total_steps": 16 * 32 * 200,
            "devices": 1,
            "network": {"hidden_sizes": [64, 64], "activation": "tanh"},
        },
    )
    result = pjd.train(config, console=False)
    assert result.updates == 200
    # A random policy's CartPole episodes last about 22 steps.
    assert result.mean_return >= 150, result.mean_return
