#!/usr/bin/env bash
# Several workers against one process, side by side in one run (issue 12):
# the MLP on 2 worker processes × 1 replica over the loopback cluster, on
# 2 MPI ranks × 1 replica under mpirun (what %workers -np runs), on
# 1 process × 2 replicas, and PyTorch DDP over gloo on 2 ranks. The four
# run interleaved, ROUNDS rounds (default 3); each figure is the median.
# Prints samples/s and ratios, and appends them, with the commit and the
# load average, to $GOTRAIN_BENCH_REF/bench-workers.md. Asserts nothing
# (tests never assert on time).
#
#   scripts/bench-workers.sh [LABEL]    (LABEL names the run in the results file)
# Needs ../shared/bench beside the checkout and Debian's python3-torch.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
ref=${GOTRAIN_BENCH_REF:-../shared/bench}
rounds=${ROUNDS:-3}
label=${1:-}
install/build.sh bin/gotrain mpi
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	echo "bench-workers: Debian's python3-torch is missing: apt-get install -y python3-torch" >&2
	exit 1
fi

dims=784,512,512,10
common=(--dims "$dims" --batch 256 --steps 200)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
med() { tr ' ' '\n' <<<"$*" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
gbench() { bin/gotrain bench mlp "${common[@]}" --dtype f32 "$@" | awk '/^samples\/s:/ { print $2 }'; }
# mpirun starts ranks as root only when told twice; CI runs as root.
if [ "$(id -u)" -eq 0 ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
mbench() {
	GOTRAIN_CLUSTER=mpi OMPI_MCA_btl=self,vader,tcp mpirun --bind-to none -np 2 -x GOTRAIN_CLUSTER \
		bin/gotrain bench mlp "${common[@]}" --dtype f32 --workers 2 --replicas 1 | awk '/^samples\/s:/ { print $2 }'
}
tbench() { /usr/bin/python3 "$ref/torch_mlp.py" ddp 2 "${common[@]}" | sed -E 's/.*: ([0-9.]+) samples\/s/\1/'; }

load0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "== MLP $dims, float32, global batch 256, Adam; $rounds rounds interleaved; load $load0"
w=() m=() p=() t=()
for r in $(seq "$rounds"); do
	w+=("$(gbench --workers 2 --replicas 1)")
	m+=("$(mbench)")
	p+=("$(gbench --replicas 2)")
	t+=("$(tbench)")
	printf 'round %d: 2 workers × 1 replica %6s   2 MPI ranks × 1 %6s   1 process × 2 replicas %6s   torch ddp gloo 2 %6s samples/s (load %s)\n' \
		"$r" "${w[-1]}" "${m[-1]}" "${p[-1]}" "${t[-1]}" "$(cut -d' ' -f1 /proc/loadavg)"
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
mw=$(med "${w[@]}") mm=$(med "${m[@]}") mp=$(med "${p[@]}") mt=$(med "${t[@]}")
spread() { tr ' ' '\n' <<<"$*" | sort -n | awk '{ v[NR] = $1 } END { printf "%.0f%%", 100 * (v[NR] - v[1]) / v[int((NR + 1) / 2)] }'; }
summary=$(
	printf '%-28s %8s %8s %8s %8s\n' "" "loopback" "mpi" "process" "ddp"
	printf '%-28s %8s %8s %8s %8s\n' "median samples/s" "$mw" "$mm" "$mp" "$mt"
	printf '%-28s %8s %8s %8s %8s\n' "spread (max-min)/median" "$(spread "${w[@]}")" "$(spread "${m[@]}")" "$(spread "${p[@]}")" "$(spread "${t[@]}")"
	echo "ratio 2 workers × 1 replica / 1 process × 2 replicas: loopback $(ratio "$mw" "$mp")x, mpi $(ratio "$mm" "$mp")x (target ≥ 0.9)"
	echo "ratio 2 workers × 1 replica / torch ddp gloo 2:       loopback $(ratio "$mw" "$mt")x, mpi $(ratio "$mm" "$mt")x (target ≥ 2)"
	echo "ratio 1 process × 2 replicas / torch ddp gloo 2:      $(ratio "$mp" "$mt")x"
)
echo "$summary"
echo "load after: $load1"

{
	echo
	echo "## $(date -u +%Y-%m-%dT%H:%MZ) $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- strategy cmd internal || echo '+changes')${label:+ — $label}"
	echo
	echo "scripts/bench-workers.sh: MLP $dims f32, global batch 256, Adam, 200 steps; $rounds rounds interleaved;"
	echo "load average before $load0, after $load1; $(nproc) cores."
	echo
	echo '```'
	echo "samples/s per round: loopback ${w[*]}; mpi ${m[*]}; process ${p[*]}; ddp ${t[*]}"
	echo "$summary"
	echo '```'
} >>"$ref/bench-workers.md"
echo "appended to $ref/bench-workers.md"
