#!/usr/bin/env bash
# deps-recipe.sh fetches what the test bed builds dockerfiles/Dockerfile-cross-base
# (the cross build base's recipe) from, for `make deps` (deps.sh runs it):
# for each Ubuntu release the recipe's rows name, a Debian release that
# stands in for it and that carries the same cross compiler:
#   recipe-jammy   Debian 12 (bookworm) for Ubuntu 22.04 (JetPack 6):
#                  gcc-11-aarch64-linux-gnu
#   recipe-noble   Debian 13 (trixie) for Ubuntu 24.04 (JetPack 7, SBSA):
#                  gcc-13-aarch64-linux-gnu
# Each folder holds:
#   root.tar.gz    a minimal Debian amd64 root file system (mmdebstrap
#                  --variant=apt: dpkg, apt, gpgv, a shell, coreutils), the
#                  stand-in of NVIDIA's nvidia/cuda devel image's Ubuntu
#   debs/          the .deb files the recipe's apt-get install line needs
#                  against that root's dpkg status, amd64, all and arm64
#                  (apt-get --download-only with the root's status and the
#                  architectures amd64 and arm64): Debian's real cross GCC
#                  and g++, libssl-dev:arm64 with libc6:arm64 (the same
#                  version as the root's libc6: Multi-Arch: same),
#                  ca-certificates, pkg-config, and their dependencies; not
#                  curl (the test bed's archive serves a stand-in curl,
#                  docs/testbed.md)
#   VERSIONS       the suite and the packages with their versions
# Debian's packages only (deps.sh installs mmdebstrap and apt-utils), through a private apt configuration (its own
# sources list built from the machine's Debian mirrors, lists, status and
# archives folders), so the machine's own apt state is left as it is. It is
# idempotent: a folder that is complete is only checked.
set -euo pipefail

cache=${JETBAKE_DEPS_DIR:-bin/deps}
mkdir -p "$cache"

for tool in mmdebstrap apt-ftparchive gpgv; do
  command -v "$tool" >/dev/null || { echo "deps: $tool is missing: run 'make deps' as root (deps.sh installs it)" >&2; exit 1; }
done

# debian_mirrors: the machine's Debian mirrors (one-line and deb822
# sources), one URI a line: the archive (…/debian) and the security archive.
debian_mirrors() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    awk '/^deb / { print ($2 ~ /^\[/) ? $3 : $2 } /^URIs:/ { print $2 }' "$f"
  done | grep -E '/debian(-security)?/?$' | sed 's:/$::' | sort -u
}

# recipe_fetch DIR SUITE PACKAGE...: make DIR's root and closure for SUITE.
recipe_fetch() {
  local dir=$1 suite=$2; shift 2
  local out=$cache/$dir work mirror main= security=
  [ -s "$out/root.tar.gz" ] && [ -e "$out/VERSIONS" ] && return 0
  while read -r mirror; do
    case $mirror in
    */debian-security) security=$mirror ;;
    */debian) main=$mirror ;;
    esac
  done < <(debian_mirrors)
  if [ -z "$main" ]; then
    echo "deps: no Debian mirror found in /etc/apt to fetch $suite's packages from" >&2; exit 1
  fi
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  {
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $main $suite main"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $main $suite-updates main"
    [ -z "$security" ] || echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $security $suite-security main"
  } >"$work/sources.list"
  echo "deps: making a minimal Debian $suite amd64 root (mmdebstrap --variant=apt) for the stand-in nvidia/cuda devel images"
  # No /dev in the tarball: a layer's device nodes are the runtime's business.
  mmdebstrap --quiet --variant=apt --architectures=amd64 --skip=output/dev --format=tar \
    "$suite" "$work/root.tar" "$work/sources.list" >/dev/null
  mkdir -p "$work/state/lists/partial" "$work/debs/partial" "$work/cache"
  tar -xOf "$work/root.tar" ./var/lib/dpkg/status >"$work/state/status"
  local opts=(-o APT::Sandbox::User=root -o APT::Architecture=amd64 -o APT::Architectures=amd64,arm64
    -o Dir::State::status="$work/state/status" -o Dir::State::Lists="$work/state/lists"
    -o Dir::Etc::SourceList="$work/sources.list" -o Dir::Etc::SourceParts=/nonexistent
    -o Dir::Cache="$work/cache" -o Dir::Cache::archives="$work/debs" -o Debug::NoLocking=1)
  echo "deps: downloading $* for $suite (amd64 and arm64) against that root's dpkg status"
  apt-get "${opts[@]}" update -qq
  apt-get "${opts[@]}" install -qq -y --download-only --no-install-recommends "$@" >/dev/null
  rm -rf "$out.tmp" && mkdir -p "$out.tmp/debs"
  mv "$work/debs/"*.deb "$out.tmp/debs/"
  gzip -n -c "$work/root.tar" >"$out.tmp/root.tar.gz"
  {
    echo "suite $suite"
    for deb in "$out.tmp/debs/"*.deb; do dpkg-deb -f "$deb" Package Architecture Version | paste -sd' '; done
  } >"$out.tmp/VERSIONS"
  rm -rf "$out"
  mv "$out.tmp" "$out"
  echo "deps: $out: root $(du -h "$out/root.tar.gz" | cut -f1), $(ls "$out/debs" | wc -l) packages, $(du -sh "$out/debs" | cut -f1)"
}

recipe_fetch recipe-jammy bookworm gcc-11-aarch64-linux-gnu g++-11-aarch64-linux-gnu libssl-dev:arm64 ca-certificates pkg-config
recipe_fetch recipe-noble trixie gcc-13-aarch64-linux-gnu g++-13-aarch64-linux-gnu libssl-dev:arm64 ca-certificates pkg-config
