#include "cli/manifests.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

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

}  // namespace

std::string LoadedObject::Describe() const {
  return checked.object ? api::DisplayName(*checked.object) : DescribeDocument(document);
}

LoadedManifests LoadManifests(const std::vector<std::string>& paths, std::ostream& err) {
  LoadedManifests loaded;
  for (const std::string& file : ExpandPaths(paths)) {
    std::string label = file == "-" ? "<stdin>" : file;
    Result<std::string> text = ReadInput(file);
    if (!text.ok()) {
      ++loaded.unreadable;
      err << "error: " << text.status().message() << '\n';
      continue;
    }
    Result<std::vector<api::SourceDocument>> docs = api::ParseManifests(*text, label);
    if (!docs.ok()) {
      ++loaded.unreadable;
      err << "error: " << docs.status().message() << '\n';
      continue;
    }
    if (docs->empty()) loaded.empty_files.push_back(label);
    for (api::SourceDocument& doc : *docs) {
      api::CheckedObject checked = api::DecodeAndValidate(doc.value);
      loaded.objects.push_back(
          {fmt::format("{}:{}", label, doc.line), std::move(doc.value), std::move(checked)});
    }
  }
  return loaded;
}

void PrintErrors(const LoadedObject& object, std::ostream& out) {
  const FieldErrors& errors = object.checked.result.errors;
  out << fmt::format("{}: {}: invalid, {} error{}\n", object.where, object.Describe(),
                     errors.size(), errors.size() == 1 ? "" : "s");
  for (const FieldError& e : errors) out << "  " << e.ToString() << '\n';
}

}  // namespace trainyard::cli
