#!/usr/bin/env bash
# Run on the workstation, before a session's first GPU call: fills what the calls carry.
#   .whl/common, .whl/ours, .whl/peer: the wheels setup.sh installs on the GPU machine (which
#       has no network), our own wheel built from this checkout;
#   .peer_scripts/{IPPO,QLearning,MAPPO}: JaxMARL's baseline scripts and configs, read from a
#       git directory of FLAIROx/JaxMARL (the `fetch` tool's mirror, or any clone).
#   .whl/mujoco: brax, MJX and their imports, for MABrax calls only.
# Both folders are ignored by git. Carry .whl/common, .whl/ours, .whl/peer and .peer_scripts in
# each call, and .whl/mujoco as well in a MABrax call (the call's tree must stay under 64 MiB).
#
#   bash benchmarks/device/prepare.sh JAXMARL_GIT_DIR
#   e.g. bash benchmarks/device/prepare.sh /work/.mirror/FLAIROx+JaxMARL/repo
set -euo pipefail
cd "$(dirname "$0")/../.."
jaxmarl_git=${1:?give the git directory of a FLAIROx/JaxMARL checkout or mirror}
python=${PYTHON:-.venv/bin/python}
P=(--no-deps --only-binary=:all: --python-version 3.12 --implementation cp
    --platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 --platform manylinux2014_x86_64)
rm -rf .whl .peer_scripts
"$python" -m pip download -q "${P[@]}" -d .whl/common decorator distrax dm-tree gast tfp-nightly \
    Farama-Notifications
"$python" -m pip download -q "${P[@]}" -d .whl/ours omegaconf==2.4.0 gymnasium
"$python" -m pip download -q "${P[@]}" -d .whl/peer flashbax==0.1.3 gymnax==1.0.1 hydra-core==1.3.8 \
    jaxmarl==0.2.0 omegaconf==2.3.1 gymnasium==1.3.0
"$python" -m pip wheel -q --no-deps -w .whl/peer antlr4-python3-runtime==4.9.3 # an sdist only
# MABrax (brax on MJX) and what it imports that the GPU machine lacks; carried only by calls that
# train a MuJoCo family (`carry: [".whl", ...]`; the others carry .whl/common, .whl/ours, .whl/peer).
"$python" -m pip download -q "${P[@]}" -d .whl/mujoco brax==0.14.2 mujoco==3.17.0 \
    mujoco-mjx==3.17.0 jaxopt ml_collections tensorboardX trimesh glfw PyOpenGL websockets flask \
    flask-cors blinker itsdangerous
"$python" -m build --wheel --outdir .whl/ours . >/tmp/prepare_build.log 2>&1 ||
    { tail -20 /tmp/prepare_build.log; exit 1; }
# File by file: a mirror may lack large blobs elsewhere in the tree, which `git archive` trips on.
git --git-dir="$jaxmarl_git" ls-tree -r --name-only HEAD baselines/IPPO baselines/QLearning \
    baselines/MAPPO | while read -r path; do
    mkdir -p ".peer_scripts/$(dirname "${path#baselines/}")"
    git --git-dir="$jaxmarl_git" show "HEAD:$path" >".peer_scripts/${path#baselines/}"
done
echo "JaxMARL scripts at $(git --git-dir="$jaxmarl_git" rev-parse --short HEAD);" \
    "carry .whl ($(du -sh .whl | cut -f1)) and .peer_scripts ($(du -sh .peer_scripts | cut -f1))"
