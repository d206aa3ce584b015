#!/usr/bin/env bash
# Prepares Go's runtime patched for many plugins (install/goruntime/type.go.patch
# says what and why): the local Go's src/runtime/type.go with the patch
# applied, as type.go.patched (not a .go file, so that go vet ./... and
# go build ./... pass it by), and overlay.json, which puts it in place of the
# original in a build (go build -overlay), in build/goruntime/KEY, where KEY
# hashes the original, the patch and this script. Prints the overlay's path. A directory once made is never
# changed, as running kernels build their cells with it.
#
# The patch is applied only to the Go versions it was checked on, listed in
# install/goruntime/VERSIONS. For any other Go, or where the patch does not
# apply, it prints nothing and one line on stderr, "goruntime: unpatched: "
# and why, which install/build.sh writes into the binary for `gotrain version`:
# gotrain then builds on the runtime as it is, and a session's cells load more
# slowly as it grows.
#
# usage: install/goruntime.sh
# GOTRAIN_GOVERSION, when set, stands for `go env GOVERSION` in the check
# against the list (to test the check, or to try the patch on a new Go).
set -euo pipefail
self=$(realpath "$0") # hashed into the key below, after the cd
cd "$(dirname "$0")/.."
patchfile=install/goruntime/type.go.patch
versions=install/goruntime/VERSIONS
unpatched() {
	echo "goruntime: unpatched: $*" >&2
	exit 0
}
version=${GOTRAIN_GOVERSION:-$(go env GOVERSION)}
if ! grep -v '^#' "$versions" | grep -qxF -- "$version"; then
	unpatched "$version is not in $versions, the Go versions the patch was checked on"
fi
goroot=$(go env GOROOT)
original=$goroot/src/runtime/type.go
key=$(cat "$original" "$patchfile" "$self" | sha256sum | cut -c1-16)
out=$PWD/build/goruntime/$key
case "$out$original" in
*'"'* | *'\'*)
	unpatched "a path holds a quote or a backslash, which the overlay's JSON would need escaped: $out, $original"
	;;
esac
if [ -f "$out/overlay.json" ]; then
	echo "$out/overlay.json"
	exit 0
fi
if ! command -v patch >/dev/null; then
	unpatched "the patch command is missing (apt-get install patch)"
fi
mkdir -p "$PWD/build/goruntime"
tmp=$(mktemp -d "$PWD/build/goruntime/.new-XXXXXX")
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
cp "$original" "$tmp/type.go.patched"
# --fuzz=0: every hunk applies exactly where its context says, or none does.
if ! patch --silent --forward --fuzz=0 --reject-file=- "$tmp/type.go.patched" "$patchfile" >/dev/null; then
	unpatched "$patchfile does not apply to $original ($(go env GOVERSION))"
fi
printf '{"Replace": {"%s": "%s"}}\n' "$original" "$out/type.go.patched" >"$tmp/overlay.json"
# Another run may have made it meanwhile; the same key holds the same files.
mv -T "$tmp" "$out" 2>/dev/null || true
echo "$out/overlay.json"
