#!/usr/bin/env bash
# deps.sh installs what the end-to-end tests and `make demo` need on a Debian
# machine, as root: runc, QEMU user emulation with the aarch64 binfmt handler
# registered, Debian's arm64 busybox-static for the stand-in base images, and
# Debian's docker.io (dockerd and the docker client) for the Docker-engine tests,
# which start their own dockerd, and curl for the test of the action's
# install script.
# It is idempotent: a second run only checks. BuildKit is built by the Makefile.
set -euo pipefail

cache=${JETBAKE_DEPS_DIR:-bin/deps}
mkdir -p "$cache"

need_apt=()
command -v runc >/dev/null || need_apt+=(runc)
[ -e /usr/lib/binfmt.d/qemu-aarch64.conf ] || need_apt+=(qemu-user-static)
command -v dockerd >/dev/null || need_apt+=(docker.io)
command -v curl >/dev/null || need_apt+=(curl)
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

# Debian's arm64 busybox-static, unpacked: the stand-in base images are made from it.
if [ ! -x "$cache/busybox-arm64/bin/busybox" ]; then
  echo "deps: fetching Debian's arm64 busybox-static"
  lists=$(mktemp -d)
  trap 'rm -rf "$lists"' EXIT
  mkdir -p "$lists/partial"
  opts=(-o APT::Sandbox::User=root -o APT::Architecture=arm64 -o APT::Architectures=arm64 -o Dir::State::Lists="$lists")
  apt-get "${opts[@]}" update -qq
  (cd "$cache" && rm -f busybox-static_*.deb && apt-get "${opts[@]}" download busybox-static -qq)
  rm -rf "$cache/busybox-arm64.tmp"
  dpkg -x "$cache"/busybox-static_*_arm64.deb "$cache/busybox-arm64.tmp"
  mv "$cache/busybox-arm64.tmp" "$cache/busybox-arm64"
fi
echo "deps: runc $(runc --version | head -1 | awk '{print $3}'), dockerd $(dockerd --version | awk '{print $3}' | tr -d ,), qemu-aarch64 registered, busybox at $cache/busybox-arm64/bin/busybox"
