#include "server/artifacts.h"

#include <fmt/format.h>

#include <algorithm>

#include "server/api_status.h"

namespace trainyard::server {
namespace {

// Files up to this size are answered whole; larger ones streamed.
constexpr int64_t kWholeFileBytes = 1 << 20;

// A file sent as it is read, a chunk at a time. It ends at the size the
// file had when opened: a replica still appending to it cannot keep the
// download going.
class FileStream final : public ResponseStream {
 public:
  explicit FileStream(OpenedArtifact file) : file_(std::move(file)) {}
  bool Next(std::string& out, Duration) override {
    std::string chunk = ReadAt(file_, sent_, std::min<int64_t>(file_.size - sent_, 256 * 1024));
    if (chunk.empty()) return false;  // shrunk (or unreadable) before its end
    sent_ += static_cast<int64_t>(chunk.size());
    out += chunk;
    return sent_ < file_.size;
  }
  bool Failed() const override { return sent_ < file_.size; }

 private:
  OpenedArtifact file_;
  int64_t sent_ = 0;
};

// "best.pt" from "model/best.pt", quoted for Content-Disposition.
std::string AttachmentOf(const std::string& path) {
  std::string name = path.substr(path.rfind('/') + 1);
  std::string safe;
  for (char c : name)
    safe += (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) ? '_' : c;
  return fmt::format("attachment; filename=\"{}\"", safe);
}

}  // namespace

ApiResponse ArtifactDownload(OpenedArtifact file, std::string_view path) {
  ApiResponse response;
  response.content_type = "application/octet-stream";
  response.headers = {{"Content-Disposition", AttachmentOf(std::string(path))},
                      {"X-Content-Type-Options", "nosniff"}};
  if (file.size <= kWholeFileBytes) {
    response.body = ReadAt(file, 0, file.size);
    if (static_cast<int64_t>(response.body.size()) != file.size) {
      return ErrorResponse(MakeApiError(
          409, "Conflict",
          fmt::format("{} changed while it was read: its size was {} and {} bytes could be read; "
                      "download it again",
                      path, file.size, response.body.size())));
    }
  } else {
    response.stream = std::make_unique<FileStream>(std::move(file));
  }
  return response;
}

}  // namespace trainyard::server
