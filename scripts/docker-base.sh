#!/usr/bin/env bash
# Builds the local Debian images that tasks start FROM, without pulling from any registry: debootstrap from the
# Debian mirror apt already uses, then `docker import`. Two images: the plain base (`ubuntu:*`, `debian:*` and the
# example tasks map onto it) and the same base with Debian's python3 (`python:*` maps onto it, so upstream
# Harbor's python-based example tasks run offline). Both debootstraps share one download cache, so the second only
# fetches python3's packages. An existing image is reused (pass --force to rebuild), since building takes a while
# and the result only changes with Debian.
set -euo pipefail

base_image="${ROLLOUT_BASE_IMAGE:-rollout-test/debian:bookworm}"
python_image="${ROLLOUT_PYTHON_IMAGE:-rollout-test/python:bookworm}"
suite="${ROLLOUT_BASE_SUITE:-bookworm}"
force="${1:-}"

present() { [ "$force" != "--force" ] && docker image inspect "$1" >/dev/null 2>&1; }
if present "$base_image" && present "$python_image"; then
  echo "docker:base: $base_image and $python_image exist, reusing them"
  exit 0
fi
command -v debootstrap >/dev/null || { echo "docker:base: debootstrap is missing (apt-get install debootstrap)" >&2; exit 1; }

# The mirror apt is configured with, so that the images come from wherever this machine gets its packages.
mirror_of() { apt-get indextargets --format '$(REPO_URI) $(RELEASE)' | awk -v s="$suite" '$2 == s { print $1; exit }'; }
mirror="$(mirror_of)"
# apt knows its sources' index targets only once its lists exist.
[ -n "$mirror" ] || { apt-get update -qq && mirror="$(mirror_of)"; }
[ -n "$mirror" ] || { echo "docker:base: no apt source for $suite in /etc/apt/sources.list*" >&2; exit 1; }

work="$(mktemp -d /tmp/rollout-base.XXXXXX)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/cache"

# build IMAGE [PACKAGES]: debootstrap a minimal root (with PACKAGES, comma-separated) and import it as IMAGE.
build() {
  local image="$1" include="${2:-}" root="$work/root"
  if present "$image"; then echo "docker:base: $image exists, reusing it"; return; fi
  echo "docker:base: debootstrap $suite${include:+ with $include} from $mirror"
  debootstrap --variant=minbase --cache-dir="$work/cache" ${include:+--include="$include"} "$suite" "$root" "$mirror" \
    >/tmp/rollout-base-debootstrap.log 2>&1 || { tail -20 /tmp/rollout-base-debootstrap.log >&2; exit 1; }
  tar -C "$root" -c . | docker import --change 'CMD ["bash"]' - "$image" >/dev/null
  rm -rf "$root"
  echo "docker:base: built $image"
}

build "$base_image"
build "$python_image" python3
