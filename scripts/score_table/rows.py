"""The score table's rows: what each trains, with how many seeds, against what.

`Row` is one preset x algorithm (its seeds, whether it needs a GPU or runs
its seeds alone, its anchor); `ROWS` is every row, in the table's order.
"""

from __future__ import annotations

import dataclasses
import functools

# What a score's steps/s is (`steps_per_s_of`): all seeds' env steps over
# their training seconds; older alone rows recorded "mean of runs".
ALL_SEEDS = "all seeds"


@dataclasses.dataclass(frozen=True)
class Row:
    """One preset x algorithm and the published figure it is compared with.

    Attributes:
      preset: the preset's name (`envs/<preset>.yaml`).
      algo: the algorithm section of the preset.
      anchor: the published figure, as its source states it ("" for none).
      anchor_value: that figure's mean return (None for none).
      gpu: needs an accelerator to finish in reasonable time.
      not_run: why this script cannot run the row on any machine ("" when it
        can); the table says so in its place.
      menagerie: trains on MuJoCo Menagerie's robot models: not run where
        they are absent (`why_not_run`).
      alone: its seeds train one after another with `pjd.train`, not as one
        sweep: host environments (EnvPool, Gymnasium), which `pjd.sweep`
        cannot batch, and targets of the greedy evaluation, which a sweep
        does not run (each run then evaluates at its end).
      seeds: how many seeds the row trains unless `--seeds` says otherwise:
        5, or 10 for the replay learners, R2D2 and masked-CartPole PPO, whose
        seeds dip now and then: `tests/test_scores.py` asks 9 of 10 seeds to
        reach the target, but all of 5.
      aside: a run of the row's settings reported outside the table (one
        seed, say, where the row needs a GPU), named in its "not run" cell.

    """

    preset: str
    algo: str
    anchor: str = ""
    anchor_value: float | None = None
    gpu: bool = False
    not_run: str = ""
    menagerie: bool = False
    alone: bool = False
    seeds: int = 5
    aside: str = ""

    @property
    def key(self) -> str:
        return f"{self.preset}:{self.algo}"

    def why_not_run(self) -> str:
        """Why the row cannot run on this machine ("" when it can)."""
        if self.not_run or not self.menagerie:
            return self.not_run
        return menagerie_note()


# purejaxql publishes no MinAtar score. The rows take 1-3.5 minutes each on
# one H200, about 1-3 hours on the 2-core CPU (5 x 10M steps at 4.4k-13k
# steps/s); set gpu to False to run them there.
PQN_MINATAR = "purejaxql PQN: no MinAtar score published"

# Runs of a row's settings reported outside the table, too few seeds for a row
# (its preset's target stays `measured: false`); named in its "not run" cell.
# Their curves keep the row's file name in docs/curves/.
ASIDES = {
    "pong:ppo": (
        "one CPU seed reached +19.3 at 10M frames "
        "([results](results.md#pong-in-10m-frames))"
    ),
}

# The Atari presets' published figures (each preset's comments cite the file):
# CleanRL's ppo_atari_envpool_xla_jax.py at 10M agent steps, Cleanba's
# cleanba_impala.py at 50M, 3 seeds each, mean ± std.
ATARI_ANCHORS = {
    "breakout": ("430.09 ± 8.12", "482.12 ± 9.36"),
    "battle_zone": ("24283.8 ± 1841.94", "30306.7 ± 3719.78"),
    "double_dunk": ("-6.81 ± 0.24", "-2.94 ± 2.95"),
    "name_this_game": ("5750 ± 181.32", "15197.9 ± 981.65"),
    "phoenix": ("14474.1 ± 1794.83", "43733.7 ± 3990.05"),
    "qbert": ("17246.3 ± 605.4", "22198.6 ± 727.63"),
}


def atari_row(game: str, algo: str) -> Row:
    """An Atari preset's GPU row, with its published figure where it has one."""
    anchor, value = "", None
    if game in ATARI_ANCHORS:
        figure = ATARI_ANCHORS[game][algo == "impala"]
        source = "Cleanba IMPALA, 50M" if algo == "impala" else "CleanRL PPO, 10M"
        anchor, value = f"{source} steps: {figure}", float(figure.split(" ±")[0])
    aside = ASIDES.get(f"{game}:{algo}", "")
    return Row(game, algo, anchor, value, gpu=True, alone=True, aside=aside)


# Episodes of a greedy evaluation at the end of a run that has none of its own.
EVAL_EPISODES = 32
# Playground publishes learning curves (Zakka et al., 2025, arXiv 2502.08844),
# not tables; their numbers could not be read offline, so no anchor value.
PLAYGROUND_PPO = "MuJoCo Playground PPO, 60M steps: curves (arXiv 2502.08844)"
PLAYGROUND_SAC = "MuJoCo Playground SAC, {}M steps: curves (arXiv 2502.08844)"
PLAYGROUND_200M = "MuJoCo Playground PPO, 200M steps: curves (arXiv 2502.08844)"


