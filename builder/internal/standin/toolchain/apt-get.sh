#!/bin/sh
# apt-get of jetbake's stand-in base images: Debian's apt-get as a build
# sees it, over a local package index (/usr/share/jetbake-standin/apt)
# instead of a network mirror. As on a fresh image, install finds nothing
# before an update ("E: Unable to locate package X", status 100), nor after
# the lists are removed; it asks before installing without -y (and aborts:
# a build has no terminal); installing copies the package's files and runs
# ldconfig, as dpkg's trigger does.
set -u
idx=/usr/share/jetbake-standin/apt
lists=/var/lib/apt/lists
list=$lists/jetbake-standin_Packages
state=/var/lib/jetbake-standin/apt/installed

yes=0 cmd= pkgs=
for a in "$@"; do
	case $a in
	-y | --yes | --assume-yes | -qq | -q=2) yes=1 ;; # quiet level 2 implies -y
	-*) ;;
	*) if [ -z "$cmd" ]; then cmd=$a; else pkgs="$pkgs $a"; fi ;;
	esac
done

case $cmd in
update)
	mkdir -p "$lists/partial"
	echo "Get:1 file:$idx stand-in InRelease"
	cp "$idx/index" "$list"
	echo "Reading package lists... Done"
	exit 0
	;;
install) ;;
clean | autoclean | autoremove) exit 0 ;;
'')
	echo "apt (jetbake stand-in)" >&2
	echo "Usage: apt-get [options] command" >&2
	exit 100
	;;
*)
	echo "E: Invalid operation $cmd" >&2
	exit 100
	;;
esac

echo "Reading package lists..."
missing=0
for p in $pkgs; do
	if [ ! -f "$list" ] || ! grep -q "^$p:" "$list"; then
		echo "E: Unable to locate package $p" >&2
		missing=1
	fi
done
[ "$missing" = 0 ] || exit 100

# The packages and their dependencies, each once.
todo=$pkgs want=
while [ -n "$(echo $todo)" ]; do
	set -- $todo
	p=$1
	shift
	todo="$*"
	case " $want " in *" $p "*) continue ;; esac
	want="$want $p"
	todo="$todo $(grep "^$p:" "$list" | cut -d: -f2)"
done
new=
for p in $want; do
	if [ -e "$state/$p" ]; then
		case " $pkgs " in *" $p "*) echo "$p is already the newest version (stand-in)." ;; esac
	else
		new="$new $p"
	fi
done
if [ -z "$new" ]; then
	echo "0 upgraded, 0 newly installed, 0 to remove and 0 not upgraded."
	exit 0
fi
echo "The following NEW packages will be installed:"
echo " $new"
if [ "$yes" = 0 ]; then
	echo "Do you want to continue? [Y/n] Abort."
	exit 1
fi
mkdir -p "$state"
for p in $new; do
	echo "Unpacking $p (stand-in) ..."
	if [ -d "$idx/pkgs/$p" ]; then cp -a "$idx/pkgs/$p/." / || exit 100; fi
	: >"$state/$p"
done
for p in $new; do echo "Setting up $p (stand-in) ..."; done
if [ -x /sbin/ldconfig ]; then /sbin/ldconfig; fi
exit 0
