"""`bench_brax.py`'s parts: our PPO and brax's trainer on one configuration.

- `clock`: the chunk clock both sides are timed by, and its agreement check.
- `brax_side`: brax's `ppo.train` on our configuration (the mapping in
  `bench_brax.py`'s docstring), its JAX shims, and brax's evaluation protocol
  that both final policies are scored by.
- `ours`: our preset resized as brax's trainer needs, trained, and our policy
  in brax's `make_policy` form.
- `profile`: `--profile`'s split of an update into env, rollout and learner.
"""
