#!/usr/bin/env bash
# install-jetbake.sh installs a jetbake release binary: it downloads the
# binary for this Linux machine and the release's SHA256SUMS, checks the
# binary's SHA-256 against it, checks that the binary reports the version
# asked for, and only then puts it at DIR/jetbake. Nothing is left in DIR
# when a step fails. jetbake's action (action.yml, install: release) runs it.
#
#   install-jetbake.sh VERSION DIR      VERSION: a release tag such as v0.1.0, or latest
#
# JETBAKE_RELEASES_URL is where the releases are (GitHub's layout: assets at
# URL/download/TAG/NAME, the newest release at URL/latest/download/NAME);
# it must be https, or http on 127.0.0.1 or localhost for tests.
#
# SHA256SUMS comes from the same release as the binary: the check catches a
# corrupted or swapped download. That the release itself is jetbake's is
# what the build provenance proves: gh attestation verify FILE --repo jetbake/jetbake.
set -euo pipefail

die() {
  echo "install-jetbake: $*" >&2
  exit "${code:-1}"
}

if [ $# -ne 2 ] || [ -z "$1" ] || [ -z "$2" ]; then
  code=2 die "usage: install-jetbake.sh VERSION DIR (VERSION: a release tag such as v0.1.0, or latest)"
fi
version=$1
dir=$2
base=${JETBAKE_RELEASES_URL:-https://github.com/jetbake/jetbake/releases}
base=${base%/}

if [ "$version" = latest ]; then
  url=$base/latest/download
elif [[ $version =~ ^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$ ]]; then
  url=$base/download/$version
else
  code=2 die "version '$version' is not a release tag such as v0.1.0, or latest: a branch or commit installs with go install (the action's install: go)"
fi

case "$base" in
  https://*) proto='=https' ;;
  http://127.0.0.1:* | http://127.0.0.1/* | http://localhost:* | http://localhost/*) proto='=http' ;;
  *) code=2 die "JETBAKE_RELEASES_URL '$base' is not an https URL (http only on 127.0.0.1 or localhost)" ;;
esac

os=$(uname -s)
[ "$os" = Linux ] || die "jetbake's release binaries are for Linux, this machine runs $os: install with go install (the action's install: go)"
case "$(uname -m)" in
  x86_64 | amd64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) die "there is no jetbake release binary for $(uname -m) (only amd64 and arm64): install with go install (the action's install: go)" ;;
esac
asset=jetbake-linux-$arch

for tool in curl sha256sum; do
  command -v "$tool" >/dev/null || die "$tool is missing: install it (apt-get install curl coreutils)"
done

tmp=$(mktemp -d)
partial=
trap 'rm -rf "$tmp" ${partial:+"$partial"}' EXIT

# fetch downloads one asset of the release, following GitHub's redirects
# only to the same protocol.
fetch() {
  local status
  status=$(curl --silent --show-error --location --retry 3 --proto "$proto" --proto-redir "$proto" \
    --output "$tmp/$1" --write-out '%{http_code}' "$url/$1") || die "could not download $url/$1"
  case "$status" in
    200) ;;
    404) die "release $version has no $1 ($url/$1 answers 404): name a release of https://github.com/jetbake/jetbake/releases, or install with go install (the action's install: go)" ;;
    *) die "downloading $url/$1 answered HTTP $status" ;;
  esac
}

fetch SHA256SUMS
fetch "$asset"

# The one line for the asset, in sha256sum's format: 64 hex digits, two
# spaces (or a space and '*'), the name.
line=$(grep -E "^[0-9a-f]{64} [ *]$asset\$" "$tmp/SHA256SUMS" || true)
[ -n "$line" ] || die "SHA256SUMS of release $version has no line for $asset: nothing was installed"
[ "$(printf '%s\n' "$line" | wc -l)" -eq 1 ] || die "SHA256SUMS of release $version has more than one line for $asset: nothing was installed"
if ! (cd "$tmp" && printf '%s\n' "$line" | sha256sum --check --strict --status); then
  die "$asset of release $version does not match its SHA-256 in SHA256SUMS (want ${line%% *}, got $(sha256sum "$tmp/$asset" | cut -d' ' -f1)): the download is corrupt or was altered; nothing was installed"
fi

chmod 0755 "$tmp/$asset"
reported=$("$tmp/$asset" version 2>&1) || die "$asset of release $version does not run here: $reported"
case "$version:$reported" in
  latest:"jetbake v"*) ;;
  "$version:jetbake $version" | "$version:jetbake $version "*) ;;
  *) die "$asset of release $version reports '$reported', not jetbake $version: nothing was installed" ;;
esac

# A copy beside the destination, then a rename: DIR/jetbake is either the
# old file or the whole new one.
mkdir -p "$dir"
partial=$dir/.jetbake.$$
mv -f "$tmp/$asset" "$partial"
mv -f "$partial" "$dir/jetbake"
partial=
echo "install-jetbake: installed $reported at $dir/jetbake (SHA-256 ${line%% *} checked against SHA256SUMS)"
