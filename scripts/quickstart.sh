#!/usr/bin/env bash
# The main job: set up, build and install the kernel, execute the
# quick-start notebook headless with nbconvert, and print the reduced loss
# of every training step it shows.
set -euo pipefail
cd "$(dirname "$0")/.."
install/setup.sh
mkdir -p build
/usr/bin/python3 -m jupyter nbconvert --to notebook --execute \
	--ExecutePreprocessor.kernel_name=gotrain --ExecutePreprocessor.timeout=600 \
	--output-dir build notebooks/01-quickstart.ipynb
/usr/bin/python3 scripts/show_outputs.py build/01-quickstart.ipynb
