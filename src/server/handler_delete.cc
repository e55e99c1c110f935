// The API's deletes: DeleteOptions read as kube-apiserver reads them, a
// pod's grace period, finalizers that hold an object back, and what goes
// with a namespace.
#include <fmt/format.h>

#include <charconv>

#include "api/json.h"
#include "api/yaml.h"
#include "server/handler.h"
#include "server/handler_internal.h"

namespace trainyard::server {

using internal::BadRequest;

namespace {

// What a DeleteOptions body asks that trainyard does not do is refused, not
// ignored: ignoring dryRun (kubectl delete --dry-run=server) would delete
// for real, preconditions could delete another object than meant, and
// Orphan would take the dependents it asks to keep.
Status RefuseUnheededDeleteOptions(const api::Json& options) {
  auto given = [&](const char* field) {
    auto it = options.find(field);
    return it != options.end() && !it->is_null() && *it != api::Json::array() &&
           *it != api::Json::object() && *it != false;
  };
  if (given("dryRun")) {
    return InvalidArgumentError(
        "DeleteOptions.dryRun: a dry run is supported on create and "
        "update (POST, PUT) only; nothing was deleted");
  }
  if (given("preconditions")) {
    return InvalidArgumentError(
        "DeleteOptions.preconditions are not supported; nothing was deleted");
  }
  // kube-apiserver refuses any other value, so a typo never deletes with
  // the default policy.
  const api::Json& policy = api::ValueAt(options, "propagationPolicy");
  if (!policy.is_null() && policy != "Orphan" && policy != "Background" && policy != "Foreground") {
    return InvalidArgumentError(
        fmt::format("DeleteOptions.propagationPolicy: Unsupported value: {}: supported values: "
                    "\"Foreground\", \"Background\", \"Orphan\"; nothing was deleted",
                    policy.dump()));
  }
  if (given("orphanDependents") || policy == "Orphan") {
    return InvalidArgumentError(
        "DeleteOptions: orphaning dependents is not supported (a job's pods go with it); "
        "nothing was deleted");
  }
  return OkStatus();
}

// The gracePeriodSeconds a DELETE gives: its query's, else its
// DeleteOptions body's (as kubectl sends `--grace-period`); nullopt when
// it gives none.
Result<std::optional<int64_t>> DeleteGrace(const ApiRequest& request) {
  std::optional<int64_t> grace;
  std::string text = request.Param("gracePeriodSeconds");
  if (!text.empty()) {
    int64_t seconds = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (ec != std::errc() || end != text.data() + text.size()) {
      return InvalidArgumentError(
          fmt::format("gracePeriodSeconds: {:?} is not a whole number of seconds", text));
    }
    grace = seconds;
  } else if (request.body.find_first_not_of(" \t\r\n") != std::string::npos) {
    ASSIGN_OR_RETURN(api::Json options, api::ParseJsonValue(request.body, "the DeleteOptions"));
    if (!options.is_object()) return InvalidArgumentError("DeleteOptions must be an object");
    RETURN_IF_ERROR(RefuseUnheededDeleteOptions(options));
    auto it = options.find("gracePeriodSeconds");
    if (it != options.end() && !it->is_null()) {
      if (!it->is_number_integer()) {
        return InvalidArgumentError("DeleteOptions.gracePeriodSeconds must be an integer");
      }
      grace = it->get<int64_t>();
    }
  }
  if (grace && *grace < 0) {
    return InvalidArgumentError(
        fmt::format("gracePeriodSeconds: {} must be greater than or equal to 0", *grace));
  }
  return grace;
}

}  // namespace

ApiResponse ApiHandler::Delete(const ApiTarget& target, const ApiRequest& request) {
  const Resource& r = *target.resource;
  Result<std::optional<int64_t>> grace = DeleteGrace(request);
  if (!grace.ok()) return ErrorResponse(BadRequest(grace.status().message()));
  const std::vector<std::string>& undeletable = r.strategy.undeletable_names;
  if (std::find(undeletable.begin(), undeletable.end(), target.name) != undeletable.end()) {
    return ErrorResponse(
        MakeApiError(403, "Forbidden",
                     fmt::format("{} \"{}\" is forbidden: this {} may not be deleted",
                                 r.Qualified(), target.name, r.singular)));
  }
  return Write(target, target.name, 200,
               [&](store::ObjectStore& store, std::optional<ApiError>&) -> Result<api::Json> {
                 bool with_contents = r.strategy.deletion == api::Deletion::kWithContents;
                 if (with_contents) {
                   // Its objects go with it; the controllers take their pods.
                   for (const Resource& each : api::AllResourceTypes()) {
                     if (!each.namespaced || each.role == api::ResourceRole::kPod) continue;
                     ASSIGN_OR_RETURN(auto listed, store.List(each.store_kind, target.name));
                     for (const api::Json& o : listed.items) {
                       RETURN_IF_ERROR(store
                                           .Delete({each.store_kind, target.name,
                                                    api::StringAt(o, {"metadata", "name"})})
                                           .status());
                     }
                   }
                 }
                 ASSIGN_OR_RETURN(api::Json stored,
                                  store.Get({r.store_kind, target.namespace_, target.name}));
                 // Finalizers hold the object back: it is marked, and goes once
                 // whoever put them there has removed them (see Finish).
                 if (!with_contents && !api::ArrayAt(stored["metadata"], "finalizers").empty()) {
                   if (!api::StringAt(stored, {"metadata", "deletionTimestamp"}).empty())
                     return stored;
                   stored["metadata"]["deletionTimestamp"] = FormatRfc3339(clock_.Now());
                   return store.Update(stored);
                 }
                 if (r.strategy.deletion == api::Deletion::kGraceful) {
                   return DeletePod(store, std::move(stored), *grace);
                 }
                 return store.Delete({r.store_kind, target.namespace_, target.name});
               });
}

Result<api::Json> ApiHandler::DeletePod(store::ObjectStore& store, api::Json stored,
                                        std::optional<int64_t> grace) {
  store::ObjectKey key{"Pod", api::StringAt(stored, {"metadata", "namespace"}),
                       api::StringAt(stored, {"metadata", "name"})};
  std::string now = FormatRfc3339(clock_.Now());
  if (!api_only_) {
    // This server's node agent stops the replica, given the grace period
    // the pod's last state says, and the pod leaves the API at once.
    if (grace) {
      stored["metadata"]["deletionTimestamp"] = now;
      stored["metadata"]["deletionGracePeriodSeconds"] = *grace;
      RETURN_IF_ERROR(store.Update(stored).status());
    }
    return store.Delete(key);
  }
  // As kube-apiserver: a pod on a node that has not finished is marked,
  // with its grace period (the request's, else its own, else 30 s), and
  // left to its kubelet, which deletes it (grace 0) once its containers
  // have stopped. One on no node, finished, or given 0 goes at once; the
  // answer is the pod as it was, marked (its watchers' DELETED event comes
  // with a later resourceVersion).
  int64_t seconds =
      grace.value_or(api::IntAt(stored, {"spec", "terminationGracePeriodSeconds"}, int64_t{30}));
  std::string phase = api::StringAt(stored, {"status", "phase"});
  bool running_on_node = !api::StringAt(stored, {"spec", "nodeName"}).empty() &&
                         phase != "Succeeded" && phase != "Failed";
  api::Json& meta = stored["metadata"];
  if (api::StringAt(meta, "deletionTimestamp").empty()) meta["deletionTimestamp"] = now;
  if (seconds > 0 && running_on_node) {
    int64_t marked = api::IntAt(meta, {"deletionGracePeriodSeconds"}, seconds);
    meta["deletionGracePeriodSeconds"] = std::min(marked, seconds);  // only ever shortened
    return store.Update(stored);
  }
  meta["deletionGracePeriodSeconds"] = 0;
  RETURN_IF_ERROR(store.Delete(key).status());
  return stored;
}

}  // namespace trainyard::server
