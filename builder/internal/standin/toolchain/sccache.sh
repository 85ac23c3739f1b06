#!/bin/sh
# sccache of jetbake's stand-in build images, installed by `cargo install
# sccache`; cargo calls it as RUSTC_WRAPPER, `sccache -s` prints its stats.
case ${1:-} in
-s | --show-stats) echo "Compile requests                      0 (jetbake stand-in)" ;;
--version | -V) echo "sccache 0.8.2 (jetbake stand-in)" ;;
*) exec "$@" ;;
esac
