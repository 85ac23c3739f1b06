#!/usr/bin/env bash
# sign-digests.sh signs every image digest a jetbake build pushed, as the
# metadata file lists them (releases[].repository and .digest), with
# cosign: keyless (Sigstore's Fulcio and Rekor) with the runner's OIDC
# token when the job may ask for one (permissions: id-token: write sets
# ACTIONS_ID_TOKEN_REQUEST_URL and ACTIONS_ID_TOKEN_REQUEST_TOKEN), or with
# the key COSIGN_KEY names (a KMS URI, env://VARIABLE or a file; its
# password in COSIGN_PASSWORD), which wins when both are there. It signs the
# digest, never a tag, so a tag moved since cannot be signed by mistake.
# jetbake's action (action.yml, sign: true) runs it.
#
#   sign-digests.sh METADATA_FILE
set -euo pipefail

die() {
  echo "::error title=jetbake::sign: $*"
  exit "${code:-1}"
}

[ $# -eq 1 ] || code=2 die "usage: sign-digests.sh METADATA_FILE"
command -v jq >/dev/null || code=2 die "jq is not on PATH: GitHub's runners have it; install it on your own runner"
command -v cosign >/dev/null || code=2 die "cosign is not on PATH (the action installs it with sigstore/cosign-installer)"
[ -f "$1" ] || code=2 die "$1 does not exist: the build wrote no metadata file"

refs=$(jq -r '.releases[]? | select((.repository // "") != "" and (.digest // "") != "") | "\(.repository)@\(.digest)"' "$1") ||
  die "$1 is not a jetbake metadata file"
if [ -z "$refs" ]; then
  echo "sign: $1 lists no pushed digest: nothing to sign"
  exit 0
fi

flags=(--yes)
if [ -n "${COSIGN_KEY:-}" ]; then
  flags+=(--key "$COSIGN_KEY")
  how="with the key cosign-key names"
elif [ -n "${ACTIONS_ID_TOKEN_REQUEST_URL:-}" ] && [ -n "${ACTIONS_ID_TOKEN_REQUEST_TOKEN:-}" ]; then
  how="keyless, with the runner's OIDC token"
else
  code=2 die "the job has no OIDC token for keyless signing: grant it (permissions: id-token: write), or give cosign-key"
fi

while IFS= read -r ref; do
  echo "sign: $ref ($how)"
  cosign sign "${flags[@]}" "$ref"
done <<<"$refs"
