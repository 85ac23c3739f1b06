#!/bin/sh
# rustup of jetbake's stand-in build images: `toolchain install [NAME...]`
# (no name: the channel of rust-toolchain.toml in this folder or a parent),
# `default NAME`, `show`, `--version`. Toolchains are folders under
# $RUSTUP_HOME/toolchains, which the stand-in cargo checks for.
set -u
rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
# The host's triple: rustup installs toolchains for the machine it runs on
# (uname -m is aarch64 under QEMU, x86_64 in a cross build base).
case $(uname -m) in
x86_64) triple=x86_64-unknown-linux-gnu ;;
*) triple=aarch64-unknown-linux-gnu ;;
esac

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

# toolchain_targets: the targets = [...] of the nearest rust-toolchain.toml.
toolchain_targets() {
	d=$(pwd)
	while :; do
		if [ -f "$d/rust-toolchain.toml" ]; then
			sed -n 's/^[[:space:]]*targets[[:space:]]*=[[:space:]]*\[\(.*\)\].*/\1/p' "$d/rust-toolchain.toml" | tr -d '" ' | tr , ' '
			return 0
		fi
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
		mkdir -p "$rustup_home/toolchains/$n-$triple/bin" "$rustup_home/toolchains/$n-$triple/lib/rustlib/$triple"
		for t in $(toolchain_targets); do
			echo "info: installing component 'rust-std' for '$t'"
			mkdir -p "$rustup_home/toolchains/$n-$triple/lib/rustlib/$t"
		done
		echo "info: installing component 'cargo'"
		echo "info: installing component 'rustc'"
		echo ""
		echo "  $n-$triple installed - rustc $n (jetbake stand-in)"
	done
	;;
target)
	# rustup target add TRIPLE...: the standard library of another target
	# for the toolchain in use (RUSTUP_TOOLCHAIN, else rust-toolchain.toml).
	[ "${2:-}" = add ] || { echo "error: unsupported: rustup target ${2:-}" >&2; exit 1; }
	shift 2
	n=${RUSTUP_TOOLCHAIN:-$(toolchain_file)}
	[ -n "$n" ] || n=$(sed -n 's/^default_toolchain = "\(.*\)"/\1/p' "$rustup_home/settings.toml" 2>/dev/null)
	[ -d "$rustup_home/toolchains/$n-$triple" ] || { echo "error: toolchain '$n-$triple' is not installed" >&2; exit 1; }
	for t in "$@"; do
		echo "info: downloading component 'rust-std' for '$t'"
		echo "info: installing component 'rust-std' for '$t'"
		mkdir -p "$rustup_home/toolchains/$n-$triple/lib/rustlib/$t"
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
