#!/bin/sh
# Installs what iris-lua builds and tests with, from Debian 12's packages. Idempotent; run as root
# (or it uses sudo). The CUDA toolkit is not a Debian package here: when /usr/local/cuda (or CUDA_HOME)
# holds it, the cuda backend is built; without it the backend is left out.
set -eu
packages="build-essential cmake ninja-build pkg-config \
  libluajit-5.1-dev luajit \
  libopenmpi-dev openmpi-bin \
  catch2 libedit-dev libamdhip64-dev \
  libboost-context-dev libxxhash-dev \
  tmux libxml2-utils"
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
as_root=""
[ "$(id -u)" -eq 0 ] || as_root="sudo"
export DEBIAN_FRONTEND=noninteractive
$as_root apt-get update -qq
# shellcheck disable=SC2086
$as_root apt-get install -y -qq --no-install-recommends $missing
