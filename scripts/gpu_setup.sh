#!/usr/bin/env bash
# Downloads the wheels that `scripts/bench_gpu.py` needs on a GPU machine that
# already has JAX (CUDA), flax, optax, orbax, chex, numpy, scipy, matplotlib,
# pyyaml and rich, but none of purejaxdrl's environment libraries: gymnax,
# brax with MuJoCo, MuJoCo Playground, and distrax for PureJaxRL's side. They go to .whl/ (or $1),
# for CPython 3.12 on x86-64 Linux unless PYTHON_VERSION says otherwise;
# together about 55 MiB. gymnax imports seaborn (and so pandas), which are
# not carried: bench_gpu.py stubs seaborn where it is missing (docs/gpu.md).
# On the GPU machine, from the repository's root:
#
#   python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
#   PYTHONPATH=/tmp/site:$PWD python3 scripts/bench_gpu.py --purejaxrl DIR
#
# docs/gpu.md has the whole recipe. The versions are pinned because --no-deps
# resolves nothing. Nothing checks them against CI, which installs
# `.[dev,bench]` unpinned and so may run newer releases (on 2026-12-07 its
# environment had mujoco 4.0.1, lxml 6.2.1, decorator 5.3.2, against 4.0.0,
# 6.1.3, 5.3.1 here): this exact set is what the GPU machine gets, not a
# set CI has run together. One
# `pip download` fetches every wheel, so a version without a wheel for
# PYTHON_VERSION downloads nothing at all.
# Left out on purpose, as nothing the suite runs imports them (checked by
# hiding them): seaborn and pandas (gymnax's rendering; bench_gpu.py stubs
# seaborn), warp-lang (MuJoCo Warp; the adapter steps MJX's physics),
# mediapy (Playground's rendering), mujoco-studio-wasm and websockets
# (mujoco-studio's viewer), flask, cloudpickle.
#
# With ATARI_GAMES (say ATARI_GAMES="pong breakout"), it prepares instead what
# a host-env Atari run needs and nothing else: EnvPool cut down to its Atari
# module, with those games' ROMs only, and its pure-Python dependencies,
# unpacked into $dest/atari-site (about 16 MiB for one game, against 115 MiB
# for EnvPool's wheels with every asset). Then, on the GPU machine:
#
#   PYTHONPATH=$PWD/.whl/atari-site:$PWD python3 -m purejaxdrl train --env pong
set -euo pipefail
dest="${1:-.whl}"
py="${PYTHON_VERSION:-3.12}"
mkdir -p "$dest"
wheels=(
  # Environments: gymnax (CartPole, MinAtar) and brax (ant) with its physics.
  gymnax==1.0.1 gymnasium==1.3.0 farama-notifications==0.0.6
  brax==0.14.2 mujoco==4.0.0 mujoco-core==4.0.0 mujoco-studio==4.0.0
  mujoco-mjx==3.17.0 glfw==2.11.0 pyopengl==3.1.10 jaxopt==0.8.5
  ml-collections==1.1.0 trimesh==5.2.0 tensorboardx==2.6.5
  # MuJoCo Playground. Without warp-lang (not carried: it is large) the adapter
  # and bench_playground.py step with MJX's `jax` physics.
  playground==0.2.0 lxml==6.1.3 tqdm==4.70.1
  # PureJaxRL's ppo.py imports distrax, which needs TensorFlow Probability.
  distrax==0.1.9 tfp-nightly==0.26.0.dev20261027 dm-tree==0.1.10 gast==0.7.0
  decorator==5.3.1
)
platforms=()
for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_17_x86_64 \
  manylinux2014_x86_64 manylinux1_x86_64 manylinux_2_24_x86_64 \
  manylinux_2_31_x86_64 manylinux_2_34_x86_64 manylinux_2_35_x86_64; do
  platforms+=(--platform "$p")
done
if [ -n "${ATARI_GAMES:-}" ]; then
  wheels=(envpool==1.2.5 envpool-assets==0.3.0 dm-env==1.6 optree==0.20.0
    gymnasium==1.3.0 farama-notifications==0.0.6)
  tmp="$(mktemp -d)"
  python3 -m pip download -q --no-deps --only-binary=:all: \
    --python-version "$py" --implementation cp "${platforms[@]}" \
    -d "$tmp" "${wheels[@]}"
  site="$dest/atari-site"
  rm -rf "$site" && mkdir -p "$site"
  for w in "$tmp"/*.whl; do python3 -m zipfile -e "$w" "$site"; done
  rm -rf "$tmp"
  roms="$site/envpool_assets/atari/roms"
  for game in $ATARI_GAMES; do  # EnvPool names a ROM file game.bin
    [ -f "$roms/$game.bin" ] || { echo "no ROM $game.bin in envpool-assets" >&2; exit 2; }
  done
  # Every environment family but Atari goes, with its compiled module and
  # assets; EnvPool's entry point imports each family's registration, so it
  # keeps Atari's alone.
  for family in "$site"/envpool/*/; do
    case "$(basename "$family")" in atari|python) ;; *) rm -rf "$family" ;; esac
  done
  for family in "$site"/envpool_assets/*/; do
    [ "$(basename "$family")" = atari ] || rm -rf "$family"
  done
  for rom in "$roms"/*.bin; do
    case " $ATARI_GAMES " in *" $(basename "$rom" .bin) "*) ;; *) rm -f "$rom" ;; esac
  done
  grep -v '^import envpool\.' "$site/envpool/entry.py" > "$site/entry.tmp"
  echo "import envpool.atari.registration  # noqa: F401" >> "$site/entry.tmp"
  mv "$site/entry.tmp" "$site/envpool/entry.py"
  du -sh "$site"
  exit 0
fi
python3 -m pip download -q --no-deps --only-binary=:all: \
  --python-version "$py" --implementation cp "${platforms[@]}" \
  -d "$dest" "${wheels[@]}"
du -sh "$dest"
