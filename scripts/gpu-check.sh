#!/usr/bin/env bash
# gpu-check.sh is the device check of issue 13, for a machine with an
# NVIDIA GPU, its driver and CUDA libraries (cuBLAS, NVRTC; NCCL optional)
# and no Go: it runs what scripts/gpu-build.sh put in bin/, in under 5
# minutes, one line per figure:
#   nvidia-smi;
#   the cuda tests of gpu, internal/loops, graph and strategy against the real
#   libraries (GOTRAIN_GPU_REAL=1);
#   the equivalence test (GPU replicas ≡ one CPU replica) on one GPU with 1,
#   2 and 4 replicas;
#   bin/gpucheck: the cuBLAS sgemm peak, then MLP 784-512-512-10 and
#   4096-4096-4096-10, float32, batch 256 and 4096, Adam: samples/s and the
#   fraction of the peak.
# GOTRAIN_GPU_FAKE=1 runs the same steps against the fake libraries (no
# nvidia-smi), to check this script's logic where there is no GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
step() { echo "== $*"; }
run() {
	local name=$1
	shift
	local t0=$SECONDS
	if timeout "${LIMIT:-120}" "$@" >"/tmp/gpu-check-$name.log" 2>&1; then
		echo "$name: ok ($((SECONDS - t0)) s)"
	else
		echo "$name: FAIL ($((SECONDS - t0)) s), last lines:"
		tail -n 20 "/tmp/gpu-check-$name.log"
		status=1
	fi
}

if [ "${GOTRAIN_GPU_FAKE:-}" = 1 ]; then
	step "fake CUDA libraries (GOTRAIN_GPU_FAKE=1)"
	unset GOTRAIN_GPU_REAL
else
	step nvidia-smi
	nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv || status=1
	export GOTRAIN_GPU_REAL=1
	for lib in libcuda.so.1 libcublas.so libnvrtc.so libnccl.so.2; do
		path=$(ldconfig -p 2>/dev/null | awk -v l="$lib" '$1 ~ "^"l {print $NF; exit}')
		echo "$lib: ${path:-not found by ldconfig}"
	done
fi

step "cuda tests"
run gpu bin/gpu.test -test.timeout 110s
run loops bin/loops.test -test.timeout 110s
run graph bin/graph.test -test.run 'Device|Mirror|OpTable' -test.timeout 110s
run strategy bin/strategy.test -test.run 'Issue13' -test.timeout 110s

step "equivalence on gpu:0 with 1, 2 and 4 replicas"
GOTRAIN_GPU_DEVICES=1 timeout 120 bin/strategy.test -test.run 'Issue13GPUReplicasMatchOneCPU' -test.v 2>&1 |
	awk '/^ *--- (PASS|FAIL).*gpu0/ {print $2, $3} /largest relative/ {sub(/.*largest/, "  largest"); print} /differs by/ {print}' ||
	status=1

step "benchmark"
LIMIT=200 run gpucheck bin/gpucheck
cat /tmp/gpu-check-gpucheck.log

echo "gpu-check: $([ $status = 0 ] && echo ok || echo FAILED) in $SECONDS s"
exit $status
