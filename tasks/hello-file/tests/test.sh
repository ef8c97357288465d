#!/usr/bin/env bash
# Harbor verifier: the reward goes to /logs/verifier (ROLLOUT_LOGS_DIR in the process environment).
logs="${ROLLOUT_LOGS_DIR:-/logs}/verifier"
workspace="${ROLLOUT_WORKSPACE:-/app}"
if [ "$(cat "$workspace/hello.txt" 2>/dev/null)" = "Hello, world!" ]; then exact=1; else exact=0; fi
if [ -f "$workspace/hello.txt" ]; then exists=1; else exists=0; fi
echo "hello.txt exists: $exists, exact: $exact"
printf '{"reward": %s, "file_exists": %s}\n' "$exact" "$exists" > "$logs/reward.json"
