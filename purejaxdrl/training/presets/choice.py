"""Which preset a command starts from, and what an id passed as a preset means.

`--env.id X` without `--env` starts from the preset that trains X (or one
for ids like X); `--env X` where X is an id gets a hint naming such a preset.
"""

from typing import Any

from purejaxdrl.agents.registry import registered_by_user
from purejaxdrl.training.presets.files import (
    preset_algorithms,
    preset_names,
    presets_dir,
    read_yaml,
)


def starting_preset(env: str | None, env_id: str | None, algo: str) -> str:
    """The preset a command starts from (its `--env`, `--env.id`, `--algo`).

    `env` if given; else the shipped preset that trains `env_id` with a
    section for `algo`, so `--env.id playground/CartpoleBalance` takes
    cartpole_balance's settings, not CartPole-v1's; else the closest one for
    ids like it (`_kin_presets`: pong's CNN for an Atari id), the id
    replaced; else cartpole. Never one that hides observation entries
    (cartpole_masked): under the same id it is another task.
    """
    if env is not None:
        return env
    ids = _unhiding_ids(algo)
    own = _own_presets(env_id, ids)
    kin = _kin_presets(env_id, ids) if env_id is not None else []
    return (own or kin or ["cartpole"])[0]  # (sorted: cartpole first of equals)


def starting_note(env_id: str | None, algo: str, preset: str) -> str | None:
    """Whose settings a command without `--env` trained (`starting_preset`'s).

    For its summary's `settings` line. None without `--env.id` (cartpole, as
    documented) or where `preset` has no section for `algo` (the command
    refuses it, saying so).
    """
    if env_id is None or preset not in _preset_ids(algo):
        return None
    file_env = read_yaml(presets_dir() / f"{preset}.yaml").get("env") or {}
    if file_env.get("id") != env_id:
        return (
            f"the {preset} preset's {algo} settings, tuned for "
            f"{file_env.get('id')}, the id replaced (no shipped preset trains "
            f"{algo} on {env_id}; --env {preset} --env.id {env_id})"
        )
    settings = [f"env.{k} {_shown(v)}" for k, v in file_env.items() if k != "id"]
    with_ = f" ({', '.join(settings)})" if settings else ""
    return f"the {preset} preset's {algo} settings{with_} (--env {preset})"


def section_fix(config: Any, algo: str) -> str:
    """Python's fix for a change to `algo`'s section of `config`, a run of another.

    `algo='dqn'` alone trains dqn with `config`'s run sizes and network and
    its dqn section as made (a preset's ppo config holds dqn's defaults);
    where a shipped preset trains `algo` on `config.env.id`, its tuned run is
    named too (`apply_overrides`' refusal; the command line's `--algo dqn`
    reads the preset's own section).
    """
    own = _own_presets(config.env.id, _unhiding_ids(algo))
    if not own or algo not in preset_algorithms(own[0]):
        return f"algo={algo!r}"
    return (
        f"algo={algo!r} (this config's sizes and {algo} section), start from "
        f"the {own[0]} preset's tuned {algo} run, pjd.load_preset({own[0]!r}, "
        f"algo={algo!r}).config"
    )


def switched_algo(old: Any, new: Any) -> str:
    """`apply_overrides`' warning for `algo` changed alone on `old` (into `new`).

    Where a shipped preset trains `new.algo` on `new.env.id` with a section of
    its own, the change keeps `old`'s run sizes and gives `new.algo`'s untuned
    defaults, unlike the command line's `--algo`: the warning names the tuned
    config. "" where no such preset is (nothing tuned to point to).
    """
    own = _own_presets(new.env.id, _unhiding_ids(new.algo))
    if not own or new.algo not in preset_algorithms(own[0]):
        return ""
    return (
        f"algo {old.algo!r} -> {new.algo!r} keeps this config's run settings "
        f"(num_envs={new.num_envs}, unroll_length={new.unroll_length}, "
        f"total_steps={new.total_steps}, network) and gives {new.algo}'s untuned "
        f"defaults; for the {own[0]} preset's tuned {new.algo} run (what "
        f"`purejaxdrl train --env {own[0]} --algo {new.algo}` trains) start from "
        f"pjd.load_preset({own[0]!r}, algo={new.algo!r}).config."
    )


