#!/bin/sh
# jetson-compute-cap.sh SRC_DIR SM...
#
# Makes text-embeddings-inference (TEI) accept the Jetson GPUs it is compiled
# for. TEI's backends/candle/src/compute_cap.rs decides at start-up, in
# compute_cap_matching(runtime, compile), whether the GPU may run the kernels
# compiled in. Upstream (v1.5.0 to v1.9.3, and main) has no arm for Orin (87), Thor (110) or
# Xavier (72), so a router built with CUDA_COMPUTE_CAP=87 stops on an Orin with
# "Runtime compute cap 87 is not compatible with compile time compute cap 87"
# (huggingface/text-embeddings-inference issue 466; pull request 844 adds the
# arms and is not merged).
#
# For each SM given as digits (72, 87, 110) this adds the arm
#     (SM, SM) => true,
# just before the function's catch-all "(_, _) => false" arm, only when that
# exact arm is missing. It never adds ranges: NVIDIA's CUDA guide says cubin
# compatibility across minor versions "is not supported for Tegra", so an 8.7
# binary must run only on an 8.7 GPU.
#
# It edits the file in place, is idempotent, and exits 1 with one sentence
# naming the file, the SM and the fix when it cannot patch. Plain POSIX sh
# with no other tools than cat and rm: it runs under busybox sh and bash.
#
# By hand: dockerfiles/jetson-compute-cap.sh ~/src/text-embeddings-inference 87 110
set -u

prog=jetson-compute-cap.sh

if [ $# -lt 2 ]; then
	echo "usage: $prog SRC_DIR SM... (e.g. $prog /src 87 110)" >&2
	exit 2
fi
src=$1
shift
file=$src/backends/candle/src/compute_cap.rs

for sm in "$@"; do
	case $sm in
	'' | *[!0-9]* | 0*)
		echo "$prog: SM \"$sm\" is not a compute capability in digits; write it like 87 (Orin), 110 (Thor) or 72 (Xavier)." >&2
		exit 2
		;;
	esac
done

fail() {
	# $1: the SMs, $2: what is wrong
	echo "$prog: cannot add the compute-cap arm for SM $1 to $file: $2; pin a router version whose compute_cap.rs has fn compute_cap_matching with a (_, _) => false arm, or update this script to the new layout." >&2
	exit 1
}

if [ ! -f "$file" ]; then
	fail "$*" "the file does not exist"
fi

# has_arm SM: is the exact (SM, SM) => true arm in the function?
# Pass 1 finds the function, its catch-all and the arms already there.
in_fn=0
found_fn=0
found_catchall=0
present=" "
while IFS= read -r line || [ -n "$line" ]; do
	case $line in
	*"fn compute_cap_matching("*)
		in_fn=1
		found_fn=1
		continue
		;;
	esac
	[ $in_fn = 1 ] || continue
	case $line in
	"}"*)
		in_fn=0
		continue
		;;
	*"(_, _)"*"=>"*"false"* | *"(_,_)"*"=>"*"false"*)
		found_catchall=1
		;;
	esac
	for sm in "$@"; do
		case $line in
		*"($sm, $sm)"*"=>"*"true"* | *"($sm,$sm)"*"=>"*"true"*)
			present="$present$sm "
			;;
		esac
	done
done <"$file"

if [ $found_fn = 0 ]; then
	fail "$*" "it has no fn compute_cap_matching"
fi
if [ $found_catchall = 0 ]; then
	fail "$*" "fn compute_cap_matching has no (_, _) => false arm to add it before"
fi

missing=""
for sm in "$@"; do
	case $present in
	*" $sm "*) ;;
	*) case " $missing " in
		*" $sm "*) ;;
		*) missing="$missing $sm" ;;
		esac ;;
	esac
done
if [ -z "$missing" ]; then
	echo "$prog: $file already accepts SM $* exactly; nothing to change"
	exit 0
fi

# Pass 2 writes the file with the missing arms before the catch-all, indented
# like it. The temporary file is copied back with cat so that the file keeps
# its owner and mode.
tmp=$file.jetbake-tmp
in_fn=0
{
	while IFS= read -r line || [ -n "$line" ]; do
		case $line in
		*"fn compute_cap_matching("*) in_fn=1 ;;
		"}"*) in_fn=0 ;;
		*"(_, _)"*"=>"*"false"* | *"(_,_)"*"=>"*"false"*)
			if [ $in_fn = 1 ]; then
				indent=${line%%"("*}
				for sm in $missing; do
					printf '%s(%s, %s) => true, // Jetson, added by %s\n' "$indent" "$sm" "$sm" "$prog"
				done
				in_fn=0
			fi
			;;
		esac
		printf '%s\n' "$line"
	done <"$file"
} >"$tmp" || {
	rm -f "$tmp"
	fail "$*" "writing $tmp failed"
}
cat "$tmp" >"$file" || {
	rm -f "$tmp"
	fail "$*" "the file is not writable"
}
rm -f "$tmp"
echo "$prog: added the arms for SM$missing to $file"
