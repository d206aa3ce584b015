#!/usr/bin/env bash
# Benchmarks, side by side with their references on this machine, in one run.
# Prints figures and ratios; asserts nothing (tests never assert on time).
#
#   scripts/bench.sh [kernel|mlp|gpt|rnn|resnet|gorgonia|all]    (default all)
# Needs ../shared/bench beside the checkout and Debian's python3-torch for mlp
# and gpt; gpt also ../shared/data/tinyshakespeare.txt. GPT_ITERS (default
# 2000) and GPT_ITERS64 (default 200) set gpt's iterations.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
ref=${GOTRAIN_BENCH_REF:-../shared/bench}
what=${1:-all}
install/build.sh bin/gotrain mpi

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

if [ "$what" = kernel ] || [ "$what" = all ]; then
	echo "== kernel round trip: execute_request '1+1', 300 times (jupyter_client)"
	bin/gotrain install --prefix "$PWD/build/jupyter" >/dev/null
	export JUPYTER_PATH="$PWD/build/jupyter/share/jupyter"
	g=$(/usr/bin/python3 "$ref/kernel_latency.py" gotrain '1+1' 300)
	p=$(/usr/bin/python3 "$ref/kernel_latency.py" python3 '1+1' 300)
	echo "$g"; echo "$p"
	gp50=$(sed -E 's/.*p50 ([0-9.]+) ms.*/\1/' <<<"$g"); pp50=$(sed -E 's/.*p50 ([0-9.]+) ms.*/\1/' <<<"$p")
	gs=$(sed -E 's/.*startup ([0-9.]+) ms.*/\1/' <<<"$g"); ps=$(sed -E 's/.*startup ([0-9.]+) ms.*/\1/' <<<"$p")
	echo "ratio gotrain/ipykernel: execute p50 $(ratio "$gp50" "$pp50")x, startup $(ratio "$gs" "$ps")x (lower is better)"
	echo "== start-up to the first kernel_info_reply (the script above adds jupyter_client's iopub check)"
	/usr/bin/python3 scripts/first_reply.py gotrain 7 2>/dev/null
	/usr/bin/python3 scripts/first_reply.py python3 7 2>/dev/null
	echo "== output: 100,000 lines printed by a loop (complete and in order), and one print's latency"
	/usr/bin/python3 scripts/stream_bench.py gotrain 2>/dev/null
	/usr/bin/python3 scripts/stream_bench.py python3 2>/dev/null
	echo "== compiled cells: a new trivial cell, and compute in a cell against the same code under go run"
	/usr/bin/python3 scripts/cells_bench.py 40 2>/dev/null
fi

