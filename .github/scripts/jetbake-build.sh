#!/usr/bin/env bash
# jetbake-build.sh is the build step of jetbake's action (action.yml): it
# runs `jetbake build` with the action's inputs, which come as variables:
#
#   MATRIX, PROVENANCE, METADATA   -f, --provenance, --metadata-file
#   PUSH                           true: --push
#   BUILD_ARGS                     more arguments, split on white space
#   SECRETS                        one ID=VALUE a line: each value goes to a
#                                  file only this user can read, handed over
#                                  as --secret id=ID,src=FILE and removed at
#                                  the end (as docker/build-push-action's secrets)
#   SECRET_ENVS                    one ID=VARIABLE a line: --secret id=ID,env=VARIABLE
#   SECRET_FILES                   one ID=PATH a line: --secret id=ID,src=PATH
#   GITHUB_CACHE                   true: the runner's GitHub Actions cache,
#                                  which the action's github-script step wrote
#                                  to $RUNNER_TEMP/jetbake-github-runtime (only
#                                  actions see ACTIONS_RUNTIME_TOKEN), goes to
#                                  Dockerfile-jetson's sccache as the secrets
#                                  actions_results_url and actions_runtime_token,
#                                  as TEI's pipeline hands it, and to jetbake's
#                                  environment for --cache-to/--cache-from type=gha
#
# It writes metadata-file=METADATA to $GITHUB_OUTPUT. It never prints a
# secret's value: a line it refuses is named by its number.
set -euo pipefail

die() {
  echo "::error title=jetbake::$*"
  exit 2
}

args=(build -f "$MATRIX" --provenance "$PROVENANCE" --metadata-file "$METADATA" --progress plain --check-lock)
if [ "${PUSH:-false}" = true ]; then args+=(--push); fi

secrets_dir=$(mktemp -d "${RUNNER_TEMP:-/tmp}/jetbake-secrets.XXXXXX")
runtime_dir=${RUNNER_TEMP:-/tmp}/jetbake-github-runtime
trap 'rm -rf "$secrets_dir" "$runtime_dir"' EXIT
chmod 700 "$secrets_dir"

# each_line INPUT NAME FUNCTION: FUNCTION ID REST for every line of INPUT
# that is not empty, which must be ID=REST; NAME names the input in errors.
each_line() {
  local input=$1 name=$2 fn=$3 n=0 line id rest
  while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    line=${line%$'\r'}
    [ -n "${line//[[:space:]]/}" ] || continue
    id=${line%%=*}
    rest=${line#*=}
    id=${id#"${id%%[![:space:]]*}"}
    id=${id%"${id##*[![:space:]]}"}
    if [ "$id" = "$line" ] || [ -z "$id" ]; then
      die "$name: line $n is not ID=... (the secret's id, then =)"
    fi
    if ! [[ $id =~ ^[A-Za-z0-9_.-]+$ ]]; then
      die "$name: line $n: the id '$id' may hold only letters, digits, '_', '.' and '-'"
    fi
    "$fn" "$id" "$rest" "$name" "$n"
  done <<<"$input"
}

from_value() {
  local file=$secrets_dir/$1
  (umask 077 && printf '%s' "$2" >"$file")
  args+=(--secret "id=$1,src=$file")
}
from_env() {
  [[ $2 =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die "$3: line $4: '$2' is not the name of a variable"
  [ -n "${!2+set}" ] || die "$3: line $4: the variable $2 is not set in the step's environment"
  args+=(--secret "id=$1,env=$2")
}
from_file() {
  [ -f "$2" ] || die "$3: line $4: $2 is not a file"
  args+=(--secret "id=$1,src=$2")
}

each_line "${SECRETS:-}" secrets from_value
each_line "${SECRET_ENVS:-}" secret-envs from_env
each_line "${SECRET_FILES:-}" secret-files from_file

if [ "${GITHUB_CACHE:-false}" = true ]; then
  for v in ACTIONS_RESULTS_URL ACTIONS_RUNTIME_TOKEN; do
    [ -s "$runtime_dir/$v" ] || die "github-cache: the runner gave no $v to the action's github-script step: the GitHub Actions cache is not there (a GitHub Enterprise Server without it?)"
  done
  for v in ACTIONS_RESULTS_URL ACTIONS_RUNTIME_TOKEN ACTIONS_CACHE_URL ACTIONS_CACHE_SERVICE_V2; do
    if [ -s "$runtime_dir/$v" ]; then
      export "$v=$(cat "$runtime_dir/$v")"
    fi
  done
  args+=(--secret id=actions_results_url,env=ACTIONS_RESULTS_URL --secret id=actions_runtime_token,env=ACTIONS_RUNTIME_TOKEN)
fi

# shellcheck disable=SC2206 # word splitting of the extra arguments is intended
args+=(${BUILD_ARGS:-})
jetbake "${args[@]}"
echo "metadata-file=$METADATA" >>"${GITHUB_OUTPUT:-/dev/null}"
