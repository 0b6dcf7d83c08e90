#!/usr/bin/env bash
# Installs Meshloom's build and test dependencies from Debian 12 (bookworm) packages.
# Shared by the README's quick start and by .ci/run. Idempotent: packages already present are skipped.
# CUDA and NCCL are not installed here: when /usr/local/cuda holds them the NCCL backend is built,
# otherwise it is left out (CMake says so once at configure time).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  qt6-base-dev qt6-svg-dev libqcustomplot-dev libgl1-mesa-dev fonts-dejavu-core
  libopenmpi-dev openmpi-bin
  # The tests labelled slurm start a private Slurm cluster (tests/slurm/slurm_cluster.sh): slurmctld, slurmd and the
  # client commands with their plugins (mpi/pmix among them), munge for its authentication, libpmix-dev for the
  # libpmix.so that `srun --mpi=pmix` loads (/usr/lib/x86_64-linux-gnu/pmix2/lib), and jq to read the JSON Lines.
  slurm-wlm munge libpmix-dev jq
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev
  xvfb xauth
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
