#!/usr/bin/env bash
# deps.sh installs what the end-to-end tests and `make demo` need on a Debian
# machine, as root: runc, QEMU user emulation with the aarch64 binfmt handler
# registered, Debian's arm64 busybox-static for the stand-in base images,
# Debian's docker.io (dockerd and the docker client) for the Docker-engine
# tests, which start their own dockerd, gcc with libc6-dev for cgo (`go test
# -race`, the stand-in router and libcuda that the entrypoint tests build),
# Debian's aarch64 cross compiler for the ELF stand-ins (libcuda, the
# libraries a base provides), Debian's arm64 glibc (libc6, libc-bin) for the
# stand-in bases' dynamic loader, Debian's arm64 Python 3 and pip for the
# stand-in PyTorch bases, curl for the test of the action's install
# script, OpenSSH's client (ssh-agent, ssh-add, ssh-keygen) for the test of
# --ssh, and git, whose `git daemon` and `git http-backend` serve the router's
# source on 127.0.0.1 for the tests of git contexts (BuildKit's git source
# runs the host's git too).
# It is idempotent: a second run only checks. BuildKit is built by the Makefile.
set -euo pipefail

cache=${JETBAKE_DEPS_DIR:-bin/deps}
mkdir -p "$cache"

need_apt=()
command -v runc >/dev/null || need_apt+=(runc)
[ -e /usr/lib/binfmt.d/qemu-aarch64.conf ] || need_apt+=(qemu-user-static)
command -v dockerd >/dev/null || need_apt+=(docker.io)
command -v gcc >/dev/null || need_apt+=(gcc)
# gcc alone (without its recommends) compiles no C program: libc6-dev has the
# headers and the crt files cgo, the race detector and the stand-in libcuda need.
printf '#include <signal.h>\n#include <stdio.h>\n#include <stdlib.h>\nint main(void) { return 0; }\n' |
  gcc -x c -o /dev/null - >/dev/null 2>&1 || need_apt+=(libc6-dev)
command -v aarch64-linux-gnu-gcc >/dev/null || need_apt+=(gcc-aarch64-linux-gnu)
[ -e /usr/aarch64-linux-gnu/lib/libc.so ] || need_apt+=(libc6-dev-arm64-cross)
command -v curl >/dev/null || need_apt+=(curl)
command -v jq >/dev/null || need_apt+=(jq)
# mmdebstrap, apt-ftparchive and gpgv: the cross build base's recipe in the
# test bed (deps-recipe.sh, builder/internal/aptrepo).
command -v mmdebstrap >/dev/null || need_apt+=(mmdebstrap)
command -v apt-ftparchive >/dev/null || need_apt+=(apt-utils)
command -v gpgv >/dev/null || need_apt+=(gpgv)
{ command -v ssh-agent && command -v ssh-add && command -v ssh-keygen; } >/dev/null || need_apt+=(openssh-client)
{ command -v git && [ -x "$(git --exec-path)/git-daemon" ] && [ -x "$(git --exec-path)/git-http-backend" ]; } >/dev/null 2>&1 || need_apt+=(git)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "deps: missing ${need_apt[*]}; run 'make deps' as root or install them with apt-get" >&2
    exit 1
  fi
  echo "deps: installing ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# Register the aarch64 handler (nothing does it without systemd). The F flag
# in Debian's file opens the interpreter now, so containers need nothing else.
binfmt=/proc/sys/fs/binfmt_misc
if [ ! -e "$binfmt/register" ]; then
  mount -t binfmt_misc binfmt_misc "$binfmt"
fi
if [ ! -e "$binfmt/qemu-aarch64" ]; then
  echo "deps: registering the qemu-aarch64 binfmt handler"
  cat /usr/lib/binfmt.d/qemu-aarch64.conf > "$binfmt/register"
fi

