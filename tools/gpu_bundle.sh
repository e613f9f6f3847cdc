#!/bin/bash
# gpu_bundle.sh — cbottleneck as one folder for a machine that has a GPU, its
# driver, the CUDA toolkit and PyTorch but none of the project's build
# dependencies (no Debian packages can be installed there): the launcher, the
# agent libraries, the CUDA examples and the GPU benches, and the launcher's
# own libraries (libdw, libelf, libcjson, ...) in DIR/deps.  DIR/cbottleneck
# runs the launcher through the dynamic loader with --library-path DIR/deps,
# so those libraries are the launcher's alone: the profiled program, which
# inherits the environment, never sees them.  Needs the same CPU architecture
# and a glibc at least as new as this machine's.
#
# Usage: tools/gpu_bundle.sh [BUILD_DIR] [DIR]      (default build, .gpu/bundle)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-.gpu/bundle}
[ -x "$build/cbottleneck" ] || { echo "gpu_bundle: build first ($build/cbottleneck)" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out/lib" "$out/deps" "$out/examples" "$out/bench"
cp "$build/cbottleneck" "$out/cbottleneck.bin"
cp "$build"/lib/*.so "$out/lib/"
for e in tiny_kernels vecadd_matmul copies sync_heavy; do
	[ -x "$build/examples/$e" ] && cp "$build/examples/$e" "$out/examples/"
done
cp bench/gpu_step.py bench/gpu_step.sh bench/gpu_ops.py bench/gpu_ops.sh bench/gpu_split.sh bench/gpu_round.sh "$out/bench/"
# The launcher's libraries, but the C library and the loader themselves.
ldd "$build/cbottleneck" | awk '$3 ~ /^\// { print $3 }' | while read -r lib; do
	case $(basename "$lib") in
	libc.so.* | libm.so.* | ld-linux*) ;;
	*) cp -L "$lib" "$out/deps/" ;;
	esac
done
loader=$(ldd "$build/cbottleneck" | awk '/ld-linux/ { print $1 }')
cat >"$out/cbottleneck" <<EOF
#!/bin/sh
# cbottleneck from a bundle (tools/gpu_bundle.sh): its libraries for it alone.
here=\$(cd "\$(dirname "\$0")" && pwd)
CBN_AGENT_DIR="\$here/lib" exec $loader --library-path "\$here/deps" "\$here/cbottleneck.bin" "\$@"
EOF
chmod 755 "$out/cbottleneck"
# The benches look for the launcher beside them.
sed -i "s#^cbn=.*#cbn=\${CBN:-\$here/../cbottleneck}#" "$out/bench/gpu_step.sh" "$out/bench/gpu_ops.sh"
du -sh "$out" | awk -v o="$out" '{ print "gpu_bundle: " o " (" $1 ")" }'
