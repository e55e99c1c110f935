#include "image/image_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace trainyard::image {
namespace {

namespace fs = std::filesystem;

constexpr const char* kRefAnnotation = "org.opencontainers.image.ref.name";
constexpr size_t kMaxDocument = 4 << 20;  // an index, manifest or config

Result<api::Json> ReadJson(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(fmt::format("cannot read {}", path.string()));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.size() > kMaxDocument) {
    return InvalidArgumentError(fmt::format("{} is larger than 4 MiB", path.string()));
  }
  api::Json doc = api::Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return InvalidArgumentError(fmt::format("{} is not JSON", path.string()));
  return doc;
}

// "sha256:<hex>" as a file name under blobs/ or layers/; "" when malformed.
std::string DigestHex(std::string_view digest) {
  if (!digest.starts_with("sha256:") || digest.size() != 7 + 64) return "";
  std::string_view hex = digest.substr(7);
  if (hex.find_first_not_of("0123456789abcdef") != std::string_view::npos) return "";
  return std::string(hex);
}

// Removes a tree whose directories a layer may have left read-only.
void RemoveTree(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(path, ec))) {
    fs::remove(path, ec);
    return;
  }
  chmod(path.c_str(), 0700);
  for (const fs::directory_entry& entry : fs::directory_iterator(path, ec))
    RemoveTree(entry.path());
  fs::remove(path, ec);
}

// Readers (under the shared lock, or none: skopeo) see the old file or the
// new one, never half of it.
Status WriteFileAtomically(const fs::path& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  fs::path tmp = path;
  tmp += fmt::format(".tmp-{}", getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) {
      return InternalError(fmt::format("cannot write {}: {}", tmp.string(), std::strerror(errno)));
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) return InternalError(fmt::format("cannot write {}: {}", path.string(), ec.message()));
  return OkStatus();
}

uint64_t TreeBytes(const fs::path& path) {
  uint64_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_regular_file(ec) && !it->is_symlink(ec)) total += it->file_size(ec);
  }
  return total;
}

}  // namespace

Result<StoreLock> StoreLock::Take(const std::string& path, bool exclusive) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return InternalError(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  while (flock(fd, exclusive ? LOCK_EX : LOCK_SH) != 0) {
    if (errno == EINTR) continue;
    int error = errno;
    close(fd);
    return InternalError(fmt::format("cannot lock {}: {}", path, std::strerror(error)));
  }
  return StoreLock(fd);
}

StoreLock::~StoreLock() {
  if (fd_ >= 0) close(fd_);
}

ImageStore::ImageStore(std::string root, UnpackOptions unpack)
    : root_(std::move(root)), unpack_(unpack) {}

std::string ImageStore::LayoutDir() const { return root_ + "/oci"; }
std::string ImageStore::LockPath() const { return root_ + "/lock"; }
std::string ImageStore::UseLockPath() const { return root_ + "/use.lock"; }
std::string ImageStore::BlobsDir() const { return LayoutDir() + "/blobs"; }
std::string ImageStore::StagingDir() const { return root_ + "/staging"; }

std::string ImageStore::BlobPath(const std::string& digest) const {
  return LayoutDir() + "/blobs/sha256/" + DigestHex(digest);
}

std::string ImageStore::UsedPath(const std::string& manifest_digest) const {
  return root_ + "/used/" + DigestHex(manifest_digest);
}

void ImageStore::Touch(const std::string& path) const {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return;  // the image then looks older: collected sooner, never wrongly kept
  futimens(fd, nullptr);
  close(fd);
}

void ImageStore::MarkUsed(const StoredImage& image) const {
  if (!DigestHex(image.manifest_digest).empty()) Touch(UsedPath(image.manifest_digest));
}

std::chrono::system_clock::time_point ImageStore::LastUsed(const StoredImage& image) const {
  struct stat st;
  for (const std::string& path :
       {UsedPath(image.manifest_digest), BlobPath(image.manifest_digest)}) {
    if (stat(path.c_str(), &st) == 0) {
      return std::chrono::system_clock::time_point(std::chrono::seconds(st.st_mtim.tv_sec) +
                                                   std::chrono::nanoseconds(st.st_mtim.tv_nsec));
    }
  }
  return {};
}

