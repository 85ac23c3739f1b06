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
# Flash attention: TEI's backends/candle/src/flash_attn.rs runs
# flash-attention v2 only for a runtime compute cap it lists (v1.8.x:
# 80..90 and 90; v1.9.x adds 100 and 120; main adds 121), and any other cap
# ends in "GPU with CUDA capability 110 is not supported". TEI's lib.rs
# picks the Flash* model (Bert, GTE, Mistral, Qwen2, ...) whenever flash
# attention is on (the default), the dtype is fp16 and the cap is 80 or
# more: on a Thor every such model fails at its first forward, which TEI
# runs at start (the backend's health check). candle-flash-attn compiles
# its kernels for CUDA_COMPUTE_CAP, so they exist for the SM built. For each
# SM of 80 or more that the gate does not accept yet, this adds exactly
#     || runtime_compute_cap == SM
# to the gate's condition, never a range. Flash-attention v2 needs sm_80 or
# newer: below that (Xavier's 72) the gate is left as it is, and TEI never
# asks it.
#
# It edits the files in place, is idempotent, and exits 1 with one sentence
# naming the file, the SM and the fix when it cannot patch, before it
# changes either file. Plain POSIX sh with no other tools than cat and rm:
# it runs under busybox sh and bash.
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
flash=$src/backends/candle/src/flash_attn.rs

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

# code_of LINE: the line without its // comment and trailing blanks.
code_of() {
	c=${1%%//*}
	while :; do
		case $c in
		*" " | *"	") c=${c%?} ;;
		*) break ;;
		esac
	done
	printf '%s' "$c"
}

fail_flash() {
	# $1: the SMs, $2: what is wrong
	echo "$prog: cannot let flash-attention v2 run on SM $1 in $flash: $2; pin a router version whose flash_attn.rs gates flash-attention v2 with an \"else if\" on runtime_compute_cap (TEI v1.8.0 to main), or update this script to the new layout." >&2
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

# The flash-attention v2 gate of flash_attn.rs: the condition of the first
# "else if" on runtime_compute_cap in fn flash_attn_varlen, from that line to
# the first line that ends with "{" (rustfmt writes it on one line, or one
# "|| runtime_compute_cap == N" term a line with "{" alone after them). Its
# terms are "(LO..HI).contains(&runtime_compute_cap)" (HI excluded, as in
# Rust) and "runtime_compute_cap == N".
flash_sms=""
for sm in "$@"; do
	[ "$sm" -ge 80 ] || continue
	case " $flash_sms " in *" $sm "*) ;; *) flash_sms="$flash_sms $sm" ;; esac
done
flash_missing=""
if [ -n "$flash_sms" ]; then
	[ -f "$flash" ] || fail_flash "${flash_sms# }" "the file does not exist"
	in_fn=0
	gate_start=0
	gate_end=0
	gate=""
	bails=0
	n=0
	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		case $line in
		*"fn flash_attn_varlen("*) in_fn=1 ;;
		*"GPU with CUDA capability"*"not supported"*) bails=1 ;;
		esac
		[ $in_fn = 1 ] || continue
		if [ $gate_start = 0 ]; then
			case $line in
			*"else if"*"runtime_compute_cap"*) gate_start=$n ;;
			*) continue ;;
			esac
		fi
		if [ $gate_end = 0 ]; then
			code=$(code_of "$line")
			gate="$gate $code"
			case $code in
			*"{") gate_end=$n ;;
			esac
		fi
	done <"$flash"
	[ $in_fn = 1 ] || fail_flash "${flash_sms# }" "it has no fn flash_attn_varlen"
	[ $gate_end != 0 ] || fail_flash "${flash_sms# }" "fn flash_attn_varlen has no \"else if\" on runtime_compute_cap ending in {"
	[ $bails = 1 ] || fail_flash "${flash_sms# }" "it has no \"GPU with CUDA capability ... is not supported\" error after the gate"
	gate=${gate#*else if}
	gate=${gate%\{}
	for sm in $flash_sms; do
		accepted=0
		rest="$gate||"
		while [ -n "$rest" ]; do
			term=${rest%%"||"*}
			rest=${rest#*"||"}
			term=$(echo $term)
			case $term in
			"runtime_compute_cap == $sm" | "runtime_compute_cap==$sm") accepted=1 ;;
			"("*..*").contains(&runtime_compute_cap)")
				lo=${term#"("}
				lo=${lo%%..*}
				hi=${term#*..}
				hi=${hi%%")"*}
				case $lo$hi in *[!0-9]* | "") fail_flash "${flash_sms# }" "the gate's range \"$term\" is not LO..HI in digits" ;; esac
				[ "$sm" -ge "$lo" ] && [ "$sm" -lt "$hi" ] && accepted=1
				;;
			"runtime_compute_cap == "* | "runtime_compute_cap=="*) ;;
			*) fail_flash "${flash_sms# }" "the gate has a term \"$term\" this script does not know" ;;
			esac
		done
		[ $accepted = 1 ] || flash_missing="$flash_missing $sm"
	done
fi

if [ -z "$missing" ] && [ -z "$flash_missing" ]; then
	echo "$prog: $file already accepts SM $* exactly; nothing to change"
	[ -n "$flash_sms" ] && echo "$prog: $flash already runs flash-attention v2 on SM${flash_sms}; nothing to change"
	exit 0
fi

# Pass 2 writes the file with the missing arms before the catch-all, indented
# like it. The temporary file is copied back with cat so that the file keeps
# its owner and mode.
if [ -n "$missing" ]; then
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
else
echo "$prog: $file already accepts SM $* exactly; nothing to change"
fi

[ -n "$flash_missing" ] || exit 0
# Pass 2 of flash_attn.rs: the missing terms go at the gate's end, on a
# line of their own before a lone "{", else just before the "{".
tmp=$flash.jetbake-tmp
n=0
{
	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		if [ $n = $gate_end ]; then
			terms=""
			for sm in $flash_missing; do
				terms="$terms || runtime_compute_cap == $sm"
			done
			code=$(code_of "$line")
			case $code in
			*[!\ ]*"{")
				comment=${line#"$code"}
				[ -n "$comment" ] || comment=" // Jetson, added by $prog"
				printf '%s%s {%s\n' "${code%\{}" "${terms# }" "$comment"
				;;
			*)
				printf '%s    %s // Jetson, added by %s\n' "${line%%\{*}" "${terms# }" "$prog"
				printf '%s\n' "$line"
				;;
			esac
			continue
		fi
		printf '%s\n' "$line"
	done <"$flash"
} >"$tmp" || {
	rm -f "$tmp"
	fail_flash "${flash_missing# }" "writing $tmp failed"
}
cat "$tmp" >"$flash" || {
	rm -f "$tmp"
	fail_flash "${flash_missing# }" "the file is not writable"
}
rm -f "$tmp"
echo "$prog: flash-attention v2 now runs on SM${flash_missing} in $flash"