if [ "$what" = mlp ] || [ "$what" = all ]; then
	if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
		echo "bench: Debian's python3-torch is missing: apt-get install -y python3-torch" >&2
		exit 1
	fi
	dims=784,512,512,10
	common=(--dims "$dims" --batch 256 --steps 200)
	echo "== MLP $dims, float32, global batch 256, Adam"
	gbench() {
		local out
		out=$(bin/gotrain bench mlp "${common[@]}" --dtype f32 "$@")
		echo "$out" >&2
		awk '/^samples\/s:/ { print $2 }' <<<"$out"
	}
	g11=$(gbench --replicas 1 --threads 1)
	g1=$(gbench --replicas 1)
	g2=$(gbench --replicas 2)
	gw2=$(gbench --workers 2 --replicas 1)
	rate() { sed -E 's/.*: ([0-9.]+) samples\/s/\1/' <<<"$1"; }
	# torch.set_num_threads(1) does not bound Debian's OpenBLAS, so "single 1"
	# runs on two BLAS threads here; pinning OpenBLAS gives the one-core figure.
	t1=$(OPENBLAS_NUM_THREADS=1 /usr/bin/python3 "$ref/torch_mlp.py" single 1 "${common[@]}")
	t1s=$(/usr/bin/python3 "$ref/torch_mlp.py" single 1 "${common[@]}")
	t2=$(/usr/bin/python3 "$ref/torch_mlp.py" ddp 2 "${common[@]}")
	echo "$t1 (OPENBLAS_NUM_THREADS=1)"; echo "$t1s (as the script runs it)"; echo "$t2"
	echo "ratio gotrain 1 replica 1 thread / torch single, 1 BLAS thread:   $(ratio "$g11" "$(rate "$t1")")x (higher is better)"
	echo "ratio gotrain 1 replica / torch single 1 as the script runs it:   $(ratio "$g1" "$(rate "$t1s")")x"
	echo "ratio gotrain 2 replicas / gotrain 1 replica on 1 core (scaling): $(ratio "$g2" "$g11")x"
	echo "ratio gotrain 2 replicas / torch ddp gloo 2:                      $(ratio "$g2" "$(rate "$t2")")x"
	echo "ratio gotrain 2 workers x 1 replica / 1 process x 2 replicas:     $(ratio "$gw2" "$g2")x"
	echo "ratio gotrain 2 workers x 1 replica / torch ddp gloo 2:           $(ratio "$gw2" "$(rate "$t2")")x"
	echo "== seed model 10-16-2, global batch 64, 2 replicas (Run+Reduce overhead dominates)"
	bin/gotrain bench mlp --dims 10,16,2 --batch 64 --steps 20000 --replicas 2 | awk '/^samples\/s:/ { printf "%.1f µs per step\n", 64e6 / $2 }'
fi

if [ "$what" = gpt ] || [ "$what" = all ]; then
	if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
		echo "bench: Debian's python3-torch is missing: apt-get install -y python3-torch" >&2
		exit 1
	fi
	text=${GOTRAIN_BENCH_DATA:-$ref/../data/tinyshakespeare.txt}
	iters=${GPT_ITERS:-2000}
	common=(--data "$text" --iters "$iters" --batch 12)
	# last runs a benchmark, printing its lines as they come, and keeps its
	# last line (the summary) in $last.
	last=
	run() {
		local f
		f=$(mktemp)
		"$@" | tee "$f"
		last=$(tail -n 1 "$f")
		rm -f "$f"
	}
	field() { sed -E "s|.*[:,] ([0-9.]+) $1.*|\1|" <<<"$2"; }
	val() { sed -E 's/.*val loss ([0-9.]+).*/\1/' <<<"$1"; }
	echo "== GPT 4 layers x 4 heads, 128 wide, context 64, global batch 12, $iters iterations, AdamW (torch_gpt.py's schedule)"
	echo "load before: $(uptime)"
	# Interleaved, gotrain and PyTorch by turns, so that a change in the
	# machine's load falls on both.
	run bin/gotrain bench gpt "${common[@]}" --replicas 2; g2=$last
	run /usr/bin/python3 "$ref/torch_gpt.py" "${common[@]}" --ddp 2; td=$last
	run bin/gotrain bench gpt "${common[@]}" --replicas 1 --threads 2; g1=$last
	run /usr/bin/python3 "$ref/torch_gpt.py" "${common[@]}" --threads 2; t2=$last
	echo "load after: $(uptime)"
	echo "$g2"; echo "$g1"; echo "$td"; echo "$t2"
	tb=$(awk -v a="$(field tokens/s "$td")" -v b="$(field tokens/s "$t2")" 'BEGIN { print (a > b ? a : b) }')
	tv=$(awk -v a="$(val "$td")" -v b="$(val "$t2")" 'BEGIN { print (a < b ? a : b) }')
	diff() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.4f", a - b }'; }
	echo "ratio gotrain 2 replicas / PyTorch's best tokens/s:           $(ratio "$(field tokens/s "$g2")" "$tb")x (target ≥ 1.5)"
	echo "ratio gotrain 1 replica, 2 threads / PyTorch's best tokens/s: $(ratio "$(field tokens/s "$g1")" "$tb")x"
	echo "ratio gotrain 2 replicas / torch ddp 2, / torch 2 threads:     $(ratio "$(field tokens/s "$g2")" "$(field tokens/s "$td")")x, $(ratio "$(field tokens/s "$g2")" "$(field tokens/s "$t2")")x"
	echo "val loss gotrain 2 replicas - PyTorch's lower:                $(diff "$(val "$g2")" "$tv") (target ≤ +0.03)"
	echo "val loss gotrain 1 replica - PyTorch's lower:                 $(diff "$(val "$g1")" "$tv")"
	echo "val loss torch ddp 2 - torch 2 threads:                       $(diff "$(val "$td")" "$(val "$t2")")"
	it64=${GPT_ITERS64:-200}
	echo "== the same at global batch 64, $it64 iterations: replica scaling"
	b64=(--data "$text" --iters "$it64" --batch 64 --eval-every "$it64" --eval-iters 1)
	run bin/gotrain bench gpt "${b64[@]}" --replicas 2; s2=$last
	run bin/gotrain bench gpt "${b64[@]}" --replicas 1 --threads 1; s1=$last
	echo "ratio gotrain 2 replicas / 1 replica on 1 thread, batch 64:   $(ratio "$(field tokens/s "$s2")" "$(field tokens/s "$s1")")x (target ≥ 1.7)"
	echo "load after: $(uptime)"
