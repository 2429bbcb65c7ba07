#!/usr/bin/env bash
# The Debian packages (debian/): dpkg-buildpackage -us -uc on a copy of the
# tree builds memtrace and memtrace-fs, lintian finds no error or warning
# (debian/source/lintian-overrides explains each override), and dpkg
# installs both into a throwaway root, where memtrace --version and
# memtrace-fs --help run (chroot), the manual pages, completion, unit and
# settings file are in place, and a purge removes them again.
#
# The throwaway root holds the host's own files of every package the two
# need (their Depends, recursively, plus dash for maintainer scripts; see
# dist/tools/host_closure.py) and a dpkg database naming exactly those;
# dpkg --root checks the dependencies and runs the maintainer scripts
# in it.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
[ "$(id -u)" = 0 ] || skip "needs root (chroot into the throwaway root)"
for t in dpkg-buildpackage dh lintian; do
    command -v $t >/dev/null || skip "$t missing (tools/install-deps.sh installs dpkg-dev, debhelper, lintian)"
done
cd "$MT_TMP" || exit 1
version=$(cat "$MT_ROOT/VERSION")
src=$MT_TMP/pkg/memtrace-$version
mkdir -p "$src"
# The tree as it is (committed or not), without build products.
if git -C "$MT_ROOT" rev-parse --git-dir >/dev/null 2>&1; then
    git -C "$MT_ROOT" ls-files -co --exclude-standard -z | tar -C "$MT_ROOT" --null -T - -cf - | tar -C "$src" -xf -
else
    tar -C "$MT_ROOT" --exclude='./build' --exclude='./build-*' -cf - . | tar -C "$src" -xf -
fi
[ -f "$src/debian/control" ] || fail "no debian/ copied"

# The version of the package, of the programs and of NEWS agree.
changelog_version=$(cd "$src" && dpkg-parsechangelog -S Version)
[ "$changelog_version" = "$version" ] || fail "debian/changelog says $changelog_version, VERSION $version"
news=$(grep -m1 -oE '^memtrace [0-9][^ ]*' "$MT_ROOT/NEWS" | cut -d' ' -f2)
[ "$news" = "$version" ] || fail "NEWS begins with '$news', VERSION says $version"

start=$SECONDS
(cd "$src" && DEB_BUILD_OPTIONS=parallel=2 dpkg-buildpackage -us -uc) >build.log 2>&1 ||
    { tail -n 40 build.log; fail "dpkg-buildpackage failed"; }
echo "dpkg-buildpackage -us -uc: $((SECONDS - start)) s"
arch=$(dpkg --print-architecture)
changes=$MT_TMP/pkg/memtrace_${version}_$arch.changes
debs=("$MT_TMP/pkg/memtrace_${version}_$arch.deb" "$MT_TMP/pkg/memtrace-fs_${version}_$arch.deb")
for d in "$changes" "${debs[@]}"; do [ -f "$d" ] || fail "not built: $d"; done

start=$SECONDS
lintian --fail-on error,warning \
    "$changes" >lintian.log 2>&1; rc=$?
grep -v '^running with root' lintian.log
[ $rc = 0 ] || fail "lintian: errors or warnings (above)"
echo "lintian: no error or warning ($((SECONDS - start)) s; $(grep -c '^[IP]:' lintian.log) info tags)"

# --- the throwaway root
root=$MT_TMP/root
mkdir -p "$root/usr/bin" "$root/usr/sbin" "$root/usr/lib" "$root/usr/lib64" \
    "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers" \
    "$root/etc" "$root/tmp"
for d in bin sbin lib lib64; do ln -s usr/$d "$root/$d"; done
: >"$root/var/lib/dpkg/status"
: >"$root/var/lib/dpkg/available"
pkgs=$(python3 "$MT_ROOT/dist/tools/host_closure.py" "${debs[@]}") || fail "dependencies: $pkgs"
# --key loads OpenSSL with dlopen, which dpkg-shlibdeps cannot see: both
# packages recommend libssl3, and the root gets it as apt would (it
# installs recommendations).
for d in "${debs[@]}"; do
    dpkg-deb -f "$d" Recommends | tr ',' '\n' | grep -qx ' *libssl3' ||
        fail "$(basename "$d") does not recommend libssl3 (--key loads it with dlopen)"
