"""The options a Playground task offers, read from its config without building it.

For the command line's hint on an unknown `--env.X` flag: `--env.full-reset`
was sent to `--env.option full_reset=VALUE`, which the task then refused
("did you mean 'auto_reset'?"), a second start of minutes on a busy CPU.
With these names the first hint says `auto_reset` at once.
"""

from purejaxdrl.config import ConfigError
from purejaxdrl.env.menagerie import needs_menagerie
from purejaxdrl.env.playground_env import ADAPTER_OPTIONS, PREFIX, import_registry
from purejaxdrl.env.playground_options import flat_items, unusable_options


def offered_options(env_id: str) -> list[str] | None:
    """The options `env_id` (`playground/<Name>`) offers, sorted; None if unknown.

    As the unknown-option error offers them: groups (`reward_config`, set by
    their keys) and options refused here (pixels, ...) left out. None for
    another backend's id, a task Playground does not have, or without the
    playground package: nothing is known of its options here.
    """
    if not env_id.startswith(PREFIX):
        return None
    name = env_id.removeprefix(PREFIX)
    try:
        config = import_registry().get_default_config(name)
    except (ConfigError, ValueError, KeyError):
        return None
    valid = set(flat_items(config.to_dict())) | set(ADAPTER_OPTIONS)
    groups = {k for k in valid if any(v.startswith(k + ".") for v in valid)}
    return sorted(valid - groups - unusable_options(valid, needs_menagerie(name)))
