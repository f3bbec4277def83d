"""Every config field explains itself: described once, shown by `--help`."""

import dataclasses
import inspect
import pathlib
import re
import typing

import jax
import pytest

import purejaxdrl as pjd
from purejaxdrl.agents.registry import algorithms, names
from purejaxdrl.cli.processes import DistributedConfig
from purejaxdrl.config_docs import attribute_docs, field_descriptions, field_docs


def _config_classes() -> set[type]:
    """TrainConfig, the config classes it holds or inherits, and the rest.

    Held: the sections (env, network, ..., every algorithm's); inherited: the
    run's fields, the algorithm sections' class and the shared field groups.
    """
    found: set[type] = set()

    def walk(cls: type) -> None:
        if cls in found:
            return
        found.add(cls)
        held = typing.get_type_hints(cls).values()
        for other in (*held, *cls.__mro__[1:]):
            if dataclasses.is_dataclass(other):
                walk(other)

    walk(pjd.TrainConfig)
    for record in algorithms():
        walk(record.config_type)
    walk(DistributedConfig)  # the command line's, not a TrainConfig field
    return found


CONFIGS = sorted(_config_classes(), key=lambda cls: cls.__qualname__)


def test_the_walk_reaches_every_algorithm_and_section():
    names = {cls.__name__ for cls in CONFIGS}
    assert {r.config_type.__name__ for r in algorithms()} <= names
    assert {"EnvConfig", "NetworkConfig", "CheckpointConfig", "EvalConfig"} <= names
    assert {"HostConfig", "RunFields", "AlgorithmConfigs", "ReplayFields"} <= names


@pytest.mark.parametrize("cls", CONFIGS, ids=lambda cls: cls.__name__)
def test_every_config_field_has_a_description(cls):
    docs = field_docs(cls)
    missing = [f.name for f in dataclasses.fields(cls) if not docs.get(f.name)]
    assert not missing, (
        f"{cls.__module__}.{cls.__qualname__}: describe {missing} in the "
        "`Attributes:` section of the class that declares them"
    )


@pytest.mark.parametrize("cls", CONFIGS, ids=lambda cls: cls.__name__)
def test_each_field_is_described_once_by_a_class_that_declares_it(cls):
    for klass in cls.__mro__:
        own = set(klass.__dict__.get("__annotations__", {}))
        stale = set(attribute_docs(klass)) - own
        assert not stale, f"{klass.__qualname__} describes fields it lacks: {stale}"
    for field in dataclasses.fields(cls):
        by = [k.__name__ for k in cls.__mro__ if field.name in attribute_docs(k)]
        assert len(by) == 1, f"{cls.__name__}.{field.name} described by {by}"


def test_attributes_sections_are_read_as_google_style():
    class Documented:
        """Summary.

        Attributes:
          alpha: first line
            continued, with   spaces.
          beta, gamma: shared.
          delta:
            on the next line.

        Returns:
          not an attribute: ignored.
        """

    assert attribute_docs(Documented) == {
        "alpha": "first line continued, with spaces.",
        "beta": "shared.",
        "gamma": "shared.",
        "delta": "on the next line.",
    }


def test_a_shared_field_keeps_its_groups_description_under_a_new_default():
    from purejaxdrl.agents.fields import QLearningFields, ReplayFields
    from purejaxdrl.agents.r2d2 import R2D2Config

    # R2D2 redeclares the replay sizes and n_step with its own defaults.
    assert R2D2Config().buffer_size != ReplayFields().buffer_size
    r2d2 = field_docs(R2D2Config)
    assert r2d2["buffer_size"] == field_docs(ReplayFields)["buffer_size"]
    assert r2d2["n_step"] == field_docs(QLearningFields)["n_step"]


def test_descriptions_follow_dotted_paths():
    docs = field_descriptions(pjd.TrainConfig())
    assert docs["ppo.clip_eps"].startswith("ε of the clipped surrogate")
    assert docs["r2d2.buffer_size"] == docs["dqn.buffer_size"]
    assert docs["network.core_size"] == "the recurrent core's hidden size."
    assert all(docs.values())


