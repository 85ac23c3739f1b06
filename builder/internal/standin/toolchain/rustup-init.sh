#!/bin/sh
# The rustup installer as https://sh.rustup.rs serves it, in jetbake's
# stand-in build images: it installs rustup, cargo and rustc (the stand-in
# cargo, which is rustc when called by that name, as rustup's proxies are
# one program) into
# $CARGO_HOME/bin (default ~/.cargo) and the default toolchain
# (--default-toolchain, "stable" unless "none") into $RUSTUP_HOME (default
# ~/.rustup). Like rustup-init, it will not run without -y when it cannot
# ask (no terminal in a build).
set -u
yes=0 toolchain=stable
while [ $# -gt 0 ]; do
	case $1 in
	-y) yes=1 ;;
	--default-toolchain) toolchain=$2; shift ;;
	--default-toolchain=*) toolchain=${1#*=} ;;
	--profile | --default-host | -c | --component | -t | --target) shift ;;
	*) ;;
	esac
	shift
done
if [ "$yes" = 0 ]; then
	echo "error: Unable to run interactively. Run with -y to accept defaults, --help for additional options" >&2
	exit 1
fi
cargo_home=${CARGO_HOME:-$HOME/.cargo}
rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
share=/usr/share/jetbake-standin
mkdir -p "$cargo_home/bin" "$rustup_home/toolchains"
cp "$share/cargo/cargo" "$share/rustup/rustup" "$cargo_home/bin/"
cp "$share/cargo/cargo" "$cargo_home/bin/rustc"
chmod 0755 "$cargo_home/bin/cargo" "$cargo_home/bin/rustup" "$cargo_home/bin/rustc"
echo "info: downloading installer"
if [ "$toolchain" = none ]; then
	echo "info: skipping toolchain installation"
else
	"$cargo_home/bin/rustup" toolchain install "$toolchain" || exit 1
	echo "default_toolchain = \"$toolchain\"" >"$rustup_home/settings.toml"
	echo "info: default toolchain set to '$toolchain-aarch64-unknown-linux-gnu'"
fi
echo ""
echo "Rust is installed now. Great!"
