# The two commands of the README's quick start, and their parts.
#   make demo   install what is missing, build, run the main example
#   make test   install what is missing, build, run every test
BUILD ?= build
TRAINYARD := $(BUILD)/src/cli/trainyard
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Debug

.PHONY: demo test deps build unit asan fuzz format format-check clean

# Debian's Python packages belong to /usr/bin/python3, which comes first.
demo: deps build
	PATH=/usr/bin:$$PATH $(TRAINYARD) run examples/pytorch-digits.yaml

test: deps build format-check unit asan fuzz

deps:
	@scripts/install-deps.sh

build:
	@cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD)

unit: build
	cd $(BUILD) && ctest --output-on-failure -j2

# Every unit test again under AddressSanitizer (leaks included) and UBSan.
asan:
	@cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTRAINYARD_SANITIZE=ON \
	  -DTRAINYARD_BENCH=OFF >/dev/null
	@cmake --build build-asan
	# The examples (and the tuning examples) run uninstrumented Python, MPI
	# and xgboost for most of their time; they run in `unit`, and are left
	# out here to keep the test command short.
	cd build-asan && ctest --output-on-failure -j2 -E "ExamplesE2eTest|TuningE2eTest.The.*Example"

fuzz:
	scripts/fuzz.sh

format:
	@git ls-files '*.cc' '*.h' | xargs clang-format -i

format-check:
	@git ls-files '*.cc' '*.h' | xargs clang-format --dry-run --Werror

clean:
	rm -rf $(BUILD) build-asan build-fuzz
