#!/usr/bin/env bash
# Builds the libFuzzer targets with ASan+UBSan and runs them for a bounded
# time (default 60 s over a seed corpus of the project's manifests, half that
# over API requests). Exits non-zero
# on any crash, leak, sanitizer report or hang.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-60}"
build=build-fuzz

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DTRAINYARD_FUZZ=ON -DTRAINYARD_WERROR=ON -DTRAINYARD_TESTS=OFF -DTRAINYARD_BENCH=OFF \
  -DCMAKE_UNITY_BUILD=ON >/dev/null
cmake --build "$build" --target manifest_fuzz api_fuzz

corpus="$build/corpus"
mkdir -p "$corpus"
find examples tests/data -name '*.yaml' -o -name '*.json' | while read -r f; do
  cp "$f" "$corpus/$(echo "$f" | tr / _)"
done
artifacts="$build/artifacts"
mkdir -p "$artifacts"
# -timeout: one input taking 5 s is a hang; -rss_limit_mb bounds memory.
"$build/fuzz/manifest_fuzz" "$corpus" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
  -max_len=65536 -artifact_prefix="$artifacts/" -print_final_stats=1 2>&1 | tail -n 25
# The API's request handling, over seeds of every verb.
api_corpus="$build/api_corpus"
mkdir -p "$api_corpus"
cp fuzz/api_seeds/* "$api_corpus/"
"$build/fuzz/api_fuzz" "$api_corpus" -max_total_time="$((seconds / 2))" -timeout=5 \
  -rss_limit_mb=2048 -max_len=16384 -artifact_prefix="$artifacts/" -print_final_stats=1 2>&1 |
  tail -n 12
echo "fuzz: ran clean for ${seconds}s over manifests, $((seconds / 2))s over API requests"
