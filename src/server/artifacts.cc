#include "server/artifacts.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

namespace trainyard::server {
namespace {

// Files up to this size are answered whole; larger ones streamed.
constexpr int64_t kWholeFileBytes = 1 << 20;

// A file sent as it is read, a chunk at a time.
// It ends at the size the file had when opened: a replica still
// appending to it cannot keep the download going.
class FileStream final : public ResponseStream {
 public:
  FileStream(int fd, int64_t size) : fd_(fd), left_(size) {}
  ~FileStream() override { close(fd_); }
  bool Next(std::string& out, Duration) override {
    char buffer[256 * 1024];
    size_t want = static_cast<size_t>(std::min<int64_t>(left_, sizeof buffer));
    ssize_t n = want == 0 ? 0 : read(fd_, buffer, want);
    if (n <= 0) return false;
    out.append(buffer, static_cast<size_t>(n));
    left_ -= n;
    return left_ > 0;
  }

 private:
  int fd_;
  int64_t left_;
};

std::string ReadAll(int fd, int64_t size) {
  std::string out(static_cast<size_t>(size), '\0');
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = read(fd, out.data() + done, out.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  out.resize(done);
  return out;
}

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
  // A regular file: O_NONBLOCK (OpenArtifact's) is dropped so reads block.
  fcntl(file.fd, F_SETFL, fcntl(file.fd, F_GETFL) & ~O_NONBLOCK);
  if (file.size <= kWholeFileBytes) {
    response.body = ReadAll(file.fd, file.size);
    close(file.fd);
  } else {
    response.stream = std::make_unique<FileStream>(file.fd, file.size);
  }
  return response;
}

}  // namespace trainyard::server
