"""Speed of the Atari torsos on this machine, per convolution lowering.

For the Nature CNN and the IMPALA ResNet on 84x84x4 uint8 frames: the forward
pass (obs/s) and a training step (forward, backward, Adam; samples/s), once
outside any loop and once as 4 steps inside a `lax.scan` (as PPO's epochs and
minibatches run), with convolutions as im2col + matmul (what CPUs get) and as
`lax.conv_general_dilated` (what GPUs get). Compile time excluded; best of
`--repeats`.

    python scripts/bench_networks.py --batch 256
"""

import jax
import jax.numpy as jnp
import optax
from harness import Report, best_time, parser, positive_int, run_main

import purejaxdrl as pjd
from purejaxdrl.networks.base import PIXEL_TORSOS

conv = pjd.networks.conv

LOWERINGS = {"im2col": conv.im2col_conv, "lax.conv": conv.xla_conv}


def measure(torso: str, lowering: str, batch: int, repeats: int) -> dict[str, float]:
    """obs/s forward, samples/s for one training step and for 4 in a scan.

    The package's convolution is `lowering`'s while this runs, then restored:
    a later row (bench_gpu's) gets the platform's own again.
    """
    chosen, built = LOWERINGS[lowering], conv.conv_valid
    conv.conv_valid = lambda x, k, b, stride: chosen(x, k, b, stride)
    try:
        return _measure(torso, batch, repeats)
    finally:
        conv.conv_valid = built


def _measure(torso: str, batch: int, repeats: int) -> dict[str, float]:
    hidden = (512,) if torso == "nature" else (256,)
    config = pjd.NetworkConfig(torso=torso, hidden_sizes=hidden, shared_torso=True)
    net = pjd.networks.make_actor_critic(
        config, pjd.env.Box((4, 84, 84)), pjd.env.Discrete(6)
    )
    obs = jax.random.randint(jax.random.key(0), (batch, 4, 84, 84), 0, 256)
    obs = obs.astype(jnp.uint8)
    params = net.init(jax.random.key(1), obs[:1])
    optimizer = optax.adam(2.5e-4)
    opt_state = optimizer.init(params)

    def loss(params, obs):
        logits, value = net.apply(params, obs)
        return jnp.mean(jax.nn.logsumexp(logits, -1)) + jnp.mean(value**2)

    def step(carry, obs):
        params, opt_state = carry
        grads = jax.grad(loss)(params, obs)
        updates, opt_state = optimizer.update(grads, opt_state)
        return (optax.apply_updates(params, updates), opt_state), None

    forward = jax.jit(lambda p, o: net.apply(p, o))
    one = jax.jit(lambda c, o: step(c, o)[0])
    four = jax.jit(lambda c, o: jax.lax.scan(step, c, o)[0])
    stacked = jnp.stack([obs] * 4)
    carry = (params, opt_state)
    return {
        "forward obs/s": batch / best_time(lambda: forward(params, obs), repeats),
        "train samples/s": batch / best_time(lambda: one(carry, obs), repeats),
        "train in scan samples/s": 4
        * batch
        / best_time(lambda: four(carry, stacked), repeats),
    }


def main(argv: list[str] | None = None) -> Report:
    p = parser(__doc__)
    p.add_argument("--batch", type=positive_int, default=256)
    p.add_argument(
        "--torsos",
        nargs="+",
        choices=PIXEL_TORSOS,
        help="the torsos to time (space-separated; default: all, or nature at --tiny)",
    )
    args = p.parse_args(argv)
    lowerings = list(LOWERINGS)
    if args.tiny:  # bench_gpu.py's cnn_learners row at --tiny: the same programs
        # (the ResNet's take half a minute to compile on a CPU; the networks'
        # own tests compile them).
        args.batch, lowerings = 8, ["im2col"]
        args.torsos = args.torsos or ["nature"]
    args.torsos = args.torsos or list(PIXEL_TORSOS)
    report = Report(f"Atari torsos, batch {args.batch}, 84x84x4 uint8 frames")
    for torso in args.torsos:
        for lowering in lowerings:
            figures = measure(torso, lowering, args.batch, args.repeats)
            report.add(torso, lowering, [figures], f"best of {args.repeats}")
    return report.finish(args)


if __name__ == "__main__":
    run_main(main)
