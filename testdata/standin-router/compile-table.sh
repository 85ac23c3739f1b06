#!/bin/sh
# compile-table.sh FILE: the stand-in's "rustc" for the compute-cap table.
# It turns the arms of fn compute_cap_matching in FILE, such as
#     (80..=89, 80) => true,
# into a shell function compute_cap_matching RUNTIME COMPILE that the
# stand-in router calls at start-up, as TEI's router calls the Rust one.
# Plain sh (busybox): only builtins and cat.
set -eu
file=$1
in_fn=0
arms=0
echo 'compute_cap_matching() {'
while IFS= read -r line || [ -n "$line" ]; do
	case $line in
	*"fn compute_cap_matching("*) in_fn=1; continue ;;
	"}"*) in_fn=0; continue ;;
	esac
	[ $in_fn = 1 ] || continue
	case $line in
	*"(_, _)"*) continue ;;
	*"("*")"*"=> true"*) ;;
	*) continue ;;
	esac
	arm=${line#*(}
	arm=${arm%%)*}
	rt=${arm%%,*}
	cc=${arm#*,}
	rt=${rt# }; cc=${cc# }
	rlo=${rt%%..=*}; rhi=${rt#*..=}
	clo=${cc%%..=*}; chi=${cc#*..=}
	echo "  [ \"\$1\" -ge $rlo ] && [ \"\$1\" -le $rhi ] && [ \"\$2\" -ge $clo ] && [ \"\$2\" -le $chi ] && return 0"
	arms=$((arms + 1))
done <"$file"
echo '  return 1'
echo '}'
[ $arms -gt 0 ] || { echo "compile-table.sh: no arms in fn compute_cap_matching of $file" >&2; exit 1; }