Result<std::vector<StoredImage>> ImageStore::ListLocked() const {
  std::vector<StoredImage> out;
  fs::path index = fs::path(LayoutDir()) / "index.json";
  std::error_code ec;
  if (!fs::exists(index, ec)) return out;
  ASSIGN_OR_RETURN(api::Json doc, ReadJson(index));
  for (const api::Json& entry : api::ArrayRefAt(doc, {"manifests"})) {
    StoredImage image;
    image.reference = api::StringAt(entry, {"annotations", kRefAnnotation});
    image.manifest_digest = api::StringAt(entry, "digest");
    if (image.reference.empty() || DigestHex(image.manifest_digest).empty()) continue;
    ASSIGN_OR_RETURN(api::Json manifest, ReadJson(BlobPath(image.manifest_digest)));
    image.config_digest = api::StringAt(manifest, {"config", "digest"});
    image.size = api::IntAt(entry, {"size"}) + api::IntAt(manifest, {"config", "size"});
    for (const api::Json& layer : api::ArrayRefAt(manifest, {"layers"})) {
      LayerBlob blob{.digest = api::StringAt(layer, "digest"),
                     .media_type = api::StringAt(layer, "mediaType"),
                     .size = static_cast<uint64_t>(api::IntAt(layer, {"size"}))};
      if (DigestHex(blob.digest).empty()) {
        return InvalidArgumentError(fmt::format("image {}: a layer's digest is not sha256: {}",
                                                image.reference, blob.digest));
      }
      image.size += blob.size;
      image.layers.push_back(std::move(blob));
    }
    out.push_back(std::move(image));
  }
  return out;
}

Result<std::vector<StoredImage>> ImageStore::List() const {
  ASSIGN_OR_RETURN(StoreLock lock, StoreLock::Take(LockPath(), /*exclusive=*/false));
  return ListLocked();
}

Result<std::optional<StoredImage>> ImageStore::Find(const ImageReference& reference) const {
  ASSIGN_OR_RETURN(std::vector<StoredImage> images, List());
  std::string wanted = reference.String();
  for (StoredImage& image : images) {
    if (image.reference == wanted) return std::optional<StoredImage>(std::move(image));
  }
  return std::optional<StoredImage>();
}

Result<ImageConfig> ImageStore::ConfigOf(const StoredImage& image) const {
  if (DigestHex(image.config_digest).empty()) {
    return InvalidArgumentError(fmt::format("image {} has no config", image.reference));
  }
  ASSIGN_OR_RETURN(api::Json config, ReadJson(BlobPath(image.config_digest)));
  return ParseImageConfig(config);
}

Result<std::vector<std::string>> ImageStore::UnpackedLayers(const StoredImage& image) const {
  std::vector<std::string> dirs;
  // Beside pulls and other unpacks (UnpackLayer's own folder, renamed into
  // place, makes a second unpack of a layer harmless); never a prune.
  ASSIGN_OR_RETURN(StoreLock use, StoreLock::Take(UseLockPath(), /*exclusive=*/false));
  for (const LayerBlob& layer : image.layers) {
    std::string dir = root_ + "/layers/sha256-" + DigestHex(layer.digest);
    std::error_code ec;
    if (!fs::exists(dir, ec)) {
      Result<UnpackedLayer> unpacked = UnpackLayer(BlobPath(layer.digest), dir, unpack_);
      if (!unpacked.ok()) {
        return Status(unpacked.status().code(),
                      fmt::format("image {}: {}", image.reference, unpacked.status().message()));
      }
    }
    dirs.insert(dirs.begin(), dir);
  }
  return dirs;
}

Status ImageStore::AddPulled(const std::string& staging_layout) const {
  ASSIGN_OR_RETURN(api::Json pulled, ReadJson(fs::path(staging_layout) / "index.json"));
  ASSIGN_OR_RETURN(StoreLock lock, StoreLock::Take(LockPath(), /*exclusive=*/true));
  fs::path index = fs::path(LayoutDir()) / "index.json";
  std::error_code ec;
  api::Json doc = {{"schemaVersion", 2}, {"manifests", api::Json::array()}};
  if (fs::exists(index, ec)) {
    ASSIGN_OR_RETURN(doc, ReadJson(index));
  } else {
    RETURN_IF_ERROR(WriteFileAtomically(fs::path(LayoutDir()) / "oci-layout",
                                        R"({"imageLayoutVersion":"1.0.0"})"));
  }
  api::Json manifests = api::Json::array();
  std::set<std::string> added;
  for (const api::Json& entry : api::ArrayRefAt(pulled, {"manifests"})) {
    added.insert(api::StringAt(entry, {"annotations", kRefAnnotation}));
  }
  for (const api::Json& entry : api::ArrayRefAt(doc, {"manifests"})) {
    if (!added.contains(api::StringAt(entry, {"annotations", kRefAnnotation}))) {
      manifests.push_back(entry);
    }
  }
  for (const api::Json& entry : api::ArrayRefAt(pulled, {"manifests"})) {
    manifests.push_back(entry);
    std::string digest = api::StringAt(entry, "digest");
    if (!DigestHex(digest).empty()) Touch(UsedPath(digest));
  }
  doc["manifests"] = std::move(manifests);
  return WriteFileAtomically(index, doc.dump());
}

