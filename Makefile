# Top-level entry points. The README's two commands are `make demo` and
# `make test`; both install missing Debian packages first.

BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= $(shell nproc)
# Build: compiler, CMake, OpenBLAS (pthreads build), cmocka, zlib, Open MPI
# (distributed runs and their tests, with mpirun). Data: the
# Fashion-MNIST package. Tests also read a checkpoint back with PyTorch. The
# Python front end (python/) builds against python3-dev; its pytest suite
# compares with torch and numpy, and so does tests/torch_diff (every op).
PACKAGES = cmake gcc make pkg-config libopenblas-pthread-dev libdnnl-dev libcmocka-dev zlib1g-dev dataset-fashion-mnist \
  libopenmpi-dev openmpi-bin
TEST_PACKAGES = python3-torch python3-dev python3-numpy python3-pytest
# `pip install --no-build-isolation ./python` in a virtual environment: the
# compiler, OpenBLAS, oneDNN and zlib the extension links, Open MPI's header, Python's
# headers, venv, setuptools and wheel, and the example's data.
PYTHON_PACKAGES = gcc pkg-config libopenblas-pthread-dev libdnnl-dev zlib1g-dev libopenmpi-dev python3-dev python3-venv \
  python3-setuptools python3-wheel dataset-fashion-mnist

.PHONY: all deps deps-test deps-python install-packages build install build-asan test test-fast test-asan bench bench-compile bench-peers demo fuzz fuzz-build clean

all: build

# Installs the Debian packages that are missing (needs root or sudo).
deps:
	@$(MAKE) --no-print-directory install-packages LIST="$(PACKAGES)"

deps-test:
	@$(MAKE) --no-print-directory install-packages LIST="$(PACKAGES) $(TEST_PACKAGES)"

# The Debian packages of the README's Python quick start.
deps-python:
	@$(MAKE) --no-print-directory install-packages LIST="$(PYTHON_PACKAGES)"

install-packages:
	@missing=""; for p in $(LIST); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -q && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	fi

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j $(JOBS)

# Installs the library (shared and static), lazytensor.h, lazytensor.pc
# (pkg-config) and the CMake package (find_package(lazytensor)) under PREFIX,
# staged below DESTDIR when it is set, e.g.
# `make install PREFIX=$HOME/.local` or `make install DESTDIR=/tmp/stage`.
PREFIX ?= /usr/local
# As root, into the real system (no DESTDIR), ldconfig then makes the new
# shared library known to the loader.
install: build
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" -eq 0 ]; then ldconfig; fi

build-asan: deps-test
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DLT_SANITIZE=ON -DLT_BUILD_BENCH=OFF
	cmake --build $(ASAN_BUILD) -j $(JOBS)

# The whole suite: optimized build, then the AddressSanitizer+UBSan build.
test: test-fast test-asan

test-fast: deps-test build
	cd $(BUILD) && ctest --output-on-failure -j 2

test-asan: build-asan
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j 2

bench: build
	$(BUILD)/bench/eager

# Cold compile time against graph size: chains of 100, 1,000 and 10,000
# elementwise ops and the GPT training step, each with a fresh cache
# (bench/compile_scaling.c). Options go in SCALING_ARGS, e.g.
# `make bench-compile SCALING_ARGS="--repeats 5"`.
bench-compile: build
	$(BUILD)/bench/compile_scaling $(SCALING_ARGS)

# Our lazy and eager devices against torch eager, torch.compile, torch_xla and
# jax.jit (bench/peers/README.md). The peers' virtual environments are made
# from PyPI on first use (several GB). Options go in PEERS_ARGS, e.g.
# `make bench-peers PEERS_ARGS=--quick`.
PEERS_BUILD ?= build-bench
bench-peers:
	@$(MAKE) --no-print-directory install-packages LIST="$(PACKAGES) g++ python3-venv"
	cmake -S . -B $(PEERS_BUILD) -DCMAKE_BUILD_TYPE=Release -DLT_BUILD_TESTS=OFF
	cmake --build $(PEERS_BUILD) -j $(JOBS) --target bench_peers_step bench_tracing
	python3 bench/peers/run.py --build $(PEERS_BUILD) $(PEERS_ARGS)

# The main job: train the MLP on Fashion-MNIST through the lazy device.
demo: build
	$(BUILD)/lazytensor-train --model mlp --device lazy --epochs 2

# Fuzzing (fuzz/README.md): libFuzzer needs clang; the library is built with
# it, instrumented, with ASan + UBSan in its own build dir. `make fuzz` runs
# each fuzzer FUZZ_SECONDS on the corpus kept in fuzz/corpus, writing new
# inputs and findings under FUZZ_WORK, and fails if any fuzzer finds a
# problem. FUZZ_FLAGS adds libFuzzer options.
FUZZ_BUILD ?= build-fuzz
FUZZ_WORK ?= $(FUZZ_BUILD)/work
FUZZ_SECONDS ?= 60
FUZZERS ?= fuzz_safetensors fuzz_idx fuzz_cache fuzz_plan fuzz_program
FUZZ_PACKAGES = clang libclang-rt-14-dev libomp-dev

fuzz-build: deps
	@$(MAKE) --no-print-directory install-packages LIST="$(FUZZ_PACKAGES)"
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DLT_BUILD_FUZZ=ON -DLT_BUILD_TESTS=OFF -DLT_BUILD_BENCH=OFF -DLT_BUILD_EXAMPLES=OFF
	cmake --build $(FUZZ_BUILD) -j $(JOBS)

fuzz: fuzz-build
	sh fuzz/run.sh $(FUZZ_BUILD)/fuzz $(FUZZ_SECONDS) $(FUZZ_WORK) $(FUZZERS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
