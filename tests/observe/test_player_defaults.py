"""A Player's defaults are `purejaxdrl eval`'s (nb21 #6): none is required."""

import jax

import purejaxdrl as pjd
from purejaxdrl.observe.play import EPISODES, RENDER_STEPS


def test_evaluate_and_render_need_only_the_state_as_the_command_does(tmp_path):
    config = pjd.apply_overrides(
        pjd.TrainConfig(), {"devices": 1, "num_envs": 4, "eval": {"max_steps": 7}}
    )
    exp = pjd.training.make_experiment(config)
    state = exp.runner.init(jax.random.key(0))
    result = exp.player.evaluate(state)
    # EPISODES episodes, capped at the run's eval.max_steps (CartPole runs on).
    assert result.returns.shape == (EPISODES,)
    assert int(result.lengths.max()) == 7
    seeded = exp.player.evaluate(state, episodes=EPISODES, max_steps=7, seed=0)
    assert (seeded.returns == result.returns).all()
    drawn = exp.player.render(state, tmp_path / "x.gif", console=False)
    assert drawn.path.exists() and 0 < drawn.length <= RENDER_STEPS
    exp.runner.close()