Result<PruneResult> ImageStore::Prune(const std::set<std::string>& keep) const {
  static std::atomic<uint64_t> prunes{0};
  fs::path trash = fs::path(root_) / "trash" / fmt::format("{}-{}", getpid(), prunes.fetch_add(1));
  PruneResult result;
  {
    // No pull or unpack runs meanwhile (what they left half made is stale),
    // and none waits longer than the renames into the trash take.
    ASSIGN_OR_RETURN(StoreLock use, StoreLock::Take(UseLockPath(), /*exclusive=*/true));
    ASSIGN_OR_RETURN(StoreLock lock, StoreLock::Take(LockPath(), /*exclusive=*/true));
    ASSIGN_OR_RETURN(result, ForgetUnkept(keep, trash));
  }
  // Outside the locks: removing a large layer's files takes seconds.
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(trash, ec)) {
    result.freed_bytes += entry.is_directory(ec) ? TreeBytes(entry.path()) : entry.file_size(ec);
  }
  RemoveTree(trash);
  return result;
}

Result<PruneResult> ImageStore::ForgetUnkept(const std::set<std::string>& keep,
                                             const fs::path& trash) const {
  ASSIGN_OR_RETURN(std::vector<StoredImage> images, ListLocked());
  PruneResult result;
  std::set<std::string> used;  // hex digests of the blobs kept images use
  for (const StoredImage& image : images) {
    if (!keep.contains(image.reference)) {
      result.removed.push_back(image.reference);
      continue;
    }
    used.insert(DigestHex(image.manifest_digest));
    used.insert(DigestHex(image.config_digest));
    for (const LayerBlob& layer : image.layers) used.insert(DigestHex(layer.digest));
  }
  fs::path index = fs::path(LayoutDir()) / "index.json";
  if (!result.removed.empty()) {
    ASSIGN_OR_RETURN(api::Json doc, ReadJson(index));
    api::Json kept = api::Json::array();
    for (const api::Json& entry : api::ArrayRefAt(doc, {"manifests"})) {
      if (used.contains(DigestHex(api::StringAt(entry, "digest"))) &&
          keep.contains(api::StringAt(entry, {"annotations", kRefAnnotation}))) {
        kept.push_back(entry);
      }
    }
    doc["manifests"] = std::move(kept);
    RETURN_IF_ERROR(WriteFileAtomically(index, doc.dump()));
  }
  // What a crashed pull, unpack or prune left goes too.
  std::error_code ec;
  fs::create_directories(trash, ec);
  int moved = 0;
  auto discard = [&](const fs::path& path) {
    fs::rename(path, trash / std::to_string(moved++), ec);
    if (ec) RemoveTree(path);  // not movable (another filesystem): here and now
  };
  for (const auto& entry : fs::directory_iterator(fs::path(root_) / "trash", ec)) {
    if (entry.path() != trash) discard(entry.path());
  }
  discard(StagingDir());
  for (const auto& entry : fs::directory_iterator(fs::path(root_) / "used", ec)) {
    if (!used.contains(entry.path().filename().string())) fs::remove(entry.path(), ec);
  }
  for (const auto& entry : fs::directory_iterator(fs::path(LayoutDir()) / "blobs/sha256", ec)) {
    if (!used.contains(entry.path().filename().string())) discard(entry.path());
  }
  for (const auto& entry : fs::directory_iterator(fs::path(root_) / "layers", ec)) {
    std::string name = entry.path().filename().string();
    if (!name.starts_with("sha256-") || !used.contains(name.substr(7))) discard(entry.path());
  }
  return result;
}

}  // namespace trainyard::image
