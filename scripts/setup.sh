#!/usr/bin/env bash
# Install the Debian 12 packages the project needs (if missing) and build it in build/.
# Used by scripts/run_default.sh and scripts/test.sh; safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ cmake ninja-build pkg-config clang-format   # clang-format: scripts/check_format.sh
          libeigen3-dev libxsimd-dev libyaml-cpp-dev nlohmann-json3-dev libgtest-dev
          libvtk9-dev libinsighttoolkit5-dev zlib1g-dev
          libsuitesparse-dev libopenblas0-pthread   # CHOLMOD (Newton), optimised BLAS for it
          slurmctld slurmd slurm-client munge   # Slurm: tests/slurm (docs/slurm.md)
          python3-matplotlib python3-vtk9 xvfb xauth libgl1-mesa-dri)  # figures (docs/figures.md)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 "${missing[@]}"
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCARDIO_BUILD_TESTS=ON
cmake --build build -j "$(nproc)"
