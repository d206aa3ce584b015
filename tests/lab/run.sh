#!/usr/bin/env bash
# run.sh sets up and runs the JupyterLab application test: Debian's
# jupyterlab_server and Chromium (tests/web/setup.sh, plus
# python3-jupyterlab-server), the pinned npm packages (npm ci from
# package-lock.json, skipped when node_modules matches it), the webpack
# bundle in build/lab (rebuilt only when the sources or the lock file
# change), then lab.test.mjs. JUPYTER_PATH must find the gotrain kernelspec
# (scripts/test.sh installs it under build/jupyter).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

"$root/tests/web/setup.sh"
if [ ! -e /usr/lib/python3/dist-packages/jupyterlab_server/app.py ]; then
	sudo_cmd=()
	if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
	echo "tests/lab/run.sh: installing python3-jupyterlab-server" >&2
	"${sudo_cmd[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq python3-jupyterlab-server >&2
fi

stamp="$here/node_modules/.gotrain-lock.sha256"
lock_sum="$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$lock_sum" ]; then
	echo "tests/lab/run.sh: npm ci" >&2
	(cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)
	echo "$lock_sum" >"$stamp"
fi

export GOTRAIN_LAB_BUILD="${GOTRAIN_LAB_BUILD:-$root/build/lab}"
src_sum="$(cat "$here/package-lock.json" "$here/webpack.config.js" "$here/src/"*.js | sha256sum | cut -d' ' -f1)"
if [ ! -f "$GOTRAIN_LAB_BUILD/bundle.js" ] || [ "$(cat "$GOTRAIN_LAB_BUILD/.gotrain-src.sha256" 2>/dev/null)" != "$src_sum" ]; then
	echo "tests/lab/run.sh: webpack build into $GOTRAIN_LAB_BUILD" >&2
	rm -rf "$GOTRAIN_LAB_BUILD"
	(cd "$here" && node_modules/.bin/webpack >&2)
	echo "$src_sum" >"$GOTRAIN_LAB_BUILD/.gotrain-src.sha256"
fi

cd "$root"
node --test --test-concurrency=1 tests/lab/lab.test.mjs
