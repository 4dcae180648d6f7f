#!/usr/bin/env bash
# Installs every Debian 12 package that warpsim's build, tests and analysis scripts need.
# Idempotent and non-interactive: packages already present are skipped, so re-running is cheap.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libopenmpi-dev openmpi-bin
  libhdf5-openmpi-dev libhdf5-dev hdf5-tools
  libprotobuf-dev protobuf-compiler
  libspdlog-dev libfmt-dev
  libboost-dev libboost-system-dev
  libcli11-dev libmetis-dev libdeflate-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-h5py python3-numpy python3-matplotlib
  slurm-wlm munge
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
