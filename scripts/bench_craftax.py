"""Craftax on this machine: the adapter's steps/s against Craftax stepping alone.

The adapter resets where an episode ended. Under `vmap` that reset (a world
generation) is computed for every environment at every step; the batched
step the runners call (`CraftaxEnv.step_batch`) generates worlds for the few
environments that ended only. This reports random-action env steps/s (compile
excluded) of Craftax's own step without any reset (the ceiling), of the
vmapped adapter step and of the batched one, and their ratios to the
ceiling, for each `--num-envs`.

    python scripts/bench_craftax.py --num-envs 64 256 --steps 16
"""

import jax
from harness import (
    Report,
    compile_ahead,
    interleave,
    parser,
    positive_int,
    run_main,
    time_call,
)

import purejaxdrl as pjd


def rollout(step, num_envs: int, steps: int, num_actions: int):
    """A scan of `steps` random-action steps of `num_envs` environments."""

    def run(state, key):
        def body(state, key_t):
            keys = jax.random.split(key_t, num_envs)
            actions = jax.random.randint(key_t, (num_envs,), 0, num_actions)
            state, reward = step(keys, state, actions)
            return state, reward

        return jax.lax.scan(body, state, jax.random.split(key, steps))

    return run


def main(argv: list[str] | None = None) -> Report:
    p = parser(__doc__)
    p.add_argument("--env-id", default="Craftax-Classic-Symbolic-v1")
    p.add_argument("--num-envs", type=positive_int, nargs="+", default=[64, 256])
    p.add_argument("--steps", type=positive_int, default=16)
    args = p.parse_args(argv)
    if args.tiny:
        args.num_envs, args.steps = [2], 2
    env = pjd.env.make(args.env_id)
    params = env.default_params
    num_actions = env.action_spec(params).num_values

    def adapter(keys, state, actions):
        vmapped = jax.vmap(env.step, in_axes=(0, 0, 0, None))
        state, ts = vmapped(keys, state, actions, params)
        return state, ts.reward

    def batched(keys, state, actions):
        state, ts = env.step_batch(keys, state, actions, params)
        return state, ts.reward

    def alone(keys, state, actions):
        # Craftax's step without a reset: episodes run on past their end.
        vmapped = jax.vmap(env.env.step, in_axes=(0, 0, 0, None))
        _, state, reward, _, _ = vmapped(keys, state, actions, params)
        return state, reward

    report = Report(f"{args.env_id}, random actions")
    for n in args.num_envs:
        keys = jax.random.split(jax.random.key(0), n)
        state, _ = jax.vmap(env.reset, in_axes=(0, None))(keys, params)
        steps = {"craftax alone": alone, "vmap(step)": adapter, "step_batch": batched}

        def contender(fn, n=n, state=state):
            run = rollout(fn, n, args.steps, num_actions)
            compile_s, program = compile_ahead(run, state, jax.random.key(0))
            time_call(program, state, jax.random.key(0))  # first-run costs

            def measure(repeat: int) -> dict[str, float]:
                seconds, _ = time_call(program, state, jax.random.key(repeat + 1))
                return {"steps_per_s": n * args.steps / seconds, "compile_s": compile_s}

            return measure

        runs = interleave({k: contender(fn) for k, fn in steps.items()}, args.repeats)
        ceiling = report.add(f"{n} envs", "craftax alone", runs["craftax alone"])
        for name in ("vmap(step)", "step_batch"):
            line = report.add(f"{n} envs", name, runs[name])
            ratio = line.medians()["steps_per_s"] / ceiling.medians()["steps_per_s"]
            report.add(f"{n} envs", f"{name} / alone", [{"ratio": ratio}])
    return report.finish(args)


if __name__ == "__main__":
    run_main(main)
