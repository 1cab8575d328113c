#!/usr/bin/env bash
# Tests that scripts/stack refuses state it cannot trust, without starting a
# server, and that nothing planted in such state is run, killed or deleted:
# a state directory that is world-writable, a symlink, someone else's, or
# under a world-writable parent; a directory of ours that is not a stack's;
# shell code in the files a stack's directory holds; a pid file naming a
# process that is not this stack's broker; a pointer file that someone else
# could have written, or that names such a directory.
#   tests/setup/stack_trust_test.sh REPO_ROOT
# Every run of scripts/stack gets a private HOME, XDG_RUNTIME_DIR,
# XDG_CACHE_HOME and TMPDIR (the user's pointer file and caches are neither
# read nor written) and a PATH whose java, mvn, openssl, runuser, psql and
# kcat (and initdb, pg_ctl, postgres, though the script runs those by their
# absolute path, through runuser when root) are stubs that only record that
# they ran, so a case that gets past the checks fails ("it ran: ...") rather
# than start servers; none of the cases reaches PostgreSQL's programs. The
# cases that need another user (chown) are skipped when not run as root.
set -euo pipefail
umask 077

[ $# -eq 1 ] || { echo "usage: $0 REPO_ROOT" >&2; exit 2; }
root=$(cd "$1" && pwd)
stack=$root/scripts/stack
[ -x "$stack" ] || { echo "$stack is not an executable file" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/stack-trust-test.XXXXXX")
work=$(cd "$work" && pwd -P)
bg=()  # processes this test started and has not reaped
cleanup() {
  local p
  for p in "${bg[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
# scripts/stack allows only these characters in a state directory's path.
[[ $work =~ ^/[A-Za-z0-9._/+-]+$ ]] || { echo "cannot test in $work: unusual characters in its path" >&2; exit 2; }

uid=$(id -u)
home=$work/home run=$work/run cache=$work/cache tmp=$work/tmp bin=$work/bin pwn=$work/pwned ran=$work/ran
mkdir -m 700 "$home" "$run" "$cache" "$tmp" "$bin" "$pwn"
pdir=$run/callscope pointer=$run/callscope/stack-dir
for prog in java mvn openssl initdb pg_ctl postgres runuser psql kcat; do
  printf '#!/bin/sh\necho "%s $*" >> "%s"\nexit 1\n' "$prog" "$ran" > "$bin/$prog"
  chmod 755 "$bin/$prog"
done
cmds=(start stop env status restart-postgres restart-kafka)

passed=0 failed=0 skipped=0
pass() { echo "PASS: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: $1"; [ -z "${2:-}" ] || sed 's/^/  | /' <<<"$2"; failed=$((failed + 1)); }
skip() { echo "SKIP: $1"; skipped=$((skipped + 1)); }

# The state letter of a process (R, S, Z, ...), empty when there is none.
proc_state() {
  local s
  s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  s=${s##*') '}
  echo "${s%% *}"
}

# Wait for a process this test started and forget it.
reap() {
  local p keep=()
  wait "$1" 2>/dev/null || true
  for p in "${bg[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
  bg=("${keep[@]}")
}

# Kill and reap a process this test started, unless it was reaped already
# (then its pid may belong to someone else by now).
finish() {
  local p
  for p in "${bg[@]}"; do
    if [ "$p" = "$1" ]; then kill "$1" 2>/dev/null || true; reap "$1"; fi
  done
}

# run_stack DIR|- COMMAND: scripts/stack COMMAND in the private environment,
# with CALLSCOPE_STACK_DIR=DIR (unset for -). Sets $rc, $out and $started
# (the stubbed programs it ran, psql and kcat aside: those are clients). A
# process of this test that it kills is reaped meanwhile: as a zombie it would
# still look alive to the script's kill -0.
run_stack() {
  local sp p vars=(PATH="$bin:$PATH" HOME="$home" XDG_RUNTIME_DIR="$run"
    XDG_CACHE_HOME="$cache" TMPDIR="$tmp" LANG=C OUTAGE_SECONDS=0)
  [ "$1" = - ] || vars+=(CALLSCOPE_STACK_DIR="$1")
  : > "$ran"
  (cd "$work" && exec timeout 15 env -i "${vars[@]}" "$stack" "$2") >"$work/out" 2>&1 </dev/null &
  sp=$!
  while :; do
    for p in "${bg[@]}"; do [ "$(proc_state "$p")" != Z ] || reap "$p"; done
    case $(proc_state "$sp") in '' | Z) break ;; esac
    sleep 0.05
  done
  rc=0
  wait "$sp" || rc=$?
  out=$(cat "$work/out")
  started=$(grep -Ev '^(psql|kcat) ' "$ran" || true)
}

# What is in a directory: names, types, modes, owners, sizes, link targets
# and the files' contents.
snap() {
  [ -d "$1" ] || { echo "(missing)"; return 0; }
  (cd "$1" && find . -printf '%p %y %m %U %s %l\n' | sort && find . -type f -exec sha256sum {} + | sort)
}

# The problems noted about the last run; verdict turns them into PASS/FAIL.
problems=""
problem() { problems+="$1"$'\n'; }
verdict() {
  if [ -z "$problems" ]; then pass "$1"; else fail "$1" "${problems}exit $rc; output:"$'\n'"$out"; fi
  problems=""
}
refused() { # REASON: a non-zero exit (not a timeout) and the output says REASON
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then problem "exit $rc: not a refusal"; fi
  grep -qF -- "$1" <<<"$out" || problem "the output does not say: $1"
}
unchanged() { # DIR BEFORE
  local now; now=$(snap "$1")
  [ "$now" = "$2" ] || problem "$1 changed:"$'\n'"$(diff <(echo "$2") <(echo "$now") || true)"
}
nothing_started() { [ -z "$started" ] || problem "it ran: $started"; }
nothing_run() {
  [ -z "$(ls -A "$pwn")" ] || problem "planted code ran, it made: $(ls -A "$pwn" | tr '\n' ' ')"
  rm -rf "${pwn:?}"/*
}

# plant DIR: what a stopped stack leaves (the marker, env, ports, kafka/) and a
# file "keep": a directory that a teardown would empty or remove. Mode 0700.
plant() {
  mkdir -p "$1/kafka"
  : > "$1/.callscope-stack"
  printf "export CALLSCOPE_PG_PORT='1'\nexport CALLSCOPE_KAFKA_BROKERS='127.0.0.1:1'\n" > "$1/env"
  printf 'pg=1\nkafka=1\nkafka_sasl=1\ncontroller=1\n' > "$1/ports"
  echo "not scripts/stack's: must survive" > "$1/keep"
  chmod 700 "$1"
}

# fresh DIR: DIR removed and made again, empty (its parents made 0700).
fresh() { rm -rf "$1"; mkdir -p "$1"; }

# refuses_all NAME DIR|- REASON SNAPDIR...: each command refuses with REASON,
# changes nothing in the SNAPDIRs and starts nothing; setup_case (defined by
# the caller) makes the state again before each command.
refuses_all() {
  local name=$1 named=$2 reason=$3 cmd dir i before
  shift 3
  for cmd in "${cmds[@]}"; do
    setup_case
    before=()
    for dir in "$@"; do before+=("$(snap "$dir")"); done
    run_stack "$named" "$cmd"
    refused "$reason"
    i=0
    for dir in "$@"; do unchanged "$dir" "${before[$i]}"; i=$((i + 1)); done
    nothing_started
    nothing_run
    verdict "$name: $cmd refuses"
  done
}

# --- 0. controls: a private stack directory of ours is accepted ---------------
# (so the refusals below are for the reasons they name, not because this
# test's work directory could not be trusted)
d=$work/c0/stack
fresh "$work/c0"; plant "$d"
run_stack "$d" stop
[ "$rc" -eq 0 ] || problem "exit $rc"
[ ! -e "$d" ] || problem "$d is still there"
nothing_started
verdict "0a. control: stop removes a private stack directory of ours named by CALLSCOPE_STACK_DIR"

fresh "$work/c0"; plant "$d"
rm -rf "$pdir"; mkdir -m 700 "$pdir"; echo "$d" > "$pointer"
run_stack - stop
[ "$rc" -eq 0 ] || problem "exit $rc"
[ ! -e "$d" ] || problem "$d is still there"
[ ! -e "$pointer" ] || problem "the pointer $pointer is still there"
nothing_started
verdict "0b. control: stop removes a private stack directory of ours named by a pointer of ours, and the pointer"
rm -rf "$pdir"

# --- 1. a world-writable state directory -------------------------------------
d=$work/c1/stack
setup_case() { fresh "$work/c1"; plant "$d"; chmod 777 "$d"; }
refuses_all "1. CALLSCOPE_STACK_DIR of mode 0777" "$d" "$d is writable by group or others (mode 777)" "$d"
setup_case() { fresh "$work/c1"; plant "$d"; chmod 770 "$d"; }
refuses_all "1. CALLSCOPE_STACK_DIR of mode 0770" "$d" "$d is writable by group or others (mode 770)" "$d"

# --- 2. a symlink as the state directory --------------------------------------
d=$work/c2/private link=$work/c2/link
setup_case() { fresh "$work/c2"; plant "$d"; ln -s "$d" "$link"; }
refuses_all "2. CALLSCOPE_STACK_DIR a symlink to a private stack directory" "$link" \
  "$link is not a directory (or is a symlink)" "$work/c2" "$d"
setup_case() { fresh "$work/c2"; ln -s "$work/c2/nowhere" "$link"; }
refuses_all "2. CALLSCOPE_STACK_DIR a dangling symlink (start must not create its target)" "$link" \
  "$link is not a directory (or is a symlink)" "$work/c2"

# --- 3. someone else's state directory ----------------------------------------
nobody=""
if [ "$uid" -eq 0 ] && nobody=$(id -u nobody 2>/dev/null); then
  d=$work/c3/theirs
  setup_case() { fresh "$work/c3"; plant "$d"; chown -R nobody "$d"; }
  refuses_all "3. CALLSCOPE_STACK_DIR owned by nobody" "$d" "$d is owned by uid $nobody, not $uid" "$d"
else
  nobody=""
  skip "3. CALLSCOPE_STACK_DIR owned by another user (needs root and the user nobody)"
fi

# --- 4. a private directory of ours that is not a stack's ---------------------
d=$work/c4/mine
for cmd in "${cmds[@]}"; do
  fresh "$d"; echo "my notes" > "$d/notes.txt"; chmod 700 "$d"
  before=$(snap "$d")
  run_stack "$d" "$cmd"
  case $cmd in
    start | stop) refused "$d does not look like a stack directory" ;;
    restart-postgres) refused "no pg port recorded in $d" ;;
    restart-kafka) refused "no kafka port recorded in $d" ;;
    *) refused "no stack is running" ;;
  esac
  unchanged "$d" "$before"
  nothing_started
  verdict "4. CALLSCOPE_STACK_DIR a 0700 directory of ours holding an unrelated file: $cmd leaves it alone"
done
# A directory that merely resembles one (a kafka/ subdirectory, a file named env,
# like the repository's scripts/) is not a stack's either: no marker, no removal.
for cmd in start stop; do
  fresh "$d"; echo "my notes" > "$d/notes.txt"; mkdir "$d/kafka"; echo "x" > "$d/env"; chmod 700 "$d"
  before=$(snap "$d")
  run_stack "$d" "$cmd"
  refused "$d does not look like a stack directory"
  unchanged "$d" "$before"
  nothing_started
  verdict "4. CALLSCOPE_STACK_DIR a directory with kafka/ and env but no marker: $cmd leaves it alone"
done
# The same, named by a pointer of ours (start tears down what a pointer names).
for cmd in start stop; do
  fresh "$d"; echo "my notes" > "$d/notes.txt"; chmod 700 "$d"
  rm -rf "$pdir"; mkdir -m 700 "$pdir"; echo "$d" > "$pointer"
  before=$(snap "$d")
  run_stack - "$cmd"
  refused "$d does not look like a stack directory"
  unchanged "$d" "$before"
  nothing_started
  verdict "4. a pointer naming a 0700 directory of ours holding an unrelated file: $cmd leaves it alone"
done
rm -rf "$pdir"

# --- 5. shell code in the files of a stack-looking directory ------------------
# Lines that would each make a file in $pwn, named after TAG, if run by a shell.
code() {
  local t=$pwn/$1
  cat <<EOF
\$(touch $t-1)
\`touch $t-2\`
; touch $t-3
x; touch $t-4 #
x && touch $t-5
x | touch $t-6
touch $t-7
EOF
}
hostile_env() { # FILE
  local t=$pwn/env
  cat > "$1" <<EOF
export CALLSCOPE_STACK_DIR='$work/c5/stack'
export CALLSCOPE_PG_PORT='1'\$(touch $t-a)
export CALLSCOPE_KAFKA_BROKERS="127.0.0.1:1\`touch $t-b\`"
export CALLSCOPE_PG_DSN=x; touch $t-c
export CALLSCOPE_CONFIG=\$(touch $t-d)
EOF
  code env >> "$1"
}
hostile_ports() { # FILE
  local t=$pwn/ports
  cat > "$1" <<EOF
pg=1\$(touch $t-a)
kafka=\`touch $t-b\`
kafka_sasl=1; touch $t-c
controller=1 && touch $t-d
EOF
  code ports >> "$1"
}
d=$work/c5/stack
# 5a: an older stack's directory (no marker, no ports file: env is parsed).
# 5b: every file scripts/stack reads holds shell code.
# 5c: valid ports, so that pgdir, kafka/pid and kafka/libs are read too
#     (restart-kafka stops at kafka/libs, which is not an absolute path).
setup_5a() { fresh "$d"; chmod 700 "$d"; hostile_env "$d/env"; }
setup_5b() {
  fresh "$d"; chmod 700 "$d"; mkdir "$d/kafka" "$d/pg"
  : > "$d/.callscope-stack"
  hostile_env "$d/env"
  hostile_ports "$d/ports"
  { echo "/tmp/x\$(touch $pwn/pgdir-a)"; code pgdir; } > "$d/pgdir"
  { echo "\$(touch $pwn/pid-a)"; code pid; } > "$d/kafka/pid"
  { echo "\$(touch $pwn/libs-a)/libs"; code libs; } > "$d/kafka/libs"
  { echo "*:1:*:postgres:\$(touch $pwn/pgpass-a)"; code pgpass; } > "$d/pgpass"
  code props > "$d/kafka/server.properties"
  code toml > "$d/callscope.toml"
}
setup_5c() { setup_5b; printf 'pg=1\nkafka=1\nkafka_sasl=1\ncontroller=1\n' > "$d/ports"; }
for v in 5a 5b 5c; do
  case $v in
    5a) what="an older stack's env with shell code" ;;
    5b) what="shell code in env, ports, pgdir, kafka/pid, kafka/libs, pgpass" ;;
    5c) what="valid ports; shell code in env, pgdir, kafka/pid, kafka/libs" ;;
  esac
  for cmd in env status stop restart-postgres restart-kafka; do
    "setup_$v"
    run_stack "$d" "$cmd"
    [ "$rc" -ne 124 ] || problem "timed out"
    nothing_run
    nothing_started
    verdict "$v. $what: $cmd runs none of it"
  done
done
# The pointer itself holding shell code.
for cmd in "${cmds[@]}"; do
  rm -rf "$pdir"; mkdir -m 700 "$pdir"
  { echo "$work/c5/x\$(touch $pwn/pointer-a)"; code pointer; } > "$pointer"
  before=$(snap "$run")
  run_stack - "$cmd"
  refused "the pointer file $pointer does not hold a plain absolute path"
  unchanged "$run" "$before"
  nothing_run
  nothing_started
  verdict "5d. a pointer holding shell code: $cmd refuses and runs none of it"
done
rm -rf "$pdir"

# --- 6. a pid file naming a process that is not this stack's broker ----------
d=$work/c6/stack
# A stack-looking directory whose kafka/pid holds PID; kafka/libs is a relative
# path, which launch_broker refuses before it runs java, so restart-kafka ends
# after it has (or has not) stopped the broker.
setup_6() {
  fresh "$d"; plant "$d"
  echo "$1" > "$d/kafka/pid"
  echo relative/libs > "$d/kafka/libs"
}
alive() { case $(proc_state "$1") in '' | Z) return 1 ;; esac; }
# not_killed NAME PID: stop and restart-kafka leave PID running.
not_killed() {
  local cmd
  for cmd in stop restart-kafka; do
    setup_6 "$2"
    run_stack "$d" "$cmd"
    [ "$rc" -ne 124 ] || problem "timed out"
    alive "$2" || problem "process $2 was killed"
    nothing_started
    verdict "6. kafka/pid names $1: $cmd does not kill it"
  done
  finish "$2"
}
sleep 300 &
bg+=($!)
not_killed "an unrelated process of ours (sleep 300)" "$!"
if command -v perl >/dev/null; then
  # A process that looks like another stack's broker: kafka.Kafka with a
  # server.properties that is not this stack's.
  perl -e 'sleep 300' kafka.Kafka "$work/c6/other/kafka/server.properties" &
  bg+=($!)
  not_killed "another stack's broker (kafka.Kafka, another server.properties)" "$!"
  # control: the pid file is read, and this stack's broker is stopped.
  perl -e 'sleep 300' kafka.Kafka "$d/kafka/server.properties" &
  p=$!
  bg+=("$p")
  setup_6 "$p"
  run_stack "$d" stop
  [ "$rc" -eq 0 ] || problem "exit $rc"
  ! alive "$p" || problem "process $p (this stack's broker, by its command line) is still running"
  nothing_started
  verdict "6. control: stop stops the process kafka/pid names when it is this stack's broker"
  finish "$p"
else
  skip "6. a process that looks like another stack's broker (needs perl)"
fi

# --- 7. a pointer file that cannot be trusted, or names what cannot be --------
d=$work/c7/stack
# pointer_case MODE: the private runtime directory, 0700, holding callscope/
# (0700) and a stack directory of ours, planted, that it points to.
pointer_case() {
  rm -rf "$run" "$work/c7"
  mkdir -m 700 "$run" "$pdir" "$work/c7"
  plant "$d"
  echo "$d" > "$pointer"
}
if [ -n "$nobody" ]; then
  setup_case() { pointer_case; chown -R nobody "$d"; }
  refuses_all "7a. a pointer naming a directory owned by nobody" - "$d is owned by uid $nobody, not $uid" "$d" "$run"
  setup_case() { pointer_case; chown nobody "$pointer"; }
  refuses_all "7b. a pointer owned by nobody" - "$pointer is owned by uid $nobody, not $uid" "$d" "$run"
else
  skip "7a/7b. a pointer owned by, or naming a directory owned by, another user (needs root and the user nobody)"
fi
setup_case() { pointer_case; chmod 664 "$pointer"; }
refuses_all "7c. a group-writable pointer (0664)" - "$pointer is writable by group or others (mode 664)" "$d" "$run"
setup_case() { pointer_case; chmod 646 "$pointer"; }
refuses_all "7d. a world-writable pointer (0646)" - "$pointer is writable by group or others (mode 646)" "$d" "$run"
setup_case() { pointer_case; mv "$pointer" "$work/c7/real-pointer"; ln -s "$work/c7/real-pointer" "$pointer"; }
refuses_all "7e. a pointer that is a symlink" - "$pointer is not a regular file (or is a symlink)" "$d" "$run"
setup_case() { pointer_case; chmod 777 "$pdir"; }
refuses_all "7f. a pointer in a world-writable callscope/ directory" - "$pdir is writable by group or others (mode 777)" "$d" "$run"
setup_case() { pointer_case; chmod 777 "$run"; }
refuses_all "7g. a pointer under a world-writable XDG_RUNTIME_DIR" - \
  "$run (above $pdir) is writable by others and not sticky (mode 777)" "$d" "$run"
setup_case() { pointer_case; ln -s "$d" "$work/c7/link"; echo "$work/c7/link" > "$pointer"; }
refuses_all "7h. a pointer naming a symlink to a stack directory of ours" - \
  "$work/c7/link is not a directory (or is a symlink)" "$d" "$run"
rm -rf "$run"; mkdir -m 700 "$run"

# --- 8. a world- or group-writable, non-sticky directory above ---------------
open=$work/c8/open
d=$open/stack
setup_case() { fresh "$work/c8"; mkdir -m 777 "$open"; plant "$d"; chmod 777 "$open"; }
refuses_all "8a. CALLSCOPE_STACK_DIR in a 0777 non-sticky directory" "$d" \
  "$open (above $d) is writable by others and not sticky (mode 777)" "$work/c8"
setup_case() { fresh "$work/c8"; mkdir -m 775 "$open"; plant "$d"; chmod 775 "$open"; }
refuses_all "8b. CALLSCOPE_STACK_DIR in a 0775 directory" "$d" \
  "$open (above $d) is writable by others and not sticky (mode 775)" "$work/c8"
d=$open/sub/stack
setup_case() { fresh "$work/c8"; mkdir -m 777 "$open"; mkdir -m 700 "$open/sub"; plant "$d"; chmod 777 "$open"; }
refuses_all "8c. CALLSCOPE_STACK_DIR two levels below a 0777 non-sticky directory" "$d" \
  "$open (above $d) is writable by others and not sticky (mode 777)" "$work/c8"
d=$open/new
fresh "$work/c8"; mkdir -m 777 "$open"; chmod 777 "$open"
before=$(snap "$work/c8")
run_stack "$d" start
refused "$open (above $d) is writable by others and not sticky (mode 777)"
unchanged "$work/c8" "$before"
nothing_started
verdict "8d. start with a new CALLSCOPE_STACK_DIR in a 0777 non-sticky directory refuses and does not create it"

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
