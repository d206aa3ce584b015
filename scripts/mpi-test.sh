#!/usr/bin/env bash
# Builds internal/mpi's tests with -tags mpi and runs them under mpirun on
# 1, 2, 3 and 4 ranks (oversubscribed where the machine has fewer cores),
# and once without mpirun as a singleton; stops at the first failure, with
# that run's output, each line tagged with its rank. Needs openmpi-bin and
# libopenmpi-dev (install/setup.sh installs them).
#
# usage: scripts/mpi-test.sh [NP...]          (default: 1 2 3 4)
#        scripts/mpi-test.sh bench [NP...]    (BenchmarkAllReduceF32, rank 0's lines; default: 2 4;
#                                             MPI_BENCH: -test.bench pattern, e.g. StepAllReduce;
#                                             MPI_BENCH_COUNT: rounds, default 5, each one mpirun)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH

# mpirun refuses to start ranks as root unless told twice; CI runs as root.
if [ "$(id -u)" -eq 0 ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# Shared memory within the machine, TCP between machines; no probing for
# InfiniBand hardware.
export OMPI_MCA_btl=self,vader,tcp
# --bind-to none: by default mpirun binds each rank to one core, and Go then
# runs it with GOMAXPROCS=1 (TestNotBound checks).
mpirun=(mpirun --oversubscribe --bind-to none)

mkdir -p build
go test -tags mpi -c -o build/mpi.test ./internal/mpi/

mode=test
if [ "${1:-}" = bench ]; then
	mode=bench
	shift
fi
nps=("$@")

if [ $mode = bench ]; then
	[ ${#nps[@]} -gt 0 ] || nps=(2 4)
	for np in "${nps[@]}"; do
		echo "np=$np"
		# Every rank must run the same number of iterations: a fixed count.
		# Each rank's output goes to its own file; rank 0's is shown.
		# One mpirun a round, so that the sub-benchmarks interleave (-test.count
		# runs each one that many times in a row), and a round slowed by the
		# machine's other work shows as one.
		for round in $(seq "${MPI_BENCH_COUNT:-5}"); do
			rm -rf build/mpi-bench
			timeout 900 "${mpirun[@]}" --output-filename build/mpi-bench -np "$np" build/mpi.test -test.run '^$' \
				-test.bench "${MPI_BENCH:-AllReduceF32}" -test.benchtime 100x -test.count 1 \
				-test.timeout 14m >/dev/null || {
				cat build/mpi-bench/1/rank.*/std*
				exit 1
			}
			echo "round $round, load average $(cut -d' ' -f1-3 /proc/loadavg)"
			grep '^Benchmark' build/mpi-bench/1/rank.0/stdout
		done
	done
	exit 0
fi

# run NAME COMMAND…: one line if it passes; else its output, and exit 1.
run() {
	local name=$1 log=build/mpi-test-$1.log start=$SECONDS rc=0
	shift
	timeout 300 "$@" >"$log" 2>&1 || rc=$?
	if [ $rc -eq 0 ]; then
		echo "$name: ok ($((SECONDS - start))s, $(grep -c 'PASS$' "$log") of $ranks ranks passed)"
		return
	fi
	cat "$log"
	[ $rc -ne 124 ] || echo "$name: timed out after 300s" >&2
	echo "$name: FAIL (exit status $rc; log in $log)" >&2
	exit 1
}

ranks=1
run singleton build/mpi.test -test.count=1 -test.timeout=4m
[ ${#nps[@]} -gt 0 ] || nps=(1 2 3 4)
for np in "${nps[@]}"; do
	ranks=$np
	run "np$np" "${mpirun[@]}" --tag-output -np "$np" build/mpi.test -test.count=1 -test.timeout=4m
done
