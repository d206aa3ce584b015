#!/usr/bin/env bash
# Builds gotrain on Go's runtime patched for many plugins where the patch
# applies (install/goruntime.sh), and tells the binary which overlay that was,
# so that its cells are built on the same runtime, as a plugin must be.
#
# usage: install/build.sh [OUTPUT [TAGS]]   (default: bin/gotrain, tags mpi)
set -euo pipefail
cd "$(dirname "$0")/.."
output=${1:-bin/gotrain}
tags=${2-mpi}
overlay=$(install/goruntime.sh)
flags=()
if [ -n "$overlay" ]; then
	# Quoted for go's flag splitting, which would cut a path at a space.
	flags=(-overlay "$overlay" -ldflags "-X 'github.com/gotrain/gotrain/cells.runtimeOverlay=$overlay'")
fi
go build "${flags[@]}" -tags "$tags" -o "$output" ./cmd/gotrain
