"""An error tracing a user's JAX env names the user's line, or the signature."""

import importlib.util

import pytest

import purejaxdrl as pjd
from purejaxdrl import cli
from purejaxdrl.training.run_env import make_env

# A user's module: a corridor whose step, and whose signatures, go wrong.
SOURCE = """\
import jax.numpy as jnp
from purejaxdrl import env as envs


class Fine(envs.Env):
    @property
    def default_params(self):
        return ()

    def observation_spec(self, params):
        return envs.Box((3,))

    def action_spec(self, params):
        return envs.Discrete(2)

    def reset(self, key, params):
        return jnp.int32(0), envs.restart(jnp.zeros(3, jnp.float32))


class BadShape(Fine):
    def step(self, key, state, action, params):
        obs = jnp.zeros(3, jnp.float32)
        obs = obs @ jnp.ones((2, 1))
        return state, envs.restart(obs)


class ResetKeyOnly(BadShape):
    def reset(self, key):
        return super().reset(key, ())


class Helper:
    def step(self, x):
        return x


class HelperCalledWrongly(Fine):
    def step(self, key, state, action, params):
        Helper().step(1, 2)
        return state, envs.restart(jnp.zeros(3, jnp.float32))


class StepNoKey(Fine):
    def step(self, state, action, params):
        return state, envs.restart(jnp.zeros(3, jnp.float32))


class PyBranch(Fine):
    def step(self, key, state, action, params):
        if state > 3:
            state = state - 3
        return state + action, envs.restart(jnp.zeros(3, jnp.float32))


class IntAction(Fine):
    def step(self, key, state, action, params):
        return state + int(action), envs.restart(jnp.zeros(3, jnp.float32))
"""

LEAD = "tracing its step (jax.eval_shape, nothing run) raised TypeError: "
CAUSE = "(in Python, this error's __cause__ holds the traceback)."


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """The module above, as bad_env.py in the working folder, imported."""
    (tmp_path / "bad_env.py").write_text(SOURCE)
    monkeypatch.chdir(tmp_path)
    spec = importlib.util.spec_from_file_location("bad_env", tmp_path / "bad_env.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _refusal(env_id: str, factory) -> str:
    pjd.env.register(env_id, factory)
    config = pjd.apply_overrides(
        pjd.load_preset("cartpole").config, {"env": {"id": env_id}}
    )
    with pytest.raises(pjd.ConfigError) as caught:
        make_env(config)
    assert isinstance(caught.value.__cause__, TypeError)  # its traceback kept
    return str(caught.value)


def test_an_error_inside_step_names_the_users_file_and_line(user_module):
    assert _refusal("LinesBadShape-v0", user_module.BadShape) == (
        "LinesBadShape-v0: " + LEAD + "dot_general requires contracting "
        "dimensions to have the same shape, got (3,) and (2,). "
        "(at bad_env.py:23: obs = obs @ jnp.ones((2, 1))); fix that in the "
        "environment's step " + CAUSE[:-1] + " (step was traced with action "
        "int32[], from action_spec Discrete(2))."
    )


def test_a_reset_or_step_of_another_signature_names_the_one_called(user_module):
    assert _refusal("LinesResetKeyOnly-v0", user_module.ResetKeyOnly) == (
        "LinesResetKeyOnly-v0: tracing its reset (jax.eval_shape, nothing run) "
        "raised TypeError: ResetKeyOnly.reset() takes 2 positional arguments but "
        "3 were given; purejaxdrl calls reset(key, params); give the method that "
        "signature " + CAUSE
    )
    # No "(step was traced with action ...)": the action played no part.
    assert _refusal("LinesStepNoKey-v0", user_module.StepNoKey) == (
        "LinesStepNoKey-v0: " + LEAD + "StepNoKey.step() takes 4 positional "
        "arguments but 5 were given; purejaxdrl calls step(key, state, action, "
        "params); give the method that signature " + CAUSE
    )


def test_on_the_command_line_it_is_one_line_and_exit_2(user_module, capsys):
    pjd.env.register("LinesCli-v0", user_module.BadShape)
    status = cli.main(["train", "--env.id", "LinesCli-v0", "--devices", "1"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1
    assert "(at bad_env.py:23: obs = obs @ jnp.ones((2, 1)))" in err


def test_a_helpers_step_called_wrongly_inside_step_is_no_signature_error(
    user_module,
):
    message = _refusal("LinesHelper-v0", user_module.HelperCalledWrongly)
    assert message.startswith(
        "LinesHelper-v0: " + LEAD + "Helper.step() takes 2 positional arguments "
        "but 3 were given (at bad_env.py:"
    )
    assert "Helper().step(1, 2)); fix that in the environment's step" in message


@pytest.mark.parametrize(
    ("factory", "error", "line"),
    [
        ("PyBranch", "TracerBoolConversionError", "if state > 3:"),
        (
            "IntAction",
            "ConcretizationTypeError",
            "int(action), envs.restart(jnp.zeros(3, jnp.float32))",
        ),
    ],
)
def test_python_control_flow_on_a_traced_value_is_told_the_jax_rewrite(
    user_module, factory, error, line
):
    message = _refusal(f"Lines{factory}-v0", getattr(user_module, factory))
    assert f"raised {error}: " in message
    # JAX's link whole (not cut mid-word), then the user's line and the fix.
    url = f"https://docs.jax.dev/en/latest/errors.html#jax.errors.{error}"
    assert f"(see {url}) (at bad_env.py:" in message
    assert f"{line}); a Python if, int() or float() on a traced value " in message
    assert (
        "cannot run under jit; in the environment's step, use jnp.where(cond, a, b) "
        "or jax.lax.cond / jax.lax.select for a branch, and x.astype(jnp.int32) "
        "for a dtype " + CAUSE[:-1]
    ) in message
    assert "fix that in the environment's" not in message