done
grep -qE '^libssl3(:|$)' <<<"$pkgs" || pkgs="$pkgs
libssl3:$(dpkg-deb -f "${debs[0]}" Architecture)"
for p in $pkgs; do
    dpkg-query -L "$p" | while read -r f; do
        [ -L "$f" ] || [ -f "$f" ] && printf '%s\0' "${f#/}"
    done >files.lst
    tar -C / --null --no-recursion -T files.lst -cf - 2>/dev/null |
        tar -C "$root" --keep-directory-symlink -xf - || fail "copying $p"
    { dpkg-query -s "$p"; echo; } >>"$root/var/lib/dpkg/status"
    dpkg-query -L "$p" >"$root/var/lib/dpkg/info/$p.list"
done
[ -x "$root/bin/sh" ] || ln -s dash "$root/usr/bin/sh"
echo "throwaway root: $(wc -w <<<"$pkgs") packages from the host ($(du -sm "$root" | cut -f1) MiB)"

dpkg --root="$root" --log="$MT_TMP/dpkg.log" -i "${debs[@]}" >install.log 2>&1 ||
    { cat install.log; fail "dpkg -i into the throwaway root failed"; }
st=$(dpkg --root="$root" -s memtrace memtrace-fs 2>&1 | grep -c '^Status: install ok installed')
[ "$st" = 2 ] || fail "dpkg does not list both packages as installed"

v=$(chroot "$root" /usr/bin/memtrace --version) || fail "memtrace --version failed in the root"
echo "$v" | sed 's/^/    /'
[ "$(head -n 1 <<<"$v")" = "memtrace $version ($(uname -m))" ] || fail "memtrace --version: $v"
grep -qE '^engines: ptrace(, agent)?$' <<<"$v" || fail "memtrace --version names no engine"
head -c 32 /dev/urandom >"$root/tmp/k" && chmod 600 "$root/tmp/k"
k=$(chroot "$root" /usr/bin/memtrace --key /tmp/k -c 127.0.0.1:1 /bin/true 2>&1)
grep -q "connecting to 127.0.0.1:1" <<<"$k" || fail "memtrace --key in the root: $k"
h=$(chroot "$root" /usr/bin/memtrace-fs --help) || fail "memtrace-fs --help failed in the root"
grep -q '^usage: memtrace-fs' <<<"$h" || fail "memtrace-fs --help: $h"
chroot "$root" /usr/bin/memtrace-fs --version | head -n 1 | grep -qx "memtrace-fs $version (protocol [0-9]*)" ||
    fail "memtrace-fs --version"
for f in usr/share/man/man1/memtrace.1.gz usr/share/man/man1/memtrace-fs.1.gz \
         usr/share/bash-completion/completions/memtrace usr/share/bash-completion/completions/memtrace-fs \
         lib/systemd/system/memtrace-fs.service etc/default/memtrace-fs \
         usr/share/doc/memtrace-fs/examples/memtrace-fs.service; do
    [ -f "$root/$f" ] || fail "not installed: /$f"
done
grep -qx 'ExecStart=/usr/bin/memtrace-fs $MEMTRACE_FS_OPTIONS $MEMTRACE_FS_SYSROOTS' \
    "$root/lib/systemd/system/memtrace-fs.service" || fail "the unit does not start /usr/bin/memtrace-fs"
grep -qx /etc/default/memtrace-fs "$root/var/lib/dpkg/info/memtrace-fs.conffiles" ||
    fail "/etc/default/memtrace-fs is not a conffile"
# Not enabled at install: no sysroot is named yet.
[ -z "$(find "$root/etc/systemd" -name 'memtrace-fs*' 2>/dev/null)" ] || fail "the service was enabled at install"

dpkg --root="$root" --log="$MT_TMP/dpkg.log" --purge memtrace memtrace-fs >purge.log 2>&1 ||
    { cat purge.log; fail "dpkg --purge failed"; }
for f in usr/bin/memtrace usr/bin/memtrace-fs etc/default/memtrace-fs lib/systemd/system/memtrace-fs.service; do
    [ ! -e "$root/$f" ] || fail "/$f is left after the purge"
done
echo "installed, ran, purged in the throwaway root"
