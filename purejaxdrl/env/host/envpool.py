"""Adapter from EnvPool (`envpool:<task>`) to `HostEnv`, sync or async.

EnvPool steps its environments on C++ threads and auto-resets on the step after
an episode ends (`base.py`). Atari tasks follow Machado et al. (2018) unless
options say otherwise: 84x84 grey frames, frame skip 4, 4 frames stacked,
sticky actions with probability 0.25, the full action set of 18, no life-loss
episodes, no no-op or fire starts, and a cap of 108,000 frames (27,000 steps).
Rewards are not clipped here: a learner clips them where its algorithm says so.

With `episodic_life` EnvPool ends an episode at each lost life (the game goes
on, no bootstrap across the loss, as CleanRL's Atari PPO learns): the adapter
marks those rows `life_lost`, so logged and evaluated returns and lengths stay
the whole game's. With `reward_clip` the pool returns clipped rewards, and the
logs sum those: a pool built with it warns once (`returns_notice`).
"""

import warnings
from typing import Any

import numpy as np

from purejaxdrl.config import ConfigError
from purejaxdrl.env.base import Box, check_option_types, check_options
from purejaxdrl.env.host.base import (
    BoundaryTracker,
    HostEnv,
    HostSpec,
    HostStep,
    box_bounds,
    check_finite,
    check_known,
    import_optional,
    rescale_actions,
    space_spec,
)
from purejaxdrl.setup_warnings import SetupWarning, user_stacklevel

# Machado et al. (2018), in EnvPool's option names; options override them.
ATARI_PROTOCOL = {
    "repeat_action_probability": 0.25,
    "full_action_space": True,
    "episodic_life": False,
    "reward_clip": False,
    "noop_max": 1,
    "use_fire_reset": False,
    "max_episode_steps": 27_000,
}


def returns_notice(name: str, options: dict[str, Any]) -> str | None:
    """One line saying how `reward_clip` changes logged returns; None when off.

    The option is EnvPool's own: the adapter passes its rewards through, so
    the runners' episode returns sum the clipped rewards.
    """
    if not options.get("reward_clip"):
        return None
    return (
        f"{name} with reward_clip=True: logged and evaluated returns sum the "
        "pool's clipped rewards (their sign), not the game's (no change where "
        "rewards are +-1, e.g. Pong). For the game's own returns, drop the "
        "option (PPO, A2C and IMPALA can clip in the learner instead: "
        "--<algo>.reward-clip 1)."
    )


# EnvPool options the adapter cannot take another value of, and why.
FIXED = {
    "gym_reset_return_info": "the adapter reads reset's info, so it is always on",
    "max_num_players": "the adapter steps single-player environments",
    "base_path": "EnvPool finds its own game files there",
}


def check_fixed(task: str, options: dict[str, Any]) -> None:
    """Refuses an option of `FIXED`, which EnvPool takes and the adapter cannot.

    They were listed among a task's options and accepted, then crashed in a
    traceback (`gym_reset_return_info=false`) or did nothing the run could use.

    Raises:
      ConfigError: naming the option, why it is fixed, and the fix.

    """
    for name in sorted(set(options) & set(FIXED)):
        raise ConfigError(
            f"env.options {name}={options[name]!r} is fixed for envpool:{task} "
            f"({FIXED[name]}); drop --env.option {name} (the env.options "
            "entry in Python)."
        )


def env_seeds(seed: int, num_envs: int) -> list[int]:
    """Seeds of environments 0..num_envs-1, derived from (seed, index)."""
    sequence = np.random.SeedSequence(seed)
    return [int(s) for s in sequence.generate_state(num_envs, np.uint32) >> 1]


