#!/usr/bin/env bash
# run.sh runs the web tests: JupyterLab's client library (lab.test.mjs) and a
# real browser on classic Notebook (browser.test.mjs) driving a kernel.
#
#   tests/web/run.sh [KERNEL]     KERNEL defaults to $GOTRAIN_KERNEL, then gotrain
#
# JUPYTER_PATH is passed through, so a kernelspec installed with
# `bin/gotrain install --prefix P` is found with JUPYTER_PATH=P/share/jupyter.
# When the gotrain kernelspec is nowhere to be found, run.sh builds the binary
# into a temporary prefix and installs the kernelspec there for this run only.
# It exits non-zero when any test fails.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

"$here/setup.sh"

export GOTRAIN_KERNEL="${1:-${GOTRAIN_KERNEL:-gotrain}}"

tmp=""
cleanup() {
	if [ -n "$tmp" ]; then
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT

# Debian's Python: the first python3 on PATH may lack Jupyter.
if ! JUPYTER_PATH="${JUPYTER_PATH:-}" /usr/bin/python3 -m jupyter kernelspec list --json 2>/dev/null |
	/usr/bin/python3 -c 'import json, sys; sys.exit(0 if sys.argv[1] in json.load(sys.stdin)["kernelspecs"] else 1)' "$GOTRAIN_KERNEL"; then
	if [ "$GOTRAIN_KERNEL" != gotrain ]; then
		echo "tests/web/run.sh: kernelspec $GOTRAIN_KERNEL not found (JUPYTER_PATH=${JUPYTER_PATH:-})" >&2
		exit 1
	fi
	tmp="$(mktemp -d /tmp/gotrain-web-kernel-XXXXXX)"
	echo "tests/web/run.sh: no gotrain kernelspec installed; building one into $tmp" >&2
	(cd "$root" && PATH="/usr/local/go/bin:$PATH" install/build.sh "$tmp/bin/gotrain" "")
	"$tmp/bin/gotrain" install --prefix "$tmp/prefix" >&2
	export JUPYTER_PATH="$tmp/prefix/share/jupyter${JUPYTER_PATH:+:$JUPYTER_PATH}"
fi

echo "tests/web/run.sh: kernel $GOTRAIN_KERNEL, JUPYTER_PATH=${JUPYTER_PATH:-}" >&2
cd "$root"
# One test file at a time: each starts a server and a kernel, and the test
# machine has two cores.
node --test --test-concurrency=1 tests/web/
