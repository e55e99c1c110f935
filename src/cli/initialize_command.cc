#include "cli/initialize_command.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <set>
#include <utility>

#include "common/status.h"

namespace trainyard::cli {
namespace {

namespace fs = std::filesystem;

// Deeper than any dataset's tree; what a link loop reaches first.
constexpr int kMaxDepth = 64;

int Fail(const InitializeOptions& options, const std::string& message) {
  std::cerr << fmt::format("{}-initializer: {}\n", options.what, message);
  return 1;
}

// "%20" as " ": a file URI's path is percent-encoded.
Result<std::string> PercentDecoded(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size() || !isxdigit(static_cast<unsigned char>(text[i + 1])) ||
        !isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      return InvalidArgumentError(fmt::format("{} has a % not followed by two hex digits", text));
    }
    char byte = static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
    if (byte == '\0') return InvalidArgumentError(fmt::format("{} names a NUL byte (%00)", text));
    out += byte;
    i += 2;
  }
  return out;
}

// The local path a storage URI names: file:///p, file://localhost/p,
// file:/p, or a plain absolute path; what it cannot fetch, said.
Result<fs::path> LocalPathOf(const std::string& uri) {
  size_t colon = uri.find(':');
  std::string scheme = colon == std::string::npos ? "" : uri.substr(0, colon);
  if (uri.starts_with("/")) return fs::path(uri);
  if (uri.find("://") == std::string::npos && scheme != "file") {
    return InvalidArgumentError(fmt::format(
        "{} is neither a URI nor an absolute path: give file:///its/absolute/path", uri));
  }
  if (scheme != "file") {
    return InvalidArgumentError(fmt::format(
        "cannot fetch {}: trainyard fetches only file:// URIs and paths on this machine (no "
        "{}:// store is reached from here); fetch it yourself and give file:///its/path as "
        "storageUri",
        uri, scheme.empty() ? uri : scheme));
  }
  std::string rest = uri.substr(colon + 1);
  if (rest.starts_with("//")) {
    size_t path = rest.find('/', 2);
    std::string host = rest.substr(2, path == std::string::npos ? std::string::npos : path - 2);
    if (!host.empty() && host != "localhost") {
      return InvalidArgumentError(
          fmt::format("cannot fetch {}: a file URI here names this machine (file:///path or "
                      "file://localhost/path), not {}",
                      uri, host));
    }
    rest = path == std::string::npos ? "" : rest.substr(path);
  }
  if (!rest.starts_with("/")) {
    return InvalidArgumentError(fmt::format("{} names no absolute path", uri));
  }
  ASSIGN_OR_RETURN(std::string decoded, PercentDecoded(rest));
  return fs::path(decoded);
}

bool Within(const fs::path& inner, const fs::path& outer) {
  auto [o, i] = std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
  return o == outer.end();
}

// Copies `from` (links followed, as the data they name) to `to`, each
// folder made writable by its owner so that a rerun can write over it.
class TreeCopy {
 public:
  // `destination`: canonical; nothing of the source may lead into it.
  explicit TreeCopy(fs::path destination) : destination_(std::move(destination)) {}

  Status Copy(const fs::path& from, const fs::path& to, int depth) {
    std::error_code ec;
    fs::file_status status = fs::status(from, ec);
    if (ec) return NotFoundError(fmt::format("cannot read {}: {}", from.string(), ec.message()));
    if (fs::is_directory(status)) return CopyDirectory(from, to, depth);
    if (!fs::is_regular_file(status)) {
      return InvalidArgumentError(
          fmt::format("{} is neither a file nor a folder: not copied", from.string()));
    }
    if (fs::exists(to, ec)) fs::permissions(to, fs::perms::owner_write, fs::perm_options::add, ec);
    fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      return UnavailableError(
          fmt::format("cannot copy {} to {}: {}", from.string(), to.string(), ec.message()));
    }
    fs::permissions(to, fs::perms::owner_write, fs::perm_options::add, ec);
    ++files_;
    bytes_ += fs::file_size(to, ec);
    return OkStatus();
  }

  int64_t files() const { return files_; }
  int64_t bytes() const { return bytes_; }

 private:
  Status CopyDirectory(const fs::path& from, const fs::path& to, int depth) {
    struct stat st {};
    if (stat(from.c_str(), &st) != 0) {
      return NotFoundError(fmt::format("cannot read {}: {}", from.string(), strerror(errno)));
    }
    std::error_code ec;
    fs::path real = fs::canonical(from, ec);
    if (!ec && Within(real, destination_)) {
      return InvalidArgumentError(
          fmt::format("{} leads into the destination {}: a copy would copy itself", from.string(),
                      destination_.string()));
    }
    if (depth > kMaxDepth || !on_path_.insert({st.st_dev, st.st_ino}).second) {
      return InvalidArgumentError(fmt::format(
          "{} loops back into a folder above it (a link to its own parent?), or is more than {} "
          "folders deep: not copied",
          from.string(), kMaxDepth));
    }
    fs::create_directories(to, ec);
    fs::permissions(to, fs::perms::owner_all, fs::perm_options::add, ec);
    if (ec) return UnavailableError(fmt::format("cannot create {}: {}", to.string(), ec.message()));
    for (const fs::directory_entry& entry : fs::directory_iterator(from, ec)) {
      RETURN_IF_ERROR(Copy(entry.path(), to / entry.path().filename(), depth + 1));
    }
    if (ec) return UnavailableError(fmt::format("cannot list {}: {}", from.string(), ec.message()));
    on_path_.erase({st.st_dev, st.st_ino});
    return OkStatus();
  }

  fs::path destination_;
  std::set<std::pair<dev_t, ino_t>> on_path_;  // the folders being copied, root to here
  int64_t files_ = 0;
  int64_t bytes_ = 0;
};

}  // namespace

int RunInitialize(const InitializeOptions& options) {
  const char* uri = std::getenv("STORAGE_URI");
  if (uri == nullptr || *uri == '\0') {
    return Fail(options, "STORAGE_URI is not set: give the TrainJob's spec.initializer." +
                             options.what + ".storageUri");
  }
  Result<fs::path> named = LocalPathOf(uri);
  if (!named.ok()) return Fail(options, std::string(named.status().message()));
  std::error_code ec;
  fs::path from = fs::canonical(*named, ec);
  if (ec) return Fail(options, fmt::format("cannot read {}: {}", named->string(), ec.message()));
  fs::create_directories(options.destination, ec);
  fs::path destination = fs::canonical(options.destination, ec);
  if (ec) {
    return Fail(options, fmt::format("cannot create {}: {}; is the initializer volume mounted "
                                     "there (or above it)?",
                                     options.destination, ec.message()));
  }
  if (Within(from, destination) || Within(destination, from)) {
    return Fail(options, fmt::format("{} and {} overlap: a copy would copy itself", from.string(),
                                     destination.string()));
  }
  fs::path to = fs::is_directory(from, ec) ? destination : destination / from.filename();
  TreeCopy copy(destination);
  if (Status copied = copy.Copy(from, to, 0); !copied.ok()) {
    return Fail(options, std::string(copied.message()));
  }
  std::cout << fmt::format("{} from {} is in {} ({} files, {} bytes)\n", options.what, uri,
                           options.destination, copy.files(), copy.bytes());
  return 0;
}

}  // namespace trainyard::cli
