#!/bin/sh
# rustc of jetbake's stand-in build images: only --version; the stand-in
# cargo compiles nothing.
case ${1:-} in
--version | -V | -vV) echo "rustc 1.92.0 (jetbake stand-in)" ;;
*) echo "error: the stand-in rustc only answers --version" >&2; exit 1 ;;
esac
