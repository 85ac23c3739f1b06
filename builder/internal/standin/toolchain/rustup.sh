#!/bin/sh
# rustup of jetbake's stand-in build images: `toolchain install [NAME...]`
# (no name: the channel of rust-toolchain.toml in this folder or a parent),
# `default NAME`, `show`, `--version`. Toolchains are folders under
# $RUSTUP_HOME/toolchains, which the stand-in cargo checks for.
set -u
rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
triple=aarch64-unknown-linux-gnu

# toolchain_file: the channel of the nearest rust-toolchain.toml.
toolchain_file() {
	d=$(pwd)
	while :; do
		for f in "$d/rust-toolchain.toml" "$d/rust-toolchain"; do
			if [ -f "$f" ]; then
				sed -n 's/^[[:space:]]*channel[[:space:]]*=[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | head -n 1
				return 0
			fi
		done
		[ "$d" = / ] && return 0
		d=$(dirname "$d")
	done
}

case ${1:-} in
--version | -V) echo "rustup 1.28.2 (jetbake stand-in)" ;;
toolchain)
	[ "${2:-}" = install ] || { echo "error: unsupported: rustup toolchain ${2:-}" >&2; exit 1; }
	shift 2
	names=
	for a in "$@"; do case $a in -*) ;; *) names="$names $a" ;; esac; done
	if [ -z "$names" ]; then
		names=$(toolchain_file)
		if [ -z "$names" ]; then
			echo "error: no toolchain named and no rust-toolchain.toml found" >&2
			exit 1
		fi
	fi
	for n in $names; do
		echo "info: syncing channel updates for '$n-$triple'"
		mkdir -p "$rustup_home/toolchains/$n-$triple/bin"
		echo "info: installing component 'cargo'"
		echo "info: installing component 'rustc'"
		echo ""
		echo "  $n-$triple installed - rustc $n (jetbake stand-in)"
	done
	;;
default)
	mkdir -p "$rustup_home"
	echo "default_toolchain = \"$2\"" >"$rustup_home/settings.toml"
	;;
show)
	echo "Default host: $triple"
	echo "rustup home:  $rustup_home"
	ls "$rustup_home/toolchains" 2>/dev/null
	;;
*)
	echo "error: unsupported: rustup $*" >&2
	exit 1
	;;
esac