# Debian's arm64 packages, unpacked: the stand-in base images are made from
# busybox-static, libc6 (the dynamic loader and libc) and libc-bin (ldconfig).
# deb_fetch ARCH DIR PACKAGE...: download ARCH's packages with the machine's
# own sources into a private lists folder (one per architecture, updated
# once) and unpack them into $cache/DIR.
arm64_lists= amd64_lists=
deb_fetch() {
  local arch=$1 dir=$2; shift 2
  local opts=(-o APT::Sandbox::User=root -o APT::Architecture="$arch" -o APT::Architectures="$arch")
  local var=${arch}_lists
  if [ -z "${!var}" ]; then
    printf -v "$var" '%s' "$(mktemp -d)"
    trap 'rm -rf "$arm64_lists" "$amd64_lists" "${nv_lists:-}"' EXIT
    mkdir -p "${!var}/partial"
    apt-get "${opts[@]}" -o Dir::State::Lists="${!var}" update -qq
  fi
  local debs
  debs=$(mktemp -d)
  (cd "$debs" && apt-get "${opts[@]}" -o Dir::State::Lists="${!var}" download "$@" -qq)
  rm -rf "$cache/$dir.tmp"
  for deb in "$debs"/*.deb; do dpkg -x "$deb" "$cache/$dir.tmp"; done
  rm -rf "$debs" "$cache/$dir"
  mv "$cache/$dir.tmp" "$cache/$dir"
}
arm64_fetch() { deb_fetch arm64 "$@"; } # arm64_fetch DIR PACKAGE...
if [ ! -x "$cache/busybox-arm64/bin/busybox" ]; then
  echo "deps: fetching Debian's arm64 busybox-static"
  arm64_fetch busybox-arm64 busybox-static
fi
if [ ! -e "$cache/glibc-arm64/lib/aarch64-linux-gnu/libc.so.6" ] || [ ! -x "$cache/glibc-arm64/sbin/ldconfig" ]; then
  echo "deps: fetching Debian's arm64 libc6 and libc-bin"
  arm64_fetch glibc-arm64 libc6 libc-bin
fi
# Debian's arm64 Python 3 and pip for the stand-in PyTorch bases, the
# smallest set with which `python3 -m venv --without-pip` and pip run on
# wheels (apt-cache depends, with the arm64 options above, lists more):
#   python3.11-minimal, libpython3.11-minimal  the interpreter and its core
#   libpython3.11-stdlib    the rest of the standard library pip imports
#                           (email, html, venv, ctypes, ...)
#   python3-pip, python3-distutils  Debian's pip 23.0.1 with its vendored
#                           libraries, and distutils, which Debian's pip reads
#   libexpat1, zlib1g, libssl3, libffi8, libbz2-1.0, liblzma5  what the
#                           interpreter's modules link (pyexpat, zlib,
#                           hashlib and ssl, ctypes, bz2, lzma)
# Left out: setuptools and wheel (only sdists need them: the index serves
# wheels), ca-certificates (the index is plain HTTP on 127.0.0.1), readline,
# ncurses, sqlite, gdbm and the tirpc/nsl family (no module pip uses).
if [ ! -x "$cache/python3-arm64/usr/bin/python3.11" ] || [ ! -d "$cache/python3-arm64/usr/lib/python3/dist-packages/pip" ]; then
  echo "deps: fetching Debian's arm64 Python 3 and pip"
  arm64_fetch python3-arm64 python3.11-minimal libpython3.11-minimal libpython3.11-stdlib python3-pip python3-distutils \
    libexpat1 zlib1g libssl3 libffi8 libbz2-1.0 liblzma5
fi
# Debian's amd64 aarch64 cross compiler for the stand-in cross build bases
# (amd64 images, docs/testbed.md): the x86_64 programs of
# gcc-11-aarch64-linux-gnu and g++-11-aarch64-linux-gnu (GCC 11, the cross
# compiler of Ubuntu 22.04, JetPack 6's Ubuntu, and the newest that NVIDIA's
# nvcc 11.8 takes as its host compiler: nvcc compiles .cu files as C++, with
# cc1plus), cpp-11 and binutils, the target's C and C++ libraries and start
# files (libc6-dev-arm64-cross and what it links: libc6-arm64-cross,
# linux-libc-dev-arm64-cross, libgcc-11-dev, libgcc-s1, libstdc++-11-dev and
# libstdc++6 of arm64-cross), the programs' amd64 shared-library closure
# (libc6, what cc1plus and ld link: GMP, MPFR, MPC, ISL, zlib, zstd,
# jansson, libbinutils' sframe; and libstdc++6 and libgcc-s1, which NVIDIA's
# cicc links) and busybox-static for the shell, all of the machine's own
# architecture, through a private lists folder. Debian's own
# aarch64-linux-gnu-gcc links name GCC 12; the 11 ones are linked in their
# place, as Ubuntu 22.04's gcc-aarch64-linux-gnu links them.
amd64_fetch() { deb_fetch amd64 "$@"; } # amd64_fetch DIR PACKAGE...
if [ ! -e "$cache/cross-amd64/usr/bin/aarch64-linux-gnu-g++-11" ] || [ ! -x "$cache/cross-amd64/bin/busybox" ]; then
  echo "deps: fetching Debian's amd64 aarch64 cross compiler (GCC 11) and busybox-static for the stand-in cross build bases"
  amd64_fetch cross-amd64 gcc-11-aarch64-linux-gnu g++-11-aarch64-linux-gnu cpp-11-aarch64-linux-gnu binutils-aarch64-linux-gnu \
    libc6-dev-arm64-cross libc6-arm64-cross linux-libc-dev-arm64-cross libgcc-11-dev-arm64-cross libgcc-s1-arm64-cross \
    libstdc++-11-dev-arm64-cross libstdc++6-arm64-cross \
    libc6 libgmp10 libmpfr6 libmpc3 libisl23 zlib1g libzstd1 libjansson4 libbinutils libstdc++6 libgcc-s1 busybox-static
  for tool in gcc g++ cpp; do ln -sf "aarch64-linux-gnu-$tool-11" "$cache/cross-amd64/usr/bin/aarch64-linux-gnu-$tool"; done
fi
# Debian's arm64 GCC 11 with g++ and binutils, the host compiler of NVIDIA's
# arm64 nvcc in the stand-in build base of the native path's real-compiler
# case (docs/testbed.md): what a devel image's build-essential gives nvcc on
# a Jetson (Ubuntu 22.04's GCC 11): the compiler drivers and cc1plus, the C
# and C++ headers, start files and libraries, ar, as and ld, and the
# programs' arm64 shared-library closure, and dash, Ubuntu's /bin/sh, which
# nvcc runs its steps with (busybox's sh runs its own applets before PATH's
# programs: its ar, not binutils', for nvcc --lib). Only the sanitizers',
# OpenMP's and the Kerberos/RPC packages that apt's dependencies name are
# left out: no compile of the router's kernels opens them.
if [ ! -x "$cache/gcc11-arm64/usr/bin/aarch64-linux-gnu-g++-11" ] || [ ! -x "$cache/gcc11-arm64/bin/dash" ]; then
  echo "deps: fetching Debian's arm64 GCC 11 and binutils (the host compiler of NVIDIA's arm64 nvcc)"
  arm64_fetch gcc11-arm64 gcc-11 g++-11 cpp-11 gcc-11-base libgcc-11-dev libstdc++-11-dev libc6-dev libc-dev-bin linux-libc-dev \
    libcrypt-dev libcrypt1 binutils binutils-aarch64-linux-gnu binutils-common libbinutils libctf0 libctf-nobfd0 libjansson4 \
    libisl23 libmpc3 libmpfr6 libgmp10 zlib1g libzstd1 libstdc++6 libgcc-s1 libc6 dash
fi
# NVIDIA's own binaries from Debian's non-free component (the same Debian
# registry, another component), through a private apt configuration: its own
# sources list naming non-free and its own lists folder, so that the
# machine's sources are left as they are. They are the test bed's oracle and
# its real parts (docs/testbed.md):
#   nvidia-cuda-amd64    NVIDIA's CUDA 11.8 toolkit (amd64): nvcc and cicc,
#                        which the stand-in cross build bases compile the
#                        router's kernels with; cuobjdump, ptxas,
#                        fatbinary, nvdisasm; real sm_72/sm_87 code
#   nvidia-nvcc-arm64    NVIDIA's CUDA 11.8 compiler for arm64 (aarch64
#                        programs, run under QEMU)
#   nvidia-cuda-dev-arm64  the CUDA headers and static CUDA runtime of
#                        NVIDIA's arm64 nvidia-cuda-dev: the target's files
#                        of an aarch64 compile
#   nvidia-cuda-arm64    NVIDIA's arm64 (SBSA) CUDA 11.8 libraries: cuBLAS,
#                        cuBLASLt, cuFFT, cuRAND, the CUDA runtime
#   nvidia-driver-arm64  NVIDIA's arm64 driver user space 535: libcuda.so.1,
#                        the PTX JIT, NVML and nvidia-smi
# Each folder's VERSIONS names the packages and versions it was made from;
# a version other than the one the tests were written against stops here.
nv_lists=
nv_fetch() { # [NV_KEEP=PATHS] nv_fetch DIR PACKAGE=VERSION-PREFIX...: download, check, unpack (only PATHS) into $cache/DIR
  local dir=$1; shift
  local opts=(-o APT::Sandbox::User=root -o APT::Architecture=amd64 -o APT::Architectures=amd64,arm64)
  if [ -z "$nv_lists" ]; then
    nv_lists=$(mktemp -d)
    trap 'rm -rf "$arm64_lists" "$amd64_lists" "$nv_lists"' EXIT
    mkdir -p "$nv_lists/lists/partial"
    # The machine's own Debian sources (their mirrors and suites), with the
    # component non-free: deb822 files (URIs/Suites/Signed-By) and one-line ones.
    local f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
      [ -r "$f" ] || continue
      awk '
        /^deb / { o = ""; if ($2 ~ /^\[/) { o = $2; $2 = ""; $0 = $0; } print "deb " o " " $2 " " $3 " non-free"; next }
        /^URIs:/ { uris = $2 } /^Suites:/ { $1 = ""; suites = $0 } /^Signed-By:/ { key = $2 }
        /^$/ { flush() } END { flush() }
        function flush(  n, i, s) { if (uris == "") return; n = split(suites, s, " ")
          for (i = 1; i <= n; i++) print "deb " (key != "" ? "[signed-by=" key "] " : "") uris " " s[i] " non-free"
          uris = ""; suites = ""; key = "" }' "$f"
    done | grep -v '^deb  *$' | sort -u >"$nv_lists/sources.list"
    if ! grep -q . "$nv_lists/sources.list"; then
      echo "deps: no Debian sources found in /etc/apt to fetch NVIDIA's packages from (component non-free)" >&2; exit 1
    fi
  fi
  opts+=(-o Dir::State::Lists="$nv_lists/lists" -o Dir::Etc::SourceList="$nv_lists/sources.list" -o Dir::Etc::SourceParts=/nonexistent)
  [ -e "$nv_lists/updated" ] || { apt-get "${opts[@]}" update -qq && touch "$nv_lists/updated"; }
  local debs names=() spec
  for spec in "$@"; do names+=("${spec%%=*}"); done
  debs=$(mktemp -d)
  (cd "$debs" && apt-get "${opts[@]}" download "${names[@]}" -qq)
  rm -rf "$cache/$dir.tmp" && mkdir -p "$cache/$dir.tmp"
  for spec in "$@"; do
    local pkg=${spec%%=*} want=${spec#*=} deb version
    deb=$(ls "$debs/${pkg%%:*}"_*.deb)
    version=$(dpkg-deb -f "$deb" Version)
    case "$version" in
      "$want"*) ;;
      *) echo "deps: Debian's $pkg is $version, not the $want the test bed was written against: update builder/internal/tools/deps.sh and the tests that name it" >&2
         rm -rf "$debs" "$cache/$dir.tmp"; exit 1 ;;
    esac
    if [ -n "${NV_KEEP:-}" ]; then
      # Only these paths of the package: the rest is never written to disk.
      # shellcheck disable=SC2086 # NV_KEEP is a list of tar members
      dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$cache/$dir.tmp" $NV_KEEP
    else
      dpkg-deb -x "$deb" "$cache/$dir.tmp"
    fi
    echo "$pkg $version" >>"$cache/$dir.tmp/VERSIONS"
  done
  rm -rf "$debs" "$cache/$dir"
  mv "$cache/$dir.tmp" "$cache/$dir"
}
if [ ! -x "$cache/nvidia-cuda-amd64/usr/bin/cuobjdump" ] || [ ! -x "$cache/nvidia-cuda-amd64/usr/lib/nvidia-cuda-toolkit/bin/cicc" ]; then
  echo "deps: fetching NVIDIA's CUDA 11.8 toolkit (nvcc, cicc, ptxas, fatbinary, cuobjdump) from Debian's non-free component"
  nv_fetch nvidia-cuda-amd64 nvidia-cuda-toolkit=11.8.89
  # What a compile and the oracle run: nvcc, cicc, crt/ and libdevice under
  # Debian's /usr/lib/nvidia-cuda-toolkit (Debian's own nvcc.profile, a link
  # to /etc, and its gcc/g++ links are left out: the stand-in bases lay the
  # toolkit out as NVIDIA does, standin/nvcc.go), and the device-code tools
  # in usr/bin; the headers come from nvidia-cuda-dev (below).
  find "$cache/nvidia-cuda-amd64/usr/bin" -type f ! -name cuobjdump ! -name ptxas ! -name fatbinary ! -name nvdisasm \
    ! -name nvcc ! -name cudafe++ ! -name nvlink ! -name bin2c -delete
  rm -rf "$cache/nvidia-cuda-amd64/usr/share" "$cache/nvidia-cuda-amd64/usr/lib/nvidia-cuda-toolkit/compute-sanitizer" \
    "$cache/nvidia-cuda-amd64/usr/lib/nvidia-cuda-toolkit/bin/"{gcc,g++,nvcc.profile}
  find "$cache/nvidia-cuda-amd64/usr/lib" -mindepth 1 -maxdepth 1 ! -name nvidia-cuda-toolkit -exec rm -rf {} +
fi
# NVIDIA's CUDA 11.8 compiler for arm64 (an aarch64 program: it runs under
# QEMU here), for the native path's real-compiler case: nvcc, cicc, crt/,
# libdevice and the device-code tools nvcc runs.
if [ ! -x "$cache/nvidia-nvcc-arm64/usr/lib/nvidia-cuda-toolkit/bin/cicc" ]; then
  echo "deps: fetching NVIDIA's arm64 CUDA 11.8 compiler (nvcc, cicc, ptxas, fatbinary) from Debian's non-free component"
  NV_KEEP="./usr/lib/nvidia-cuda-toolkit/bin/nvcc ./usr/lib/nvidia-cuda-toolkit/bin/cicc ./usr/lib/nvidia-cuda-toolkit/bin/crt \
./usr/lib/nvidia-cuda-toolkit/libdevice ./usr/bin/ptxas ./usr/bin/fatbinary ./usr/bin/cudafe++ ./usr/bin/bin2c" \
    nv_fetch nvidia-nvcc-arm64 nvidia-cuda-toolkit:arm64=11.8.89
fi
# The target's files of a CUDA 11.8 compile for aarch64, from the arm64
# nvidia-cuda-dev (636 MB to download): the CUDA headers (usr/include, 14
# MB; nvcc includes cuda_runtime.h and crt/ in every compile) and the
# CUDA runtime's static archives; the rest (the libraries' development links
# and static archives) is never unpacked.
if [ ! -e "$cache/nvidia-cuda-dev-arm64/usr/include/cuda_runtime.h" ]; then
  echo "deps: fetching NVIDIA's CUDA 11.8 headers and static CUDA runtime for aarch64 (nvidia-cuda-dev:arm64) from Debian's non-free component"
  NV_KEEP="./usr/include ./usr/lib/aarch64-linux-gnu/libcudart_static.a ./usr/lib/aarch64-linux-gnu/libcudadevrt.a ./usr/lib/aarch64-linux-gnu/libculibos.a" \
    nv_fetch nvidia-cuda-dev-arm64 nvidia-cuda-dev:arm64=11.8.89
fi
if [ ! -e "$cache/nvidia-cuda-arm64/usr/lib/aarch64-linux-gnu/libcublas.so.11.11.3.6" ]; then
  echo "deps: fetching NVIDIA's arm64 CUDA 11.8 libraries (cuBLAS, cuBLASLt, cuFFT, cuRAND, cudart) from Debian's non-free component"
  nv_fetch nvidia-cuda-arm64 libcublas11:arm64=11.11.3.6 libcublaslt11:arm64=11.11.3.6 \
    libcufft10:arm64=11.1.1+~10.9.0.58 libcurand10:arm64=11.1.1+~10.3.0.86 libcudart11.0:arm64=11.8.89
fi
if [ ! -e "$cache/nvidia-driver-arm64/usr/lib/nvidia/current/nvidia-smi" ]; then
  echo "deps: fetching NVIDIA's arm64 driver user space 535 (libcuda1, the PTX JIT, NVML, nvidia-smi) from Debian's non-free component"
  nv_fetch nvidia-driver-arm64 libcuda1:arm64=535. libnvidia-ptxjitcompiler1:arm64=535. libnvidia-ml1:arm64=535. nvidia-smi:arm64=535.
fi
# What the test bed builds the cross build base's recipe from
# (dockerfiles/Dockerfile-cross-base): minimal Debian roots and the .deb
# closure of the recipe's apt-get line (deps-recipe.sh).
bash "$(dirname "${BASH_SOURCE[0]}")/deps-recipe.sh"
echo "deps: $(git --version), runc $(runc --version | head -1 | awk '{print $3}'), dockerd $(dockerd --version | awk '{print $3}' | tr -d ,), qemu-aarch64 registered, busybox at $cache/busybox-arm64/bin/busybox, arm64 glibc at $cache/glibc-arm64, arm64 Python at $cache/python3-arm64, NVIDIA's CUDA 11.8 compilers (amd64, arm64) and tools, arm64 libraries and driver 535 under $cache/nvidia-*, Debian's GCC 11 (aarch64 cross, arm64) under $cache/cross-amd64 and $cache/gcc11-arm64, the cross base recipe's Debian roots and packages under $cache/recipe-*, $(aarch64-linux-gnu-gcc -dumpfullversion 2>/dev/null | sed "s/^/aarch64-linux-gnu-gcc /")"
