# The two commands of the README's quick start, and their parts.
#   make demo   install what is missing, build, run the main example
#   make test   install what is missing, build, run every test
BUILD ?= build
TRAINYARD := $(BUILD)/src/cli/trainyard
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Debug
# The tests' build: clang, whose sanitized builds compile in half GCC's
# time, with AddressSanitizer (leaks included) and UBSan, warnings as errors;
# a unity build (eight sources a unit) halves it again, as most of the time
# goes to instantiating the same templates in every source.
CHECK := build-check
CHECK_FLAGS := -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DTRAINYARD_SANITIZE=ON -DTRAINYARD_WERROR=ON -DTRAINYARD_BENCH=OFF -DCMAKE_UNITY_BUILD=ON

# The optimized build the benchmarks' figures come from (GCC, Release), as
# users make it but with warnings as errors and ThreadSanitizer: trainyard
# and the benchmarks must build, and the tests of the concurrent parts (the
# store, the API server and its HTTP threads, the engine's inbox) run
# under TSan. One build serves both, to spare the 2-core CI machine.
OPT := build-opt
OPT_FLAGS := -DCMAKE_BUILD_TYPE=Release -DTRAINYARD_WERROR=ON -DTRAINYARD_TSAN=ON \
  -DCMAKE_UNITY_BUILD=ON
OPT_TESTS := src/store/store_test src/server/server_test src/engine/engine_test

.PHONY: demo test deps build unit check opt fuzz format format-check clean operator-image

# Debian's Python packages belong to /usr/bin/python3, which comes first.
# The example is ours: its replicas run as whoever runs it, root included
# (root's would otherwise be nobody's, which cannot reach a clone in /root).
# Only what the demo runs is built (trainyard and its shim, not the tests):
# a unity build, which compiles in about half the time.
demo: deps
	@cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS) -DCMAKE_UNITY_BUILD=ON >/dev/null
	@echo "building trainyard (the first time takes a few minutes; [done/total] steps below)"
	@cmake --build $(BUILD) --target trainyard trainyard-shim
	PATH=/usr/bin:$$PATH $(TRAINYARD) run --run-as "$$(id -un)" examples/pytorch-digits.yaml

test: deps format-check check opt fuzz

deps:
	@scripts/install-deps.sh
	@scripts/web-deps.sh

build:
	@cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD)

# The unit tier, in a plain build: the quick loop while developing (the
# end-to-end tiers, ctest -L e2e and -L slow, are the test command's too).
unit: build
	cd $(BUILD) && ctest --output-on-failure -j2 -L unit

# Every test, under the sanitizers: what `make test` runs. One build, so
# that the 2-core CI machine compiles the project once.
check:
	@cmake -S . -B $(CHECK) -G Ninja $(CHECK_FLAGS) >/dev/null
	@cmake --build $(CHECK)
	cd $(CHECK) && ctest --output-on-failure -j2
	@scripts/skipped.sh $(CHECK)

opt:
	@cmake -S . -B $(OPT) -G Ninja $(OPT_FLAGS) >/dev/null
	@cmake --build $(OPT) --target trainyard trainyard-shim \
	  codec_bench launch_bench api_load scheduler_bench tune_bench reconcile_bench soak \
	  $(notdir $(OPT_TESTS))
	@for t in $(OPT_TESTS); do echo "TSan: $$t"; \
	  TRAINYARD_SOURCE_DIR=$(CURDIR) TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" $(OPT)/$$t --gtest_brief=1 || exit 1; done

fuzz:
	scripts/fuzz.sh

# The operator's container image (docs/kubernetes.md), from a Release build
# of trainyard alone: build-release/trainyard-operator.tar, an oci-archive.
RELEASE := build-release
operator-image: deps
	@cmake -S . -B $(RELEASE) -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRAINYARD_TESTS=OFF \
	  -DTRAINYARD_BENCH=OFF >/dev/null
	@cmake --build $(RELEASE) --target trainyard
	@scripts/operator-image.sh $(RELEASE)/src/cli/trainyard $(RELEASE)

format:
	@git ls-files '*.cc' '*.h' | xargs clang-format -i

# The format, and the shape limits of docs/architecture.md (file and
# function lengths, kind-name comparisons).
format-check:
	@git ls-files '*.cc' '*.h' | xargs clang-format --dry-run --Werror
	@/usr/bin/python3 scripts/shape.py

clean:
	rm -rf $(BUILD) $(CHECK) $(OPT) $(RELEASE) build-fuzz
