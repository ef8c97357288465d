#!/usr/bin/env bash
# Builds the local Debian base image that the example tasks' Dockerfiles start FROM, without pulling from any
# registry: debootstrap from the Debian mirror apt already uses, then `docker import`. An existing image is
# reused (pass --force to rebuild), since building takes a while and the result only changes with Debian.
set -euo pipefail

image="${ROLLOUT_BASE_IMAGE:-rollout-test/debian:bookworm}"
suite="${ROLLOUT_BASE_SUITE:-bookworm}"

if [ "${1:-}" != "--force" ] && docker image inspect "$image" >/dev/null 2>&1; then
  echo "docker:base: $image exists, reusing it"
  exit 0
fi
command -v debootstrap >/dev/null || { echo "docker:base: debootstrap is missing (apt-get install debootstrap)" >&2; exit 1; }

# The mirror apt is configured with, so that the image comes from wherever this machine gets its packages.
mirror_of() { apt-get indextargets --format '$(REPO_URI) $(RELEASE)' | awk -v s="$suite" '$2 == s { print $1; exit }'; }
mirror="$(mirror_of)"
# apt knows its sources' index targets only once its lists exist.
[ -n "$mirror" ] || { apt-get update -qq && mirror="$(mirror_of)"; }
[ -n "$mirror" ] || { echo "docker:base: no apt source for $suite in /etc/apt/sources.list*" >&2; exit 1; }

root="$(mktemp -d /tmp/rollout-base.XXXXXX)"
trap 'rm -rf "$root"' EXIT
echo "docker:base: debootstrap $suite from $mirror"
debootstrap --variant=minbase "$suite" "$root" "$mirror" >/tmp/rollout-base-debootstrap.log 2>&1 \
  || { tail -20 /tmp/rollout-base-debootstrap.log >&2; exit 1; }
tar -C "$root" -c . | docker import --change 'CMD ["bash"]' - "$image" >/dev/null
echo "docker:base: built $image"
