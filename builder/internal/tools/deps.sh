#!/usr/bin/env bash
# deps.sh installs what the end-to-end tests and `make demo` need on a Debian
# machine, as root: runc, QEMU user emulation with the aarch64 binfmt handler
# registered, Debian's arm64 busybox-static for the stand-in base images,
# Debian's docker.io (dockerd and the docker client) for the Docker-engine
# tests, which start their own dockerd, gcc with libc6-dev for cgo (`go test
# -race`, the stand-in router and libcuda that the entrypoint tests build),
# Debian's aarch64 cross compiler for the ELF stand-ins (libcuda, the
# libraries a base provides), Debian's arm64 glibc (libc6, libc-bin) for the
# stand-in bases' dynamic loader, Debian's arm64 Python 3 and pip for the
# stand-in PyTorch bases, curl for the test of the action's install
# script, OpenSSH's client (ssh-agent, ssh-add, ssh-keygen) for the test of
# --ssh, and git, whose `git daemon` and `git http-backend` serve the router's
# source on 127.0.0.1 for the tests of git contexts (BuildKit's git source
# runs the host's git too).
# It is idempotent: a second run only checks. BuildKit is built by the Makefile.
set -euo pipefail

cache=${JETBAKE_DEPS_DIR:-bin/deps}
mkdir -p "$cache"

need_apt=()
command -v runc >/dev/null || need_apt+=(runc)
[ -e /usr/lib/binfmt.d/qemu-aarch64.conf ] || need_apt+=(qemu-user-static)
command -v dockerd >/dev/null || need_apt+=(docker.io)
command -v gcc >/dev/null || need_apt+=(gcc)
# gcc alone (without its recommends) compiles no C program: libc6-dev has the
# headers and the crt files cgo, the race detector and the stand-in libcuda need.
printf '#include <signal.h>\n#include <stdio.h>\n#include <stdlib.h>\nint main(void) { return 0; }\n' |
  gcc -x c -o /dev/null - >/dev/null 2>&1 || need_apt+=(libc6-dev)
command -v aarch64-linux-gnu-gcc >/dev/null || need_apt+=(gcc-aarch64-linux-gnu)
[ -e /usr/aarch64-linux-gnu/lib/libc.so ] || need_apt+=(libc6-dev-arm64-cross)
command -v curl >/dev/null || need_apt+=(curl)
command -v jq >/dev/null || need_apt+=(jq)
{ command -v ssh-agent && command -v ssh-add && command -v ssh-keygen; } >/dev/null || need_apt+=(openssh-client)
{ command -v git && [ -x "$(git --exec-path)/git-daemon" ] && [ -x "$(git --exec-path)/git-http-backend" ]; } >/dev/null 2>&1 || need_apt+=(git)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "deps: missing ${need_apt[*]}; run 'make deps' as root or install them with apt-get" >&2
    exit 1
  fi
  echo "deps: installing ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# Register the aarch64 handler (nothing does it without systemd). The F flag
# in Debian's file opens the interpreter now, so containers need nothing else.
binfmt=/proc/sys/fs/binfmt_misc
if [ ! -e "$binfmt/register" ]; then
  mount -t binfmt_misc binfmt_misc "$binfmt"
fi
if [ ! -e "$binfmt/qemu-aarch64" ]; then
  echo "deps: registering the qemu-aarch64 binfmt handler"
  cat /usr/lib/binfmt.d/qemu-aarch64.conf > "$binfmt/register"
fi

# Debian's arm64 packages, unpacked: the stand-in base images are made from
# busybox-static, libc6 (the dynamic loader and libc) and libc-bin (ldconfig).
arm64_lists=
arm64_fetch() { # arm64_fetch DIR PACKAGE...: download and unpack into $cache/DIR
  local dir=$1; shift
  local opts=(-o APT::Sandbox::User=root -o APT::Architecture=arm64 -o APT::Architectures=arm64)
  if [ -z "$arm64_lists" ]; then
    arm64_lists=$(mktemp -d)
    trap 'rm -rf "$arm64_lists"' EXIT
    mkdir -p "$arm64_lists/partial"
    apt-get "${opts[@]}" -o Dir::State::Lists="$arm64_lists" update -qq
  fi
  local debs
  debs=$(mktemp -d)
  (cd "$debs" && apt-get "${opts[@]}" -o Dir::State::Lists="$arm64_lists" download "$@" -qq)
  rm -rf "$cache/$dir.tmp"
  for deb in "$debs"/*.deb; do dpkg -x "$deb" "$cache/$dir.tmp"; done
  rm -rf "$debs" "$cache/$dir"
  mv "$cache/$dir.tmp" "$cache/$dir"
}
if [ ! -x "$cache/busybox-arm64/bin/busybox" ]; then
  echo "deps: fetching Debian's arm64 busybox-static"
  arm64_fetch busybox-arm64 busybox-static
fi
if [ ! -e "$cache/glibc-arm64/lib/aarch64-linux-gnu/libc.so.6" ] || [ ! -x "$cache/glibc-arm64/sbin/ldconfig" ]; then
  echo "deps: fetching Debian's arm64 libc6 and libc-bin"
  arm64_fetch glibc-arm64 libc6 libc-bin
fi
# Debian's arm64 Python 3 and pip for the stand-in PyTorch bases, the
# smallest set with which `python3 -m venv --without-pip` and pip run on
# wheels (apt-cache depends, with the arm64 options above, lists more):
#   python3.11-minimal, libpython3.11-minimal  the interpreter and its core
#   libpython3.11-stdlib    the rest of the standard library pip imports
#                           (email, html, venv, ctypes, ...)
#   python3-pip, python3-distutils  Debian's pip 23.0.1 with its vendored
#                           libraries, and distutils, which Debian's pip reads
#   libexpat1, zlib1g, libssl3, libffi8, libbz2-1.0, liblzma5  what the
#                           interpreter's modules link (pyexpat, zlib,
#                           hashlib and ssl, ctypes, bz2, lzma)
# Left out: setuptools and wheel (only sdists need them: the index serves
# wheels), ca-certificates (the index is plain HTTP on 127.0.0.1), readline,
# ncurses, sqlite, gdbm and the tirpc/nsl family (no module pip uses).
if [ ! -x "$cache/python3-arm64/usr/bin/python3.11" ] || [ ! -d "$cache/python3-arm64/usr/lib/python3/dist-packages/pip" ]; then
  echo "deps: fetching Debian's arm64 Python 3 and pip"
  arm64_fetch python3-arm64 python3.11-minimal libpython3.11-minimal libpython3.11-stdlib python3-pip python3-distutils \
    libexpat1 zlib1g libssl3 libffi8 libbz2-1.0 liblzma5
fi
echo "deps: $(git --version), runc $(runc --version | head -1 | awk '{print $3}'), dockerd $(dockerd --version | awk '{print $3}' | tr -d ,), qemu-aarch64 registered, busybox at $cache/busybox-arm64/bin/busybox, arm64 glibc at $cache/glibc-arm64, arm64 Python at $cache/python3-arm64, $(aarch64-linux-gnu-gcc -dumpfullversion 2>/dev/null | sed "s/^/aarch64-linux-gnu-gcc /")"