class EnvPoolEnv(HostEnv):
    """`num_envs` EnvPool environments of `task`; async when batch_size < num_envs.

    Args:
      task: an EnvPool task id, e.g. `Pong-v5`, `CartPole-v1`.
      num_envs: environments in the pool.
      seed: the run's seed; environment i is seeded from (seed, i).
      batch_size: environments `recv` returns (default: all: synchronous).
      num_threads: EnvPool's worker threads (0: one per environment, capped
        by EnvPool at the machine's cores).
      options: other EnvPool options (e.g. `max_episode_steps`, `img_height`).

    """

    def __init__(
        self,
        task: str,
        num_envs: int,
        seed: int,
        *,
        batch_size: int = 0,
        num_threads: int = 0,
        **options: Any,
    ):
        envpool = import_optional("envpool", "envpool")
        names = envpool.list_all_envs()
        check_known(f"envpool:{task}", task, names, "envpool.list_all_envs()")
        defaults = envpool.make_spec(task).config._asdict()
        check_fixed(task, options)
        # What the run sets itself (`make_host_env` refuses it) or fixes; the
        # worker threads are the `num_threads` argument (`--host.env-threads`).
        valid = set(defaults) - {"seed", "env_seed", "num_envs", "task", *FIXED}
        check_options(f"env.id='envpool:{task}'", options, valid)
        options = check_option_types(f"env.id='envpool:{task}'", options, defaults)
        if not 0 <= batch_size <= num_envs:
            raise ConfigError(
                f"env.options batch_size={batch_size} must be in [0, {num_envs}] "
                f"(the environments of a pool: {num_envs}); 0 or {num_envs} steps "
                "them all at once, fewer makes the pool asynchronous."
            )
        if "repeat_action_probability" in defaults:  # an Atari game
            options = {**ATARI_PROTOCOL, **options}
        self.name, self.num_envs = f"envpool:{task}", num_envs
        self.episodic_life = bool(options.get("episodic_life"))
        notice = returns_notice(self.name, options)
        if notice:  # not on the presets' defaults (ATARI_PROTOCOL)
            warnings.warn(notice, SetupWarning, stacklevel=user_stacklevel())
        self.batch_size = batch_size or num_envs
        with warnings.catch_warnings():
            # EnvPool builds float32 Boxes from float64 bounds; gymnasium warns
            # about it on every pool, and nothing is wrong for the user.
            warnings.filterwarnings("ignore", message=".*precision lowered by casting")
            self.pool = envpool.make(
                task,
                env_type="gymnasium",
                num_envs=num_envs,
                batch_size=self.batch_size,
                num_threads=num_threads,
                seed=seed,
                env_seed=env_seeds(seed, num_envs),
                **options,
            )
            space = self.pool.observation_space  # built (and cached) here
            action = self.pool.action_space
        self.spec = HostSpec(
            Box(tuple(space.shape)),
            np.dtype(space.dtype),
            space_spec(action, f"envpool:{task}"),
            action_bounds=box_bounds(action),
        )
        self.boundaries = BoundaryTracker(num_envs)

    def reset(self) -> HostStep:
        # Every row starts an episode, whatever the last step ended: a second
        # reset marked only the rows that had just ended `first`.
        self.boundaries.ended[:] = True
        if self.batch_size < self.num_envs:
            self.pool.async_reset()
            return self.recv()
        obs, info = self.pool.reset()
        return self._host_step(obs, np.zeros(self.num_envs), None, None, info)

    def step(self, action: np.ndarray) -> HostStep:
        if self.batch_size < self.num_envs:
            raise ValueError(
                f"batch_size={self.batch_size} < num_envs={self.num_envs}: an "
                "asynchronous pool is stepped with send/recv"
            )
        out = self.pool.step(rescale_actions(self.pool.action_space, action))
        return self._host_step(*out)

    def send(self, action: np.ndarray, env_id: np.ndarray) -> None:
        action = rescale_actions(self.pool.action_space, action)
        self.pool.send(action, np.asarray(env_id, np.int32))

    def recv(self) -> HostStep:
        return self._host_step(*self.pool.recv())

    def _host_step(
        self,
        obs: np.ndarray,
        reward: np.ndarray,
        terminated: np.ndarray | None,
        truncated: np.ndarray | None,
        info: dict[str, Any],
    ) -> HostStep:
        env_id = np.asarray(info["env_id"], np.int32)
        terminated = np.zeros(len(env_id), bool) if terminated is None else terminated
        truncated = np.zeros(len(env_id), bool) if truncated is None else truncated
        # EnvPool may flag both at the step limit of a terminal step: terminal wins.
        terminated, limit = np.asarray(terminated, bool), np.asarray(truncated, bool)
        truncated = limit & ~terminated
        first = self.boundaries.mark(env_id, terminated, truncated)
        life_lost = None
        if self.episodic_life:  # info["terminated"]: the game's own end
            game_ended = np.asarray(info["terminated"], bool) | limit
            life_lost = terminated & ~game_ended
        step = HostStep(
            observation=obs,
            reward=np.asarray(reward, np.float32),
            terminated=terminated,
            truncated=truncated,
            first=first,
            env_id=env_id,
            life_lost=life_lost,
        )
        return check_finite(self.name, step)

    def close(self) -> None:
        self.pool.close()
