#!/usr/bin/env bash
# Flake soak: runs groups of end-to-end test files many times in a row (one `vitest run` per run) and counts the
# failures, so that a failure once in dozens of runs shows. The docker group runs beside two busy-looping
# processes, as on a loaded CI machine. A failure stops nothing; every group runs its count. Prints per group the
# runs, the failures and the machine's load average; exits 1 when any run failed, and keeps the failed runs' output.
#
# Usage: scripts/soak.sh [group[:runs] ...]   groups: docker (30 runs), watch (30), queue (20); default: all three.
# Example: scripts/soak.sh docker:5 queue
set -uo pipefail
cd "$(dirname "$0")/.."

declare -A FILES=([docker]='test/harbor-docker*.test.ts' [watch]='test/watch*.test.ts' [queue]='test/queue*.test.ts')
declare -A RUNS=([docker]=30 [watch]=30 [queue]=20)
declare -A LOADED=([docker]=1)

busy=()
child=''
stop_busy() {
  for pid in "${busy[@]}"; do kill "$pid" 2>/dev/null; done
  busy=()
}
# A signal ends the current vitest run too: bash would otherwise wait for it before running the trap.
trap stop_busy EXIT
trap '[ -n "$child" ] && kill "$child" 2>/dev/null; exit 130' INT TERM

load() { cut -d' ' -f1-3 /proc/loadavg; }

# Runs one group; prints its line and returns 1 when a run failed.
soak() {
  local group=$1 runs=$2 failed=0 highest=0 one n
  # shellcheck disable=SC2206 # the glob is meant to expand
  local files=(${FILES[$group]})
  if [ -n "${LOADED[$group]:-}" ]; then
    for _ in 1 2; do
      node -e 'for (;;) {}' &
      busy+=("$!")
    done
  fi
  for n in $(seq 1 "$runs"); do
    local log="$logs/$group-$n.log"
    node_modules/.bin/vitest run "${files[@]}" >"$log" 2>&1 &
    child=$!
    if wait "$child"; then
      rm -f "$log"
      echo "soak: $group run $n/$runs passed (load $(load))" >&2
    else
      failed=$((failed + 1))
      echo "soak: $group run $n/$runs FAILED (load $(load)): $log" >&2
    fi
    one=$(cut -d' ' -f1 /proc/loadavg)
    highest=$(awk -v a="$highest" -v b="$one" 'BEGIN { print (b > a ? b : a) }')
  done
  stop_busy
  echo "soak: $group: $runs runs, $failed failed (${#files[@]} files$([ -n "${LOADED[$group]:-}" ] && echo ', beside 2 busy loops'));" \
    "load average $(load) at the end, highest 1-min load $highest"
  [ "$failed" -eq 0 ]
}

groups=("$@")
[ "${#groups[@]}" -gt 0 ] || groups=(docker watch queue)
plan=()
for spec in "${groups[@]}"; do
  group=${spec%%:*}
  runs=${RUNS[$group]:-}
  [ -n "$runs" ] || { echo "soak: unknown group $group (docker, watch, queue)" >&2; exit 2; }
  [ "$spec" = "$group" ] || runs=${spec#*:}
  [[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "soak: runs must be a positive number, not $runs" >&2; exit 2; }
  plan+=("$group $runs")
done

logs="$(mktemp -d /tmp/rollout-soak.XXXXXX)"
status=0
for step in "${plan[@]}"; do
  # shellcheck disable=SC2086 # group and runs
  soak $step || status=1
done
if [ "$status" -eq 0 ]; then rm -rf "$logs"; else echo "soak: the failed runs' output is in $logs" >&2; fi
exit "$status"