@pytest.mark.parametrize("record", algorithms(), ids=lambda r: r.name)
def test_a_shared_fields_description_names_no_one_algorithm(record):
    # `--algo dqn --help` read "--dqn.learning-rate: the optimiser's step size.
    # SAC keeps it constant, for its actor and critics...": SAC's words, in
    # the description every algorithm's learning rate shares.
    docs = field_descriptions(record.default_config())
    assert "the optimiser's step size" in docs["learning_rate"]
    others = [n.upper() for n in names() if n != record.name]
    named = [n for n in others if re.search(rf"\b{n}\b", docs["learning_rate"])]
    assert not named, docs["learning_rate"]


def _described(doc: str) -> dict[str, str]:
    """The `Attributes:` entries of `doc`, read as a class's own docstring."""
    return attribute_docs(type("Read", (), {"__doc__": doc}))


@pytest.mark.parametrize(
    "cls",
    [pjd.TrainConfig, *dict.fromkeys(r.config_type for r in algorithms())],
    ids=lambda cls: cls.__name__,
)
def test_help_describes_every_field_inherited_ones_too(cls):
    # help(pjd.TrainConfig) showed none of the run's fields (num_envs,
    # num_logs, ...: RunFields'), help(PPOConfig) 4 of its 15: the others
    # are described on the bases, whose docstrings help() does not show.
    described = _described(inspect.getdoc(cls))
    assert list(described) == [f.name for f in dataclasses.fields(cls)]
    assert described == field_docs(cls)  # the texts --help shows


def test_a_users_algorithm_config_and_run_config_describe_every_field():
    from purejaxdrl.agents import ppo, registry
    from purejaxdrl.training.config import config_class

    @jax.tree_util.register_dataclass
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class MineConfig(pjd.agents.PPOConfig):
        """Mine.

        Attributes:
          extra: a field of its own.

        """

        extra: float | jax.Array = 1.0

    record = dataclasses.replace(
        ppo.ALGORITHM, name="mine", config_type=MineConfig, default_config=MineConfig
    )
    with registry.registered(record):
        run = config_class()
        assert run is not pjd.TrainConfig
        for cls in (MineConfig, run):
            described = _described(inspect.getdoc(cls))
            assert list(described) == [f.name for f in dataclasses.fields(cls)]
        assert described["mine"] == "mine's hyper-parameters, read when algo is mine."
        assert _described(inspect.getdoc(MineConfig))["extra"] == "a field of its own."


def test_the_api_reference_renders_every_field_of_the_configs():
    # mkdocstrings renders griffe's reading of the source, which holds a
    # class's own `Attributes:` only; mkdocs.yml's extension hands it the
    # docstring help() shows.
    griffe = pytest.importorskip("griffe")
    root = pathlib.Path(__file__).resolve().parents[1]
    assert "docs/griffe_fields.py:FieldDocs" in (root / "mkdocs.yml").read_text()
    extensions = griffe.load_extensions(f"{root}/docs/griffe_fields.py:FieldDocs")
    package = griffe.load("purejaxdrl", search_paths=[str(root)], extensions=extensions)
    for cls in [pjd.TrainConfig, *(r.config_type for r in algorithms())]:
        path = f"{cls.__module__}.{cls.__name__}".removeprefix("purejaxdrl.")
        rendered = _described(package[path].docstring.value)
        assert rendered == field_docs(cls), cls.__name__


@pytest.mark.parametrize(
    "cls", dict.fromkeys(r.config_type for r in algorithms()), ids=lambda c: c.__name__
)
def test_an_algorithms_docstring_says_which_fields_are_its_own_without_counting(cls):
    # "PPO declares the last four" held in help()'s rewritten text alone (the
    # docstring as written lists those four only), and would go stale when a
    # shared group gains a field.
    written = cls.__dict__.get("_declared_doc", cls.__doc__)
    count = r"\blast (two|three|four|five|six|seven|eight|nine|ten|\d+)\b"
    for doc in (written, inspect.getdoc(cls)):
        assert not re.search(count, " ".join(doc.split())), doc
    # What the sentence says instead: the class's own fields are the ones its
    # docstring describes; the shared ones are described on their groups.
    inherited = {
        name
        for base in cls.__mro__[1:]
        for name in vars(base).get("__annotations__", {})
    }
    own = {name for name in vars(cls)["__annotations__"] if name not in inherited}
    assert set(attribute_docs(cls)) == own
