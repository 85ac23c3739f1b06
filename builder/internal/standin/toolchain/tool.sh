#!/bin/sh
# A tool a package of jetbake's stand-in apt index installs (pkg-config,
# cc, git, ...): it exists, as after apt-get install, and does nothing.
echo "$(basename "$0"): jetbake stand-in" >&2
exit 0