fi

if [ "$what" = rnn ] || [ "$what" = all ]; then
	# gotrain bench rnn runs scripts/torch_rnn.py itself, in turns with its
	# own runs, and prints the ratio of the medians.
	echo "load before: $(uptime)"
	bin/gotrain bench rnn --replicas 2 --rounds 3
	echo "load after: $(uptime)"
fi

if [ "$what" = resnet ] || [ "$what" = all ]; then
	if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
		echo "bench: Debian's python3-torch is missing: apt-get install -y python3-torch" >&2
		exit 1
	fi
	# gotrain 2 replicas, 1 replica on 1 thread and scripts/torch_resnet.py
	# (2 threads NCHW and channels_last, DDP 2 x 1 thread channels_last), by
	# turns, twice; the ratios take the medians, against PyTorch's best.
	# Then the step's convolutions, timed beside the FMA peaks.
	bin/gotrain bench resnet --replicas 2 --batch 128 --rounds 2 --torch scripts/torch_resnet.py
fi

if [ "$what" = gorgonia ] || [ "$what" = all ]; then
	echo "== MLP 784,512,512,10 in gorgonia: through gorgoniamodel (the bridge), plain gorgonia, gotrain's engine; float32, batch 256, Adam"
	out=$(go test -run '^$' -bench '^BenchmarkMLP$' -benchtime 40x -count 3 ./gorgoniamodel)
	# The rounds interleave (-count runs every sub-benchmark once per round);
	# each figure is the median of the 3.
	med() { grep "BenchmarkMLP/$1-" <<<"$out" | awk '{ print $(NF-1) }' | sort -n | sed -n 2p; }
	for k in bridge/replicas=1 bridge/replicas=2 gorgonia/replicas=1 gotrain/replicas=1 gotrain/replicas=2; do
		printf '%-22s %s samples/s (median of 3)\n' "$k" "$(med "$k")"
	done
	echo "ratio bridge 1 replica / plain gorgonia:        $(ratio "$(med bridge/replicas=1)" "$(med gorgonia/replicas=1)")x (higher is better)"
	echo "ratio bridge 2 replicas / plain gorgonia:       $(ratio "$(med bridge/replicas=2)" "$(med gorgonia/replicas=1)")x"
	echo "ratio bridge 1 replica / gotrain 1 replica:     $(ratio "$(med bridge/replicas=1)" "$(med gotrain/replicas=1)")x"
	echo "ratio bridge 2 replicas / gotrain 2 replicas:   $(ratio "$(med bridge/replicas=2)" "$(med gotrain/replicas=2)")x"
fi
