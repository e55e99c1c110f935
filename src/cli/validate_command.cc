#include "cli/validate_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "api/validation.h"
#include "api/yaml.h"

namespace trainyard::cli {
namespace {

namespace fs = std::filesystem;

// Manifests larger than this are not manifests.
constexpr std::uintmax_t kMaxManifestBytes = 16 * 1024 * 1024;

bool IsManifestFile(const fs::path& p) {
  std::string ext = p.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

// Expands directories into the manifest files under them, sorted.
std::vector<std::string> ExpandPaths(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (path != "-" && fs::is_directory(path, ec)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::recursive_directory_iterator(path, ec)) {
        if (entry.is_regular_file() && IsManifestFile(entry.path())) {
          found.push_back(entry.path().string());
        }
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(path);
    }
  }
  return files;
}

Result<std::string> ReadInput(const std::string& path) {
  std::ostringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
    return text.str();
  }
  std::error_code ec;
  std::uintmax_t size = fs::file_size(path, ec);
  if (ec) return NotFoundError(fmt::format("{}: {}", path, ec.message()));
  if (size > kMaxManifestBytes) {
    return InvalidArgumentError(
        fmt::format("{}: file is larger than {} MiB", path, kMaxManifestBytes / (1024 * 1024)));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(fmt::format("{}: cannot open", path));
  text << in.rdbuf();
  return text.str();
}

struct Tally {
  int valid = 0;
  int invalid = 0;
};

// "Service etcd" for a document whose kind trainyard does not know.
std::string DescribeDocument(const api::Json& doc) {
  if (!doc.is_object()) return "document";
  auto text = [&](const api::Json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  std::string kind = text(doc, "kind");
  std::string name;
  if (auto meta = doc.find("metadata"); meta != doc.end() && meta->is_object()) {
    name = text(*meta, "name");
  }
  if (kind.empty()) return name.empty() ? "object" : name;
  return name.empty() ? kind : kind + " " + name;
}

void ReportObject(const std::string& where, const api::Json& doc, const api::CheckedObject& checked,
                  const ValidateOptions& options, std::ostream& out, std::ostream& report,
                  Tally& tally) {
  std::string name = checked.object ? api::DisplayName(*checked.object) : DescribeDocument(doc);
  const api::ValidationResult& result = checked.result;
  if (result.ok()) {
    ++tally.valid;
    if (!options.quiet || !result.warnings.empty()) {
      report << fmt::format("{}: {}: valid\n", where, name);
    }
  } else {
    ++tally.invalid;
    report << fmt::format("{}: {}: invalid, {} error{}\n", where, name, result.errors.size(),
                          result.errors.size() == 1 ? "" : "s");
    for (const FieldError& e : result.errors) report << "  " << e.ToString() << '\n';
  }
  for (const std::string& w : result.warnings) report << "  warning: " << w << '\n';
  if (options.show_defaults && result.ok()) {
    api::Json doc = api::EncodeObject(*checked.object);
    if (options.output == "json") {
      out << doc.dump(2) << '\n';
    } else {
      if (tally.valid > 1) out << "---\n";
      out << api::ToYaml(doc);
    }
  }
}

}  // namespace

int RunValidate(const ValidateOptions& options, std::ostream& out, std::ostream& err) {
  std::ostream& report = options.show_defaults ? err : out;
  Tally tally;
  for (const std::string& file : ExpandPaths(options.paths)) {
    std::string label = file == "-" ? "<stdin>" : file;
    Result<std::string> text = ReadInput(file);
    if (!text.ok()) {
      ++tally.invalid;
      err << "error: " << text.status().message() << '\n';
      continue;
    }
    Result<std::vector<api::SourceDocument>> docs = api::ParseManifests(*text, label);
    if (!docs.ok()) {
      ++tally.invalid;
      report << "error: " << docs.status().message() << '\n';
      continue;
    }
    if (docs->empty() && !options.quiet) report << label << ": no objects\n";
    for (const api::SourceDocument& doc : *docs) {
      ReportObject(fmt::format("{}:{}", label, doc.line), doc.value,
                   api::DecodeAndValidate(doc.value), options, out, report, tally);
    }
  }
  if (!options.quiet || tally.invalid > 0) {
    report << fmt::format("{} valid, {} invalid\n", tally.valid, tally.invalid);
  }
  return tally.invalid == 0 ? 0 : 1;
}

}  // namespace trainyard::cli
