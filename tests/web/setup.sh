#!/usr/bin/env bash
# setup.sh installs what the web tests need: Debian's jupyter-server, classic
# Notebook 6 and Chromium (never a browser download), then the pinned npm
# packages from package-lock.json. It is idempotent: packages already present
# are skipped, and so is `npm ci` when node_modules matches the lock file.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
	sudo_cmd=(sudo)
fi

# Debian package -> a file that proves it is installed. Checking files rather
# than dpkg status keeps the fast path free of dpkg locks.
declare -A want=(
	[jupyter-server]=/usr/lib/python3/dist-packages/jupyter_server/__main__.py
	[jupyter-notebook]=/usr/lib/python3/dist-packages/notebook/__main__.py
	[chromium]=/usr/bin/chromium
	[nodejs]=/usr/bin/node
	[npm]=/usr/bin/npm
)
missing=()
for pkg in "${!want[@]}"; do
	if [ ! -e "${want[$pkg]}" ]; then
		missing+=("$pkg")
	fi
done
if [ "${#missing[@]}" -gt 0 ]; then
	echo "tests/web/setup.sh: installing ${missing[*]}" >&2
	"${sudo_cmd[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >&2
fi

# node:test, global fetch and the ESM loader these tests use need Node 20.
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
	echo "tests/web/setup.sh: want Node.js >= 20, got $(node --version)" >&2
	exit 1
fi

# npm ci wipes and reinstalls node_modules; skip it when the installed tree
# was made from this very lock file (a stamp holds the lock file's hash).
stamp="$here/node_modules/.gotrain-lock.sha256"
lock_sum="$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$lock_sum" ]; then
	echo "tests/web/setup.sh: npm ci" >&2
	(cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)
	echo "$lock_sum" >"$stamp"
fi
