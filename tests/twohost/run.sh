#!/usr/bin/env bash
# Two hosts on one machine: two network namespaces joined by a veth pair,
# each with its own host name (a UTS namespace) and an /etc/hosts naming
# both. OpenMPI reaches the second "host" through a launcher script that
# enters its namespaces, as it would reach a real one over ssh
# (OMPI_MCA_plm_rsh_agent). The Jupyter client and the kernel run on the
# first host; test_twohost.py trains the quick start on one worker per host
# and checks the weights against one process, then cuts the second host's
# link mid-training. Needs root (ip netns) and
# what install/setup.sh installs (iproute2, openmpi-bin, the kernelspec).
#
# usage: tests/twohost/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
if [ "$(id -u)" -ne 0 ]; then
	echo "tests/twohost: needs root for ip netns (run as root, as CI does)" >&2
	exit 1
fi
export JUPYTER_PATH=${JUPYTER_PATH:-$root/build/jupyter/share/jupyter}

a=gth$$a b=gth$$b
tmp=$(mktemp -d)
cleanup() {
	# A host cut off leaves its daemon and worker behind.
	for ns in "$a" "$b"; do
		pids=$(ip netns pids "$ns" 2>/dev/null || true)
		[ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
	done
	ip netns del "$a" 2>/dev/null || true
	ip netns del "$b" 2>/dev/null || true
	rm -rf "/etc/netns/$a" "/etc/netns/$b" "$tmp"
}
trap cleanup EXIT

for ns in "$a" "$b"; do
	ip netns add "$ns"
	mkdir -p "/etc/netns/$ns"
	# ip netns exec bind-mounts this over /etc/hosts in the namespace.
	printf '127.0.0.1 localhost\n10.77.0.1 %s\n10.77.0.2 %s\n' "$a" "$b" >"/etc/netns/$ns/hosts"
	ip -n "$ns" link set lo up
done
ip link add "v$a" type veth peer name "v$b"
ip link set "v$a" netns "$a"
ip link set "v$b" netns "$b"
ip -n "$a" addr add 10.77.0.1/24 dev "v$a"
ip -n "$b" addr add 10.77.0.2/24 dev "v$b"
ip -n "$a" link set "v$a" up
ip -n "$b" link set "v$b" up

# OpenMPI's rsh launcher calls AGENT HOST COMMAND…, where COMMAND is shell
# text for the remote login shell (with -x PATH it starts "PATH=…"); this
# agent enters HOST's namespaces instead of logging in, and has sh run it.
cat >"$tmp/agent" <<'AGENT'
#!/bin/sh
host=$1
shift
exec ip netns exec "$host" unshare --uts sh -c "hostname $host; $*"
AGENT
chmod +x "$tmp/agent"
printf '%s slots=1\n%s slots=1\n' "$a" "$b" >"$tmp/hosts"

export OMPI_MCA_plm_rsh_agent=$tmp/agent GOTRAIN_HOSTFILE=$tmp/hosts GOTRAIN_HOSTS="$a $b" GOTRAIN_TWOHOST_DIR=$tmp \
	GOTRAIN_TWOHOST_LINK="$b v$b"
ip netns exec "$a" unshare --uts sh -c "hostname $a; exec /usr/bin/python3 -m unittest -v tests/twohost/test_twohost.py"
