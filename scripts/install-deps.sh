#!/bin/sh
# Installs what dlcomm needs to build and test on Debian 12 (as root, or with sudo).
# CUDA and NCCL are optional: the NCCL backend is built when their headers are found.
# lintian and man-db: the install tests check the .deb and its man pages (and the docs
# tests render every page). bash-completion: the install test loads the completion through it.
# prometheus, prometheus-node-exporter: the prom tests run both for real (own ports; in a
# container without systemd their postinst skips starting the services).
# python3-jsonschema: the tests validate every run.json they write against
# docs/schema/run.schema.json.
# systemd: its systemd-analyze verifies dlcomm watch's units (nothing is started).
# slurmctld, slurmd, slurm-client, munge: the slurm tests run a real cluster on the netns
# rig (scripts/slurm-rig.sh: its own munged, config and state under /run; the packages'
# services are not used).
set -eu
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
pkgs="build-essential cmake pkg-config openmpi-bin libopenmpi-dev libcjson-dev libhwloc-dev
      libcmocka-dev gnuplot-nox python3 iproute2 python3-yaml python3-jsonschema shellcheck
      lintian man-db bash-completion chromium python3-websocket fonts-dejavu-core
      prometheus prometheus-node-exporter systemd
      slurmctld slurmd slurm-client munge"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi
