#!/usr/bin/env bash
# gpu-build.sh builds, here, everything scripts/gpu-check.sh runs on a
# machine with an NVIDIA GPU and no Go (issue 13): static binaries without
# cgo (CGO_ENABLED=0 -tags cuda,noopenblas; package gpu loads the CUDA
# libraries at run time), into bin/:
#   bin/gpucheck                     the sgemm peak and the MLP benchmark
#   bin/{gpu,loops,graph,strategy}.test   the packages' cuda tests
# gorgoniamodel/ is left out: gorgonia.org/cu does not build under the cuda tag.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
export CGO_ENABLED=0
tags=cuda,noopenblas
mkdir -p bin
go build -tags "$tags" -o bin/gpucheck ./cmd/gpucheck
for p in gpu internal/loops graph strategy; do
	go test -c -tags "$tags" -o "bin/${p##*/}.test" "./$p"
done
ls -l bin/gpucheck bin/*.test
