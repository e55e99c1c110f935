// The dashboard's files (web/), embedded into the binary at build time
// (cmake/embed_ui.cmake): index.html at "/", everything else under "/ui/".
// Nothing is fetched at run time. TRAINYARD_UI_DIR, set to a checkout's
// web/ folder, serves the files from there instead, read at each request:
// for working on the dashboard without rebuilding.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace trainyard::server {

namespace internal {
struct UiAssetEntry {
  const char* url;   // "/ui/app.js"
  const char* path;  // under web/: "src/app.js"
  const unsigned char* data;
  size_t size;
};
extern const UiAssetEntry kUiAssetTable[];
extern const size_t kUiAssetCount;
}  // namespace internal

struct UiAsset {
  std::string content_type;
  std::string body;
};

// The file served at `url` ("/" is index.html), or nothing.
std::optional<UiAsset> FindUiAsset(std::string_view url);

}  // namespace trainyard::server
