// GET .../<jobs>/NAME/artifacts: what the job's replicas wrote to their
// output folder (api::ArtifactsDirOf), listed; with ?path=, that file.
// A trial's jobs, and a TrainJob's, answer with their owner's folder, the
// one their replicas were given; a deleted job, with its folder while it
// is kept (engine/artifact_dirs.h).
#include <fmt/format.h>

#include <variant>

#include "api/registry.h"
#include "api/tracking.h"
#include "server/artifacts.h"
#include "server/handler.h"
#include "server/handler_internal.h"
#include "store/object_lookup.h"

namespace trainyard::server {
namespace {

using internal::BadRequest;

// The most a listing shows; a folder with more is said to be cut short.
constexpr size_t kMaxListed = 10'000;
api::Json ListingDocument(const api::TrackedOwner& owner, const ArtifactListing& listing) {
  api::Json items = api::Json::array();
  for (const Artifact& a : listing.items) {
    items.push_back({{"path", a.path}, {"size", a.size}, {"modified", FormatRfc3339(a.modified)}});
  }
  return {{"apiVersion", "trainyard.dev/v1"},
          {"kind", "ArtifactList"},
          {"owner", {{"kind", owner.kind}, {"name", owner.name}}},
          {"truncated", listing.truncated},
          {"items", std::move(items)}};
}

}  // namespace

namespace {

// Where `target`'s artifacts are: its own (or its owner's: a trial's job
// gives its trial's) folder; a deleted job's, while kept; or the 404.
struct Found {
  std::string dir;
  api::TrackedOwner owner;
  std::optional<TimePoint> deleted;
};

std::variant<Found, ApiError> FindFolder(Backend& backend, const ApiTarget& target,
                                         const std::string& root, TimePoint now) {
  const Resource& r = *target.resource;
  Result<api::Json> object = backend.store().Get({r.store_kind, target.namespace_, target.name});
  if (object.status().code() == StatusCode::kNotFound) {
    // A deleted job's artifacts are kept a while: found by its kind and name.
    std::string dir = DeletedOwnersFolder(root + "/" + target.namespace_, r.kind, target.name);
    std::optional<ArtifactOwner> kept = dir.empty() ? std::nullopt : ReadArtifactOwner(dir);
    // Past its time, it is gone, whether or not it is removed yet.
    if (!kept || now - *kept->deleted >= backend.ArtifactsRetention()) {
      return ApiErrorOf(object.status(), &r, target.name);
    }
    return Found{dir, {kept->kind, kept->name, kept->uid}, kept->deleted};
  }
  if (!object.ok()) return ApiErrorOf(object.status(), &r, target.name);
  std::optional<api::TrackedOwner> owner =
      api::TrackedOwnerUp(r.kind, target.name, store::LookupIn(backend.store(), target.namespace_));
  if (!owner) {
    owner = api::TrackedOwner{r.kind, target.name, api::StringAt(*object, {"metadata", "uid"})};
  }
  return Found{api::ArtifactsDirOf(root, target.namespace_, owner->uid), *owner, std::nullopt};
}

}  // namespace

ApiResponse ApiHandler::Artifacts(const ApiTarget& target, const ApiRequest& request) {
  const Resource& r = *target.resource;
  std::string root = backend_.ArtifactsDir();
  if (root.empty()) {
    return ErrorResponse(MakeApiError(
        404, "NotFound", "this server runs no jobs (it is API-only), so it keeps no artifacts"));
  }
  std::variant<Found, ApiError> found = FindFolder(backend_, target, root, clock_.Now());
  if (auto* error = std::get_if<ApiError>(&found)) return ErrorResponse(*error);
  const Found& where = std::get<Found>(found);
  std::string path = request.Param("path");
  if (path.empty()) {
    Result<ArtifactListing> listing = ListArtifacts(where.dir, "", true, kMaxListed);
    if (!listing.ok()) return ErrorResponse(ApiErrorOf(listing.status(), &r, target.name));
    api::Json doc = ListingDocument(where.owner, *listing);
    if (where.deleted) {
      doc["owner"]["deleted"] = FormatRfc3339(*where.deleted);
      doc["owner"]["keptUntil"] = FormatRfc3339(*where.deleted + backend_.ArtifactsRetention());
    }
    return Object(200, doc);
  }
  if (Status bad = CheckArtifactPath(path); !bad.ok()) {
    return ErrorResponse(BadRequest(std::string(bad.message())));
  }
  Result<OpenedArtifact> file = OpenArtifact(where.dir, path);
  if (!file.ok()) {
    return ErrorResponse(MakeApiError(
        404, "NotFound", fmt::format("{} {:?} has no artifact {:?}", r.kind, target.name, path)));
  }
  return ArtifactDownload(std::move(*file), path);
}

}  // namespace trainyard::server
