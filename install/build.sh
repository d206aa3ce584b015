#!/usr/bin/env bash
# Builds gotrain on Go's runtime patched for many plugins where the patch
# applies (install/goruntime.sh), and tells the binary which overlay that was,
# so that its cells are built on the same runtime, as a plugin must be, or
# why its runtime is Go's own: `gotrain version` and the kernel's log at start
# say which.
#
# usage: install/build.sh [OUTPUT [TAGS]]   (default: bin/gotrain, tags mpi)
set -euo pipefail
cd "$(dirname "$0")/.."
output=${1:-bin/gotrain}
tags=${2-mpi}
why=$(mktemp)
trap 'rm -f "$why"' EXIT
overlay=$(install/goruntime.sh 2>"$why") || {
	cat "$why" >&2
	exit 1
}
cat "$why" >&2
pkg=github.com/gotrain/gotrain/cells
if [ -n "$overlay" ]; then
	# Quoted for go's flag splitting, which would cut a path at a space.
	ldflags="-X '$pkg.runtimeOverlay=$overlay'"
	flags=(-overlay "$overlay")
else
	# The reason, on one line, without the quotes go's flag splitting reads.
	reason=$(sed -n 's/^goruntime: unpatched: //p' "$why" | tail -1 | tr -d "'\"")
	ldflags="-X '$pkg.runtimeUnpatched=${reason:-install/goruntime.sh gave no overlay}'"
	flags=()
fi
go build "${flags[@]}" -ldflags "$ldflags" -tags "$tags" -o "$output" ./cmd/gotrain
