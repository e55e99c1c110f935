// What one manifest costs on its way in: parse, decode, default, validate,
// and on its way out: encode and write YAML. Run:
//   build/bench/codec_bench --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "api/validation.h"
#include "api/yaml.h"
#include "common/quantity.h"

namespace {

using namespace trainyard;

std::string Example() {
  std::ifstream in(std::string(TRAINYARD_SOURCE_DIR) + "/examples/pytorch-digits.yaml");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void BM_ParseDecodeDefaultValidate(benchmark::State& state) {
  std::string text = Example();
  if (text.empty()) {
    state.SkipWithError("examples/pytorch-digits.yaml not found");
    return;
  }
  for (auto _ : state) {
    auto docs = api::ParseManifests(text, "job.yaml");
    api::CheckedObject checked = api::DecodeAndValidate((*docs)[0].value);
    benchmark::DoNotOptimize(checked);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ParseDecodeDefaultValidate);

void BM_EncodeToYaml(benchmark::State& state) {
  auto docs = api::ParseManifests(Example(), "job.yaml");
  if (!docs.ok() || docs->empty()) {
    state.SkipWithError("examples/pytorch-digits.yaml not found");
    return;
  }
  api::CheckedObject checked = api::DecodeAndValidate((*docs)[0].value);
  for (auto _ : state) {
    std::string yaml = api::ToYaml(api::EncodeObject(*checked.object));
    benchmark::DoNotOptimize(yaml);
  }
}
BENCHMARK(BM_EncodeToYaml);

void BM_QuantityParse(benchmark::State& state) {
  const char* inputs[] = {"500m", "4Gi", "1.5", "2e3", "16Gi", "100n"};
  size_t i = 0;
  for (auto _ : state) {
    auto q = Quantity::Parse(inputs[i++ % 6]);
    benchmark::DoNotOptimize(q);
  }
}
BENCHMARK(BM_QuantityParse);

}  // namespace

BENCHMARK_MAIN();
