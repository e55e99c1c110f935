// libFuzzer target over everything a manifest goes through: parsing (YAML
// and JSON), decoding, defaulting, validation, and writing back. Besides "no
// crash, no leak, no hang", it checks the codec's promise: an object that
// decodes cleanly reads back identical after it is written as YAML.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "api/validation.h"
#include "api/yaml.h"

namespace {

void RoundTrip(const trainyard::api::Object& object) {
  using namespace trainyard::api;
  std::string yaml = ToYaml(EncodeObject(object));
  auto docs = ParseManifests(yaml, "roundtrip.yaml");
  if (!docs.ok() || docs->size() != 1) {
    std::fprintf(stderr, "written YAML does not parse back:\n%s\n%s\n", yaml.c_str(),
                 docs.status().ToString().c_str());
    std::abort();
  }
  DecodeResult again = DecodeObject((*docs)[0].value);
  if (!again.object || !(*again.object == object)) {
    std::fprintf(stderr, "round trip changed the object:\n%s\n", yaml.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainyard::api;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto docs = ParseManifests(text, "fuzz.yaml");
  if (!docs.ok()) return 0;
  for (const SourceDocument& doc : *docs) {
    DecodeResult decoded = DecodeObject(doc.value);
    if (decoded.object && decoded.errors.empty()) RoundTrip(*decoded.object);
    CheckedObject checked = DecodeAndValidate(doc.value);
    if (checked.object) (void)ToYaml(EncodeObject(*checked.object));
  }
  return 0;
}
