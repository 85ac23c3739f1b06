#!/bin/sh
# install of jetbake's stand-in base images (coreutils' install, which
# Debian's busybox-static lacks): install [-D] [-m MODE] SRC... DEST and
# install -d DIR..., as Dockerfiles call it.
set -eu
mode=0755 parents=0 dirs=0
while [ $# -gt 0 ]; do
	case $1 in
	-D) parents=1 ;;
	-d) dirs=1 ;;
	-m) mode=$2; shift ;;
	-m*) mode=${1#-m} ;;
	--) shift; break ;;
	-*) echo "install: unsupported option $1 (jetbake stand-in)" >&2; exit 1 ;;
	*) break ;;
	esac
	shift
done
if [ "$dirs" = 1 ]; then
	for d in "$@"; do mkdir -p "$d" && chmod "$mode" "$d"; done
	exit 0
fi
if [ $# -lt 2 ]; then
	echo "install: missing destination file operand" >&2
	exit 1
fi
eval "dest=\${$#}"
if [ "$parents" = 1 ]; then mkdir -p "$(dirname "$dest")"; fi
while [ $# -gt 1 ]; do
	target=$dest
	[ -d "$dest" ] && target=$dest/$(basename "$1")
	cp "$1" "$target.tmp.$$" && chmod "$mode" "$target.tmp.$$" && mv -f "$target.tmp.$$" "$target"
	shift
done
