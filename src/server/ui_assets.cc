#include "server/ui_assets.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace trainyard::server {
namespace {

std::string ContentType(std::string_view path) {
  auto ends = [&](std::string_view suffix) { return path.ends_with(suffix); };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  if (ends(".png")) return "image/png";
  return "application/octet-stream";
}

// TRAINYARD_UI_DIR's copy of `path` (under web/), when it is set and the
// file is there.
std::optional<std::string> FromUiDir(std::string_view path) {
  const char* dir = std::getenv("TRAINYARD_UI_DIR");
  if (dir == nullptr || *dir == '\0' || path.find("..") != std::string_view::npos) {
    return std::nullopt;
  }
  std::ifstream in(std::string(dir) + "/" + std::string(path), std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream body;
  body << in.rdbuf();
  return body.str();
}

}  // namespace

std::optional<UiAsset> FindUiAsset(std::string_view url) {
  if (url == "/") url = "/ui/index.html";
  for (size_t i = 0; i < internal::kUiAssetCount; ++i) {
    const internal::UiAssetEntry& e = internal::kUiAssetTable[i];
    if (url != e.url) continue;
    UiAsset asset{.content_type = ContentType(e.path), .body = {}};
    if (std::optional<std::string> dev = FromUiDir(e.path)) {
      asset.body = std::move(*dev);
    } else {
      asset.body.assign(reinterpret_cast<const char*>(e.data), e.size);
    }
    return asset;
  }
  // A module written since the build, while working on the dashboard.
  if (url.starts_with("/ui/") && !url.starts_with("/ui/vendor/")) {
    std::string path = "src/" + std::string(url.substr(4));
    if (std::optional<std::string> dev = FromUiDir(path)) {
      return UiAsset{.content_type = ContentType(path), .body = std::move(*dev)};
    }
  }
  return std::nullopt;
}

}  // namespace trainyard::server
