#!/usr/bin/env bash
# Prepares Go's runtime patched for many plugins (install/goruntime/type.go.patch
# says what and why): build/goruntime/type.go, the local Go's src/runtime/type.go
# with the patch applied, and build/goruntime/overlay.json, which puts it in
# place of the original in a build (go build -overlay). Prints the overlay's
# path. Where the patch does not apply to this Go, prints nothing and says so
# on stderr: gotrain then builds on the runtime as it is, and a session's cells
# load more slowly as it grows.
#
# usage: install/goruntime.sh
set -euo pipefail
cd "$(dirname "$0")/.."
goroot=$(go env GOROOT)
out=$PWD/build/goruntime
rm -rf "$out"
mkdir -p "$out"
cp "$goroot/src/runtime/type.go" "$out/type.go"
if ! patch --silent --forward --reject-file=- "$out/type.go" install/goruntime/type.go.patch >/dev/null; then
	echo "goruntime: install/goruntime/type.go.patch does not apply to $goroot/src/runtime/type.go ($(go env GOVERSION)); building on the unpatched runtime" >&2
	rm -rf "$out"
	exit 0
fi
printf '{"Replace": {"%s": "%s"}}\n' "$goroot/src/runtime/type.go" "$out/type.go" >"$out/overlay.json"
echo "$out/overlay.json"
