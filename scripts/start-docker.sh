#!/usr/bin/env bash
# Starts a docker engine for the docker trial environment unless one already answers, and fails loudly when
# none comes up: the docker tests must fail, never skip, on a machine without an engine.
set -euo pipefail

if docker info >/dev/null 2>&1; then
  echo "docker: engine already running"
  exit 0
fi
command -v dockerd >/dev/null || { echo "docker: dockerd is missing (apt-get install docker.io)" >&2; exit 1; }

log=/var/log/dockerd.log
# Trials run with --network none (or the host's network), so the engine needs no bridge: without one it
# creates no interface and no address, and touches no iptables rules.
nohup dockerd --bridge=none --iptables=false >"$log" 2>&1 &
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then
    echo "docker: engine started"
    exit 0
  fi
  sleep 1
done
echo "docker: the engine did not start within 60 s; the end of $log:" >&2
tail -30 "$log" >&2
exit 1
