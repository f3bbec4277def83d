"""Craftax on this machine: the adapter's steps/s against Craftax stepping alone.

The adapter resets where an episode ended. Under `vmap` that reset (a world
generation) is computed for every environment at every step; the batched
step the runners call (`CraftaxEnv.step_batch`) generates worlds for the few
environments that ended only. This prints random-action env steps/s (compile
excluded) of Craftax's own step without any reset (the ceiling), of the
vmapped adapter step and of the batched one, and their ratios to the
ceiling, for each `--num-envs`.

    python scripts/bench_craftax.py --num-envs 64 256 --steps 16
"""

import argparse
import time

import jax

import purejaxdrl as pjd  # noqa: F401  (sets the XLA CPU flags before JAX starts)
from purejaxdrl import env as envs


def rollout(step, num_envs: int, steps: int, num_actions: int):
    """A jitted scan of `steps` random-action steps of `num_envs` environments."""

    @jax.jit
    def run(state, key):
        def body(state, key_t):
            keys = jax.random.split(key_t, num_envs)
            actions = jax.random.randint(key_t, (num_envs,), 0, num_actions)
            state, reward = step(keys, state, actions)
            return state, reward

        return jax.lax.scan(body, state, jax.random.split(key, steps))

    return run


def steps_per_second(run, state, num_envs: int, steps: int) -> float:
    """Env steps/s of a second call (the first compiles)."""
    jax.block_until_ready(run(state, jax.random.key(1)))
    start = time.perf_counter()
    jax.block_until_ready(run(state, jax.random.key(2)))
    return num_envs * steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env-id", default="Craftax-Classic-Symbolic-v1")
    parser.add_argument("--num-envs", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--steps", type=int, default=16)
    args = parser.parse_args()
    env = envs.make(args.env_id)
    params = env.default_params
    num_actions = env.action_spec(params).num_values

    def adapter(keys, state, actions):
        state, ts = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
            keys, state, actions, params
        )
        return state, ts.reward

    def batched(keys, state, actions):
        state, ts = env.step_batch(keys, state, actions, params)
        return state, ts.reward

    def alone(keys, state, actions):
        # Craftax's step without a reset: episodes run on past their end.
        _, state, reward, _, _ = jax.vmap(env.env.step, in_axes=(0, 0, 0, None))(
            keys, state, actions, params
        )
        return state, reward

    print(f"{args.env_id}, random actions, {jax.devices()[0].platform}")
    for n in args.num_envs:
        keys = jax.random.split(jax.random.key(0), n)
        state, _ = jax.vmap(env.reset, in_axes=(0, None))(keys, params)
        rates = {
            name: steps_per_second(
                rollout(fn, n, args.steps, num_actions), state, n, args.steps
            )
            for name, fn in (
                ("craftax alone", alone),
                ("vmap(step)", adapter),
                ("step_batch", batched),
            )
        }
        ceiling = rates["craftax alone"]
        print(
            f"{n:5d} envs: craftax alone {ceiling:9,.0f} steps/s, "
            + ", ".join(
                f"{name} {rate:9,.0f} ({rate / ceiling:.2f}x)"
                for name, rate in list(rates.items())[1:]
            )
        )


if __name__ == "__main__":
    main()
