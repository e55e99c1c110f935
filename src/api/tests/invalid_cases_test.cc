// Data-driven validation cases: every tests/data/invalid/NAME.yaml sits
// beside NAME.errors, the exact lines `trainyard validate` prints for it
// (each object's errors, or the parse error). Add a case by adding the pair.
#include <gtest/gtest.h>

#include <algorithm>

#include "api/tests/test_util.h"
#include "api/validation.h"
#include "api/yaml.h"

namespace trainyard::api {
namespace {

namespace fs = std::filesystem;

fs::path CasesDir() { return testing::SourceDir() / "tests" / "data" / "invalid"; }

std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  std::error_code ec;  // a missing folder lists nothing; IsLargeEnough then says so
  for (const auto& entry : fs::directory_iterator(CasesDir(), ec)) {
    if (entry.path().extension() == ".yaml" || entry.path().extension() == ".json") {
      names.push_back(entry.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// What validation reports for a file, one line per error.
std::vector<std::string> Actual(const std::string& file_name) {
  std::string text = testing::ReadFile(CasesDir() / file_name);
  Result<std::vector<SourceDocument>> docs = ParseManifests(text, file_name);
  if (!docs.ok()) return {docs.status().message()};
  std::vector<std::string> lines;
  for (const SourceDocument& doc : *docs) {
    for (const FieldError& e : DecodeAndValidate(doc.value).result.errors) {
      lines.push_back(e.ToString());
    }
  }
  return lines;
}

class InvalidCaseTest : public ::testing::TestWithParam<std::string> {};

TEST_P(InvalidCaseTest, ReportsExactlyTheExpectedErrors) {
  fs::path expected_path = CasesDir() / fs::path(GetParam()).replace_extension(".errors");
  ASSERT_TRUE(fs::exists(expected_path)) << "missing " << expected_path;
  std::vector<std::string> expected = Lines(testing::ReadFile(expected_path));
  ASSERT_FALSE(expected.empty()) << "an invalid case must expect at least one error";
  EXPECT_EQ(Actual(GetParam()), expected);
}

INSTANTIATE_TEST_SUITE_P(Corpus, InvalidCaseTest, ::testing::ValuesIn(CaseNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = fs::path(info.param).stem().string();
                           std::replace_if(
                               name.begin(), name.end(),
                               [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); },
                               '_');
                           return name;
                         });

TEST(InvalidCorpusTest, IsLargeEnough) {
  EXPECT_GE(CaseNames().size(), 40u) << "cases are read from " << CasesDir()
                                     << "; run from the repository root or set "
                                        "TRAINYARD_SOURCE_DIR";
}

}  // namespace
}  // namespace trainyard::api
