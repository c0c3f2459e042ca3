#!/usr/bin/env bash
# Records this Playwright suite through Shepherd, then finds and explores the recording's
# races, as a CI job would (README.md explains each step):
#   1. the application under test starts (here: site/ on a loopback port);
#   2. `shepherd record --listen` starts and writes the browser's flags to a file;
#   3. the suite runs with those flags (playwright-core, the machine's Chromium);
#   4. the recorder stops (SIGTERM: everything queued is written);
#   5. `shepherd races` and `shepherd explore` write text, SARIF and JUnit reports.
# Exit status: explore's `--fail-on harmful` (3 when a race changes what the page shows),
# 1 when a step fails.
# Environment: SHEPHERD (the binary, default `shepherd`), CHROMIUM (default
# /usr/bin/chromium), OUT (reports, default ./out), EXPLORE_BUDGET (default 60s).
set -euo pipefail
cd "$(dirname "$0")"
shepherd=${SHEPHERD:-shepherd}
out=${OUT:-out}
budget=${EXPLORE_BUDGET:-60s}
mkdir -p "$out"
rm -rf "$out"/suite.rec* "$out"/suite.rec.explore "$out/flags.json" "$out/site.url"

if [[ ! -d node_modules/playwright-core ]]; then
  npm install --no-audit --no-fund
fi

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

wait_for_file() {
  for _ in $(seq 1 600); do
    [[ -s "$1" ]] && return 0
    sleep 0.1
  done
  echo "run.sh: $1 did not appear" >&2
  return 1
}

# 1. The application under test.
node serve-site.mjs > "$out/site.url" &
pids+=($!)
wait_for_file "$out/site.url"
site=$(head -n1 "$out/site.url")

# 2. The recorder; it writes the flags once it listens.
"$shepherd" record --listen 127.0.0.1:0 --out "$out/suite.rec" \
  --browser-flags "$out/flags.json" 2> "$out/record.log" &
recorder=$!
pids+=("$recorder")
wait_for_file "$out/flags.json"

# 3. The suite, unchanged but for the browser's flags.
SITE_URL=$site SHEPHERD_BROWSER_FLAGS=$out/flags.json npm test

# 4. Stop the recorder: SIGTERM writes what it still queues.
kill -TERM "$recorder"
wait "$recorder"

# 5. Races in the recording, then the explorer on them.
"$shepherd" races "$out/suite.rec" --sarif "$out/races.sarif" --junit "$out/races.xml" \
  > "$out/races.txt"
status=0
"$shepherd" explore "$out/suite.rec" --budget "$budget" --json \
  --sarif "$out/explore.sarif" --junit "$out/explore.xml" --fail-on harmful \
  > "$out/explore.json" || status=$?
echo "run.sh: reports in $out (races.txt, races.sarif, races.xml, explore.json, explore.sarif, explore.xml); explore exited $status" >&2
exit "$status"
