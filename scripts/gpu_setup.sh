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
# docs/gpu.md has the whole recipe. The versions are the ones this
# repository's CI installs, pinned because --no-deps resolves nothing.
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
python3 -m pip download -q --no-deps --only-binary=:all: \
  --python-version "$py" --implementation cp "${platforms[@]}" \
  -d "$dest" "${wheels[@]}"
du -sh "$dest"
