#!/usr/bin/env bash
# callscope demo on a shared machine (issue 10): its PostgreSQL listens on no
# TCP port, only on a socket in a private (0700) directory; SIGINT and SIGTERM
# only set a flag, and the main thread closes the dashboard, stops PostgreSQL
# and removes the directory.
#   tests/demo/demo_safety_test.sh CALLSCOPE_BINARY
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 CALLSCOPE_BINARY" >&2; exit 2; }
bin=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/demo-safety-test.XXXXXX")
pid=
cleanup() {
  [ -z "$pid" ] || kill -9 "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

passed=0 failed=0
pass() { echo "PASS: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: $1"; failed=$((failed + 1)); }

for sig in INT TERM; do
  QT_QPA_PLATFORM=offscreen "$bin" demo --screenshot "$work/shots" --after 300 \
    >"$work/out" 2>"$work/err" &
  pid=$!
  # The demo names its PostgreSQL on stderr: "... host=/tmp/callscope-demo-XXXXXX port=5432".
  dir=
  for _ in $(seq 1 120); do
    dir=$(sed -n 's/.*PostgreSQL .*host=\([^ ]*\) port=.*/\1/p' "$work/err" | head -1)
    [ -n "$dir" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  if [ -z "$dir" ] || [ ! -d "$dir" ]; then
    fail "SIG$sig: the demo started and named its PostgreSQL directory"; sed 's/^/  | /' "$work/err"
    continue
  fi
  mode=$(stat -c %a "$dir")
  [ "$mode" = 700 ] && pass "SIG$sig: the directory is private (0700)" \
    || fail "SIG$sig: the directory $dir has mode $mode"
  # postmaster.pid: line 4 the port, line 6 the first listen address ("" = no TCP).
  pm=$dir/data/postmaster.pid
  if [ -f "$pm" ] && [ -z "$(sed -n 6p "$pm")" ] && [ -S "$dir/.s.PGSQL.$(sed -n 4p "$pm")" ]; then
    pass "SIG$sig: PostgreSQL listens on its private socket only"
  else
    fail "SIG$sig: PostgreSQL listens on TCP or has no socket in $dir"; cat "$pm" 2>/dev/null | sed 's/^/  | /'
  fi
  # Until the simulator writes (the dashboard opens once its tables exist).
  for _ in $(seq 1 120); do
    rows=$(psql -X -A -t -c 'select count(*) from idempotent_record' \
      "host=$dir port=$(sed -n 4p "$pm") dbname=postgres user=postgres" 2>/dev/null || true)
    [ "${rows:-0}" -gt 0 ] 2>/dev/null && break
    sleep 0.5
  done
  kill -"$sig" "$pid"
  for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$pid" 2>/dev/null; then
    fail "SIG$sig: the demo did not exit within 30 s"
  else
    pass "SIG$sig: the demo exited"
  fi
  pid=
  [ ! -e "$dir" ] && pass "SIG$sig: its directory is removed" || fail "SIG$sig: $dir is left behind"
  # (/proc rather than pgrep: procps is not among the packages scripts/setup installs)
  left=$(grep -l -F -- "$dir" /proc/[0-9]*/cmdline 2>/dev/null || true)
  if [ -n "$left" ]; then
    fail "SIG$sig: a process of $dir is still running"; echo "$left" | sed 's/^/  | /'
  else
    pass "SIG$sig: no PostgreSQL process is left"
  fi
done

echo "demo safety: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
