#!/usr/bin/env bash
# Tests scripts/check-setup against the real build tree and this machine's
# packages: the repository's scripts/setup passes, and a copy of it missing a
# library package (libqt6opengl6-dev) or a program's package (kcat) fails,
# naming what is missing.
#   tests/setup/check_setup_test.sh BUILD_DIR REPO_ROOT
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR REPO_ROOT" >&2; exit 2; }
build_dir=$1
root=$2
check=$root/scripts/check-setup
setup=$root/scripts/setup

work=$(mktemp -d "${TMPDIR:-/tmp}/check-setup-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

passed=0 failed=0
pass() { echo "PASS: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: $1"; [ -z "${2:-}" ] || sed 's/^/  | /' <<<"$2"; failed=$((failed + 1)); }

# run SETUP_FILE: sets $out and $rc
run() {
  rc=0
  out=$("$check" "$build_dir" "$1" 2>&1) || rc=$?
}

# A copy of scripts/setup without one package name (as a whole word).
without() {
  local copy=$work/setup-without-$1
  sed -E "s/(^|[[:space:]])$1([[:space:]]|\$)/\\1\\2/" "$setup" > "$copy"
  if grep -Eq "(^|[[:space:]])$1([[:space:]]|\$)" "$copy"; then
    echo "could not remove $1 from the copy of $setup" >&2
    return 1
  fi
  echo "$copy"
}

# 1. The repository's scripts/setup covers this build and the programs.
run "$setup"
if [ "$rc" -eq 0 ] && grep -q '^check-setup: .* packages and .* programs map to packages scripts/setup installs$' <<<"$out"; then
  pass "scripts/setup covers the build and the programs"
else
  fail "scripts/setup covers the build and the programs (exit $rc)" "$out"
fi

# 2. and 3.: without a library package, then without a program's package.
for pkg in libqt6opengl6-dev kcat; do
  if ! copy=$(without "$pkg"); then
    fail "a setup without $pkg fails naming it (the copy still names it)"
    continue
  fi
  run "$copy"
  if [ "$rc" -eq 1 ] && grep -q "the Debian package $pkg[ ,].*which scripts/setup does not install by name" <<<"$out"; then
    pass "a setup without $pkg fails naming it"
  else
    fail "a setup without $pkg fails naming it (exit $rc)" "$out"
  fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
