#!/bin/sh
# curl of jetbake's stand-in build images, which have no network: it serves
# https://sh.rustup.rs (the stand-in rustup installer) and fails on any
# other URL as curl does when the host cannot be resolved (status 6; no
# message under -s unless -S).
set -u
url= out= silent=0 show=0
while [ $# -gt 0 ]; do
	case $1 in
	-o | --output) out=$2; shift ;;
	--proto | --tlsv1.2 | -L | --location | -f | --fail) ;;
	--proto=* | --tlsv*) ;;
	-s | --silent) silent=1 ;;
	-S | --show-error) show=1 ;;
	-[a-zA-Z]*)
		case $1 in *s*) silent=1 ;; esac
		case $1 in *S*) show=1 ;; esac
		;;
	-*) ;;
	*) url=$1 ;;
	esac
	shift
done
case $url in
https://sh.rustup.rs | https://sh.rustup.rs/)
	if [ -n "$out" ]; then cp /usr/share/jetbake-standin/rustup/rustup-init.sh "$out"; else cat /usr/share/jetbake-standin/rustup/rustup-init.sh; fi
	exit 0
	;;
esac
host=${url#*://}
host=${host%%/*}
if [ "$silent" = 0 ] || [ "$show" = 1 ]; then
	echo "curl: (6) Could not resolve host: $host" >&2
fi
exit 6