def _shown(value: Any) -> str:
    """A preset's value as its YAML reads: true, [1, 3], {episode_length: 1000}."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_shown(v)}" for k, v in value.items()) + "}"
    return str(value)


def _hides(preset: str) -> bool:
    """Whether shipped `preset` hides observation entries (`env.hide_observations`)."""
    env = read_yaml(presets_dir() / f"{preset}.yaml").get("env") or {}
    return bool(env.get("hide_observations"))


def _own_presets(env_id: str | None, ids: dict[str, str]) -> list[str]:
    """The presets of `ids` (preset -> its file's id) whose file trains `env_id`."""
    return [p for p, i in ids.items() if i == env_id]


def _unhiding_ids(algo: str) -> dict[str, str]:
    """`_preset_ids(algo)` less those hiding observation entries (another task)."""
    return {p: i for p, i in _preset_ids(algo).items() if not _hides(p)}


def _preset_ids(algo: str) -> dict[str, str]:
    """Shipped preset -> its file's `env.id`, of those that can train `algo`."""
    ids = {
        p: str((read_yaml(presets_dir() / f"{p}.yaml").get("env") or {}).get("id"))
        for p in preset_names()
    }
    # Only a preset with a section for `algo` makes a command that loads.
    if algo not in {r.name for r in registered_by_user()}:
        ids = {p: i for p, i in ids.items() if algo in preset_algorithms(p)}
    return ids


def env_id_hint(name: str, algo: str) -> str:
    """For `--env MountainCar-v0`: that it is an id, and how to train it; or ""."""
    from purejaxdrl.env.registry import RESERVED_PREFIXES, registered

    known = name in registered()
    if not (known or name.startswith(tuple(RESERVED_PREFIXES))):
        return ""
    # brax/hoper or envpool:Seaquest-v5x: spelt as an id, not one this install
    # has checked (host ids are only looked up when an actor starts).
    what = f"{name!r} {'is' if known else 'looks like'} an environment id"
    what += ", not a preset (a preset names an environment and its tuned settings)"
    ids = _preset_ids(algo)
    own = _own_presets(name, ids)
    if own:
        return (
            f"{what}; the {own[0]} preset trains it: --env {own[0]} "
            f"(pjd.load_preset({own[0]!r}) in Python)."
        )
    base = _kin_presets(name, ids)
    if not base:
        return (
            f"{what}; no shipped preset with a {algo} section trains such an "
            f"environment: pick another --algo, or write a preset for it (see "
            "envs/cartpole.yaml)."
        )
    python = (
        f"pjd.apply_overrides(pjd.load_preset({base[0]!r}).config, "
        f"{{'env': {{'id': {name!r}}}}})"
    )
    return (
        f"{what}; train it with a preset's settings, the id replaced: "
        f"--env {base[0]} --env.id {name} ({python} in Python)."
    )


def _kin_presets(name: str, ids: dict[str, str]) -> list[str]:
    """Presets (of `ids`, preset -> id) for ids like `name`, closest first."""

    def kind(env_id: str) -> str:
        """The id's adapter: brax/, playground/, Craftax-, a host's, else gymnax."""
        for prefix in ("brax/", "playground/", "Craftax-", "envpool:", "gymnasium:"):
            if env_id.startswith(prefix):
                return "host" if prefix.endswith(":") else prefix
        return "-MinAtar" if env_id.endswith("-MinAtar") else ""

    def atari(env_id: str) -> bool:
        """EnvPool's Atari ids end in -v5 (Pong-v5); its others do not."""
        return env_id.startswith("envpool:") and env_id.endswith("-v5")

    ranked = sorted(ids, key=lambda p: (p != "cartpole", p))
    same = [p for p in ranked if kind(ids[p]) == kind(name)]
    if kind(name) == "host":
        # An Atari id wants an Atari preset's CNN; others cartpole_envpool's MLP.
        same.sort(key=lambda p: (atari(ids[p]) != atari(name), p))
        return same
    if kind(name) not in ("", "brax/", "playground/"):
        return same  # MinAtar and Craftax ids want their own observations
    # Else the physics presets, for continuous control (SAC has only those),
    # after gymnax's for a gymnax id.
    order = ["brax/", "playground/"] if kind(name) else ["", "brax/", "playground/"]
    return same + [p for k in order for p in ranked if kind(ids[p]) == k]
