#!/usr/bin/env bash
# The installed layout and the Debian package, as a user would get them:
#   install_test.sh BUILD_DIR VERSION
# 1. `cmake --install` into a temporary prefix lays out a desktop application
#    (binary, desktop entry, icon, metainfo, man page, bash completion, sample
#    config and schema), and the desktop entry and metainfo validate;
# 2. the bash completion completes subcommands, options and kinds;
# 3. `cpack` makes a .deb whose dependencies were computed from the binary, and
#    the binary unpacked from it (dpkg-deb -x) runs --version and --help.
set -uo pipefail
build=$(cd "$1" && pwd)
version=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { echo "PASS: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: $1"; failed=$((failed + 1)); }
check() { # check "what" command...
  local what=$1; shift
  if "$@" >"$work/out" 2>&1; then ok "$what"; else fail "$what"; sed 's/^/    /' "$work/out"; fi
}

app=io.github.callscope.Callscope
prefix=$work/prefix
check "cmake --install lays the tree out" cmake --install "$build" --prefix "$prefix"
for f in bin/callscope share/applications/$app.desktop \
         share/icons/hicolor/scalable/apps/$app.svg share/metainfo/$app.metainfo.xml \
         share/callscope/callscope.toml share/callscope/schema.sql \
         share/callscope/examples/stripe/view.sql share/callscope/examples/powertools/view.sql \
         share/man/man1/callscope.1 share/bash-completion/completions/callscope; do
  check "installs $f" test -s "$prefix/$f"
done
check "the desktop entry validates" desktop-file-validate "$prefix/share/applications/$app.desktop"
check "the metainfo validates" appstreamcli validate --no-net "$prefix/share/metainfo/$app.metainfo.xml"
check "the desktop entry names the installed icon" \
  grep -qx "Icon=$app" "$prefix/share/applications/$app.desktop"

man=$prefix/share/man/man1/callscope.1
for sub in gui check scan watch inspect report demo sim; do
  check "the man page describes $sub" grep -q "^  *$sub\b\|callscope $sub\|^$sub\b" "$man"
done
check "the man page documents --since and the exit status" \
  sh -c "grep -q 'since' '$man' && grep -q 'EXIT STATUS' '$man'"

complete_words() { # complete_words WORD... : what bash completes for the last word
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _callscope 2>/dev/null
           printf "%s\n" "${COMPREPLY[@]}"' sh "$prefix/share/bash-completion/completions/callscope" "$@"
}
check "completion: subcommands" sh -c "[ \"\$(echo \$1)\" = 'scan sim' ]" sh "$(complete_words callscope s)"
check "completion: a subcommand's options" \
  sh -c "echo \"\$1\" | grep -qx -- --include-payloads" sh "$(complete_words callscope report --inc)"
check "completion: kinds after --kind" \
  sh -c "echo \"\$1\" | grep -qx key_rotation" sh "$(complete_words callscope report --kind key_)"

cd "$build" || exit 1
if cpack -G DEB -B "$work/pkg" >"$work/cpack.log" 2>&1; then ok "cpack makes a .deb"; else
  fail "cpack makes a .deb"; sed 's/^/    /' "$work/cpack.log"; fi
deb=$(ls "$work"/pkg/callscope_"$version"_*.deb 2>/dev/null | head -1)
check "the .deb is named callscope_${version}_ARCH.deb" test -n "$deb"
if [ -n "$deb" ]; then
  depends=$(dpkg-deb -f "$deb" Depends)
  echo "    Depends: $depends"
  for lib in libqt6widgets6 libpqxx librdkafka1 libc6 qt6-qpa-plugins; do
    check "the .deb depends on $lib" sh -c "echo \"\$1\" | grep -q \"\$2\"" sh "$depends" "$lib"
  done
  root=$work/root
  check "dpkg-deb -x unpacks it" dpkg-deb -x "$deb" "$root"
  check "the unpacked binary prints its version" \
    sh -c "[ \"\$('$root/usr/bin/callscope' --version)\" = 'callscope $version' ]"
  check "the unpacked binary prints its help" \
    sh -c "'$root/usr/bin/callscope' --help | grep -q '^  scan '"
  check "the .deb carries the desktop entry" test -s "$root/usr/share/applications/$app.desktop"
  check "the .deb's man page is gzipped (Debian policy) and reads" \
    sh -c "gzip -dc '$root/usr/share/man/man1/callscope.1.gz' | grep -q 'EXIT STATUS'"
  check "the .deb lists the gzipped man page in its md5sums" \
    sh -c "dpkg-deb -e '$deb' '$work/control' && grep -q 'usr/share/man/man1/callscope.1.gz' '$work/control/md5sums'"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
