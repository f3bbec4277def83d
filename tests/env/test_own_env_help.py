"""What the help and `--render` say of an environment of the user's own."""

import jax.numpy as jnp
import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl import env as envs
from purejaxdrl.observe.render import check_renderable


class Corridor(envs.Env):
    """A JAX Env of the user's own: no renderer."""

    @property
    def default_params(self):
        return ()

    def observation_spec(self, params):
        return envs.Box((1,))

    def action_spec(self, params):
        return envs.Discrete(2)

    def reset(self, key, params):
        return jnp.int32(0), envs.restart(jnp.zeros(1, jnp.float32))

    def step(self, key, state, action, params):
        return state, envs.restart(jnp.zeros(1, jnp.float32))


def test_render_of_an_own_env_names_what_renders_and_the_fix():
    with pytest.raises(pjd.ConfigError) as error:
        check_renderable(envs.EpisodeStatistics(Corridor()), "c.gif")
    assert str(error.value) == (
        "--render: no renderer for Corridor (a JAX Env of your own has none); "
        "gymnax, brax, MuJoCo Playground and host (envpool:, gymnasium:) "
        "environments render; evaluate this run without --render."
    )


def test_env_option_help_names_your_own_constructors_keywords(capsys):
    with pytest.raises(SystemExit):
        cli.main(["train", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert (
        "for your own environment (a registered Env or Gymnasium class), its "
        "constructor's keywords (e.g. length=6)"
    ) in out
