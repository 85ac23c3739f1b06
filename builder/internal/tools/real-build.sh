#!/usr/bin/env bash
# real-build.sh (make real-build): build the text-embeddings-inference that
# matrix.json pins for Orin (sm_87, release jetpack6.2) on NVIDIA's real
# bases with the shipped Dockerfile-jetson, then check the binary: its
# DT_NEEDED, --version with the build base's driver stub, the image's size.
#
# It proves what the stand-in toolchain of `make test` cannot: that TEI's
# real cargo build compiles with these features and this linking mode, that
# the real binary links what the stand-in router links, and that it starts
# on the real runtime base. It needs network (github.com, nvcr.io after
# `docker login nvcr.io`, crates.io, static.rust-lang.org), an arm64
# BuildKit node (BUILDKIT_HOST, or REAL_BUILD_ADDR; a native arm64 machine:
# under QEMU the CUDA kernels take many hours), a Docker engine that runs
# linux/arm64 images, and readelf (binutils). CI cannot run it: it has no
# NGC credentials, no network beyond Go's and Debian's mirrors, and no arm64
# node. Output goes to REAL_BUILD_DIR (default: a new folder under /tmp).
set -euo pipefail

jetbake=${JETBAKE:-bin/jetbake}
release=jetpack6.2
binary=router-87
build_base=nvcr.io/nvidia/l4t-jetpack:r36.4.0
out=${REAL_BUILD_DIR:-$(mktemp -d /tmp/jetbake-real-build.XXXXXX)}
addr=${REAL_BUILD_ADDR:-${BUILDKIT_HOST:-}}

fail() { echo "real-build: $*" >&2; exit 1; }
[ -x "$jetbake" ] || fail "$jetbake is missing: run 'make build'"
command -v docker >/dev/null || fail "docker is not installed"
command -v readelf >/dev/null || fail "readelf is not installed (apt-get install binutils)"
[ -n "$addr" ] || fail "name an arm64 BuildKit node: BUILDKIT_HOST=tcp://... or REAL_BUILD_ADDR=..."
mkdir -p "$out/stub"
start=$(date +%s)

echo "==> jetbake build --release $release on $addr (the pinned TEI, the real bases; this takes long)"
"$jetbake" validate
"$jetbake" build --addr "$addr" --release "$release" --progress plain \
	--output "type=docker,dest=$out/image.tar" --metadata-file "$out/build.json"
echo "==> built in $(($(date +%s) - start)) s; the build's own smoke run passed (--version with the stub, every DT_NEEDED library found)"

image=$(docker load --input "$out/image.tar" | sed -n 's/^Loaded image: //p' | head -n 1)
[ -n "$image" ] || fail "docker load named no image"
cid=$(docker create --platform linux/arm64 "$image")
docker cp "$cid:/usr/local/bin/$binary" "$out/$binary" >/dev/null
docker rm "$cid" >/dev/null

echo "==> DT_NEEDED of $binary"
needed=$(readelf -d "$out/$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "$needed" | sed 's/^/    /'
echo "$needed" | grep -qx 'libcuda.so.1' || fail "$binary does not link libcuda.so.1: cudarc's linking is not what the stand-in models"
if echo "$needed" | grep -Eq '^lib(cublas|cublasLt|curand|nvrtc|cudart)\.so'; then
	echo "    note: static-linking still records CUDA libraries; the runtime stage must provide them (see docs/matrix.md#the-routers-settings)"
fi

echo "==> $binary --version with $build_base's driver stub as libcuda.so.1"
docker run --rm --platform linux/arm64 --entrypoint cat "$build_base" /usr/local/cuda/lib64/stubs/libcuda.so >"$out/stub/libcuda.so.1"
docker run --rm --platform linux/arm64 --entrypoint "/usr/local/bin/$binary" \
	-v "$out/stub:/jetbake-stub:ro" -e LD_LIBRARY_PATH=/jetbake-stub "$image" --version

echo "==> image size"
docker image inspect --format '{{.Size}}' "$image" | awk '{printf "    %s: %.1f GB (uncompressed)\n", "'"$image"'", $1 / 1e9}'
echo "==> done in $(($(date +%s) - start)) s; files in $out"
