"""The refusal of an algorithm a preset has no section for, in each form it is shown.

One message, built where it is shown: from Python with advice for Python;
on the command line for the `--env` and `--env.id` the command gave (the id
trained is the flag's, and without `--env` the user never named the preset).
"""

import pathlib

from purejaxdrl.agents.host_rules import host_refusal
from purejaxdrl.agents.registry import action_refusal, algorithm
from purejaxdrl.config import ConfigError
from purejaxdrl.env.host import is_host_env
from purejaxdrl.training.config import TrainConfig
from purejaxdrl.training.presets.files import presets_dir, presets_with


class NoSectionError(ConfigError):
    """A preset has no section for the algorithm asked for.

    `untuned` is the preset's environment with the algorithm's library
    defaults: not a tuned run, but what `--algo NAME --help` shows.
    """

    def __init__(self, path: pathlib.Path, untuned: TrainConfig, acts: str | None):
        """`acts`: why the algorithm cannot act in the id's actions, or None."""
        self.path, self.untuned, self.acts = path, untuned, acts
        python = (
            "pass another algo= or preset."
            if acts or self._host(untuned.env.id)
            else f"pass another algo= or preset, or take {untuned.algo}'s untuned "
            "defaults on this environment: except "
            "pjd.training.presets.NoSectionError as e: config = e.untuned."
        )
        super().__init__(f"{self._line(untuned.env.id, acts)} From Python: {python}")

    def for_flags(self, env: str | None, env_id: str | None) -> str:
        """The refusal for a command's `--env` and `--env.id` (None: not given)."""
        own, algo = self.untuned.env.id, self.untuned.algo
        host = self._host(own if env_id is None else env_id)
        if host is not None:
            return host
        if env_id is None or (env is not None and env_id == own):
            return self._line(own, self.acts, default=env is None)
        if env is not None:  # what the preset's id tells (its actions) is not said
            return self._line(env_id, None)
        others = ", ".join(presets_with(algo))
        return (
            f"no shipped preset trains {algo} on {env_id} or an environment like "
            f"it (--env.id), and "
            f"cartpole's, where a command without --env starts, has no '{algo}' "
            f"section; to train {algo} on {env_id} with its untuned defaults, "
            f"write a my.yaml holding 'env: {{id: {env_id}}}' and '{algo}: {{}}' "
            f"and pass --env my.yaml; or pick another --algo, or an --env with "
            f"one ({others or 'none yet'})."
        )

    def _line(self, env_id: str, acts: str | None, default: bool = False) -> str:
        """The refusal naming `env_id`; `acts` (if any) in place of how to add one.

        `default`: the command named no preset, so a shipped one is named as
        the default it started from, not by a path the user never typed.
        """
        algo, path = self.untuned.algo, self.path
        shipped = path.resolve().parent == presets_dir().resolve()
        subject = f"Preset {str(path)!r}"
        if default and shipped:
            subject = f"The default preset, {path.stem} (--env {path.stem}),"
        others = ", ".join(presets_with(algo)) or "none yet"
        host = self._host(env_id)
        if host is not None:
            return host
        if acts is not None:
            return (
                f"{subject} has no '{algo}' section, nor could one train "
                f"its environment: {acts} and a {algo} section ({others})."
            )
        add = f"section '{algo}:' ('{algo}: {{}}' takes {algo}'s untuned defaults)"
        # A shipped file is the installed package's: the user edits a copy.
        if shipped:
            copied = repr(str(path)) if default else "that file"
            add = f"copy {copied} to a .yaml of your own, add a {add} and pass it"
            add += " as --env my.yaml"
        else:
            add = f"add a {add} to it"
        return (
            f"{subject} has no '{algo}' section, so it has no tuned "
            f"{algo} settings; to train {algo} on {env_id}, {add}; or "
            f"pick another --algo, or an --env with one ({others})."
        )

    def _host(self, env_id: str) -> str | None:
        """The host-env runner's refusal of the untuned section on `env_id`, or None.

        A section the runner refuses (a replay buffer, as sac's) is no fix to
        advise: the user wrote it, then met this refusal (hr17 #2).
        """
        if not is_host_env(env_id):
            return None
        record = algorithm(self.untuned.algo)
        return host_refusal(record, self.untuned.algo_config, env_id, training=False)


def no_section(
    path: pathlib.Path, algo: str, config: TrainConfig, data: dict
) -> NoSectionError:
    """The refusal of built-in `algo` on preset `path`, which has no section for it.

    `config` is the preset's environment with `algo`'s defaults; `data` the
    file. Where `algo` cannot act in that environment's actions (sac on a
    discrete id), the refusal says so, not how to add a section.
    """
    return NoSectionError(path, config, action_refusal(algo, data, config.env.id))