@functools.cache
def menagerie_note() -> str:
    """Why the rows on Menagerie's robots cannot run here; "" where they can.

    Looked up when asked (importing Playground takes seconds), where the
    adapter looks (`menagerie.find_menagerie`).
    """
    try:
        from purejaxdrl.env.menagerie import find_menagerie

        found = find_menagerie()
    except ImportError:
        return "needs the playground package (pip install 'purejaxdrl[playground]')"
    if found is None:
        return (
            "needs MuJoCo Menagerie's robot models, absent here (set "
            "MUJOCO_MENAGERIE_PATH to a clone)"
        )
    return ""


ROWS = [
    Row("cartpole", "ppo", "CleanRL PPO, 500k steps: 490.0 ± 6.1", 490.0),
    Row("cartpole", "dqn", "CleanRL DQN, 500k steps: 488.7 ± 16.1", 488.7, seeds=10),
    Row("cartpole", "apex", seeds=10),
    Row("cartpole", "impala"),
    Row("cartpole", "a2c"),
    Row(
        "cartpole",
        "pqn",
        "purejaxql PQN, 500k steps: solved (a plot of greedy returns)",
        alone=True,
    ),
    Row("cartpole_masked", "ppo", seeds=10),
    Row("cartpole_masked", "r2d2", seeds=10),
    Row("memory_chain", "ppo"),
    Row("acrobot", "ppo", "CleanRL PPO: -86.4", -86.4),
    Row("breakout_minatar", "ppo", "gymnax-blines PPO, 10M steps: 28", 28.0),
    Row("breakout_minatar", "impala", gpu=True),
    Row("breakout_minatar", "a2c", gpu=True),
    Row("breakout_minatar", "pqn", PQN_MINATAR, gpu=True),
    Row("space_invaders_minatar", "ppo", "gymnax-blines PPO, 10M steps: 131", 131.0),
    Row("space_invaders_minatar", "pqn", PQN_MINATAR, gpu=True),
    Row("asterix_minatar", "ppo", "gymnax-blines PPO, 10M steps: 15", 15.0),
    Row("asterix_minatar", "pqn", PQN_MINATAR, gpu=True),
    Row("freeway_minatar", "ppo", "gymnax-blines PPO, 10M steps: 58", 58.0),
    Row("freeway_minatar", "pqn", PQN_MINATAR, gpu=True),
    Row("inverted_pendulum", "ppo", "brax PPO: 1000", 1000.0),
    Row("inverted_pendulum", "impala"),
    Row("inverted_pendulum", "a2c"),
    Row("inverted_pendulum", "sac", "brax SAC: 1000", 1000.0, seeds=10),
    Row("cartpole_balance", "ppo"),
    Row("cartpole_balance", "sac", PLAYGROUND_SAC.format(5), gpu=True, seeds=10),
    *(
        row
        for preset, sac_millions in (
            ("pendulum_swingup", 5),
            ("cheetah_run", 10),
            ("walker_walk", 5),
            ("hopper_hop", 10),
            ("humanoid_walk", 10),
        )
        for row in (
            Row(preset, "ppo", PLAYGROUND_PPO, gpu=True),
            Row(
                preset,
                "sac",
                PLAYGROUND_SAC.format(sac_millions),
                gpu=True,
                seeds=10,
            ),
        )
    ),
    *(
        Row(preset, "ppo", PLAYGROUND_200M, gpu=True, menagerie=True)
        for preset in ("go1_joystick_flat_terrain", "leap_cube_reorient")
    ),
    Row("ant", "ppo", gpu=True),
    Row("halfcheetah", "ppo", gpu=True),
    Row("craftax_classic", "ppo", gpu=True),
    Row(
        "craftax_classic",
        "pqn",
        "purejaxql PQN-RNN: a plot for the full Craftax only (~16% of max at 1B)",
        gpu=True,
    ),
    Row(
        "cartpole_envpool",
        "ppo",
        "CleanRL PPO, 500k steps: 490.0 ± 6.1",
        490.0,
        alone=True,
    ),
    Row("cartpole_envpool", "impala", alone=True),
    *(
        atari_row(game, algo)
        for game in (
            "pong",
            "breakout",
            "battle_zone",
            "double_dunk",
            "name_this_game",
            "phoenix",
            "qbert",
        )
        for algo in ("ppo", "impala")
    ),
    Row(
        "pong",
        "pqn",
        "purejaxql PQN: Pong solved under 10M steps (README; a plot against time)",
        gpu=True,
        alone=True,
    ),
]
