#include "image/puller.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>

#include "common/strings.h"
#include "common/subprocess.h"

namespace trainyard::image {
namespace {

namespace fs = std::filesystem;

bool Says(std::string_view output, std::initializer_list<std::string_view> phrases) {
  std::string lower = AsciiLower(output);
  for (std::string_view phrase : phrases) {
    if (lower.find(phrase) != std::string::npos) return true;
  }
  return false;
}

// skopeo's reason: its last line that says something, without its prefix.
std::string Reason(std::string_view output) {
  std::vector<std::string> lines = SplitNonEmpty(output, '\n');
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    std::string_view line = Trim(*it);
    if (line.empty()) continue;
    // `time="..." level=fatal msg="..."`: the message alone.
    if (size_t msg = line.find("msg=\""); msg != std::string_view::npos) {
      line = line.substr(msg + 5);
      if (!line.empty() && line.back() == '"') line.remove_suffix(1);
    }
    std::string reason(line);
    for (size_t at; (at = reason.find("\\\"")) != std::string::npos;) reason.erase(at, 1);
    return reason;
  }
  return "skopeo said nothing";
}

}  // namespace

Status PullFailure(const ImageReference& reference, int exit_code, std::string_view output) {
  std::string why = Reason(output);
  std::string image = reference.String();
  if (Says(output, {"unauthorized", "authentication required", "denied", "invalid username",
                    "401 unauthorized", "403 forbidden"})) {
    return Status(StatusCode::kUnauthenticated,
                  fmt::format("pulling image \"{}\": the registry refused the credentials (or "
                              "their absence): {}; give the pod an imagePullSecret or log in with "
                              "the host's auth file",
                              image, why));
  }
  if (Says(output, {"manifest unknown", "name unknown", "not found", "no such image",
                    "no image found in manifest list"})) {
    return NotFoundError(
        fmt::format("pulling image \"{}\": the registry has no such image: {}", image, why));
  }
  if (Says(output, {"connection refused", "no such host", "i/o timeout", "network is unreachable",
                    "server gave http response to https client", "tls:", "x509:"})) {
    return UnavailableError(
        fmt::format("pulling image \"{}\": cannot reach {}: {}", image, reference.domain, why));
  }
  return UnavailableError(
      fmt::format("pulling image \"{}\": skopeo exited {}: {}", image, exit_code, why));
}

Puller::Puller(const ImageStore& store, std::string skopeo)
    : store_(store), skopeo_(std::move(skopeo)) {}

Result<StoredImage> Puller::Pull(const PullRequest& request) const {
  const ImageReference& ref = request.reference;
  std::vector<std::string> argv = {skopeo_};
  // The ecosystem's variable for another registries.conf, which skopeo 1.9
  // reads only as a flag.
  if (const char* conf = std::getenv("CONTAINERS_REGISTRIES_CONF"); conf && *conf) {
    argv.insert(argv.end(), {"--registries-conf", conf});
  }
  // Each pull writes a layout of its own, its blobs straight into the
  // store's (skopeo skips those there already), and names its image in the
  // store once done: readers and other pulls never wait for it.
  static std::atomic<uint64_t> pulls{0};
  std::string staging = fmt::format("{}/{}-{}", store_.StagingDir(), getpid(), pulls.fetch_add(1));
  argv.insert(argv.end(), {"copy", "--dest-shared-blob-dir", store_.BlobsDir()});
  if (!request.auth_file.empty()) argv.insert(argv.end(), {"--authfile", request.auth_file});
  argv.push_back("docker://" + ref.String());
  argv.push_back(fmt::format("oci:{}:{}", staging, ref.String()));
  ToolOptions options{.env = {}, .on_line = request.on_progress};
  // A prune waits for the pull, which would otherwise lose blobs it wrote
  // and has not named yet.
  ASSIGN_OR_RETURN(StoreLock use, StoreLock::Take(store_.UseLockPath(), /*exclusive=*/false));
  std::error_code ec;
  fs::create_directories(store_.StagingDir(), ec);
  fs::create_directories(store_.BlobsDir() + "/sha256", ec);
  Result<ToolRun> run = RunTool(argv, options);
  Status added = run.ok() && run->exit_code == 0 ? store_.AddPulled(staging) : OkStatus();
  fs::remove_all(staging, ec);
  if (!run.ok()) {
    return FailedPreconditionError(
        fmt::format("pulling image \"{}\": {} (install skopeo: apt-get install skopeo)",
                    ref.String(), run.status().message()));
  }
  if (run->exit_code != 0) return PullFailure(ref, run->exit_code, run->output);
  RETURN_IF_ERROR(added);
  ASSIGN_OR_RETURN(std::optional<StoredImage> image, store_.Find(ref));
  if (!image) {
    return InternalError(
        fmt::format("pulling image \"{}\": skopeo succeeded but the store does "
                    "not name it",
                    ref.String()));
  }
  return *std::move(image);
}

}  // namespace trainyard::image
