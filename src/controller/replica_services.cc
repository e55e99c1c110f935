#include "controller/replica_services.h"

#include <fmt/format.h>

#include <charconv>
#include <vector>

#include "api/object.h"
#include "api/reflect.h"
#include "api/well_known.h"
#include "common/strings.h"
#include "controller/owned.h"
#include "controller/replica_pod.h"

namespace trainyard::controller {
namespace {

// Whether the replica a Service's labels name is one the job has now.
bool InRange(const api::TrainingJob& job, const api::Json& service) {
  const api::Json& labels = api::ObjectAt(service, {"metadata", "labels"});
  std::string type = api::StringAt(labels, std::string(api::kLabelReplicaType).c_str());
  std::string index = api::StringAt(labels, std::string(api::kLabelReplicaIndex).c_str());
  int32_t i = -1;
  auto [end, ec] = std::from_chars(index.data(), index.data() + index.size(), i);
  if (ec != std::errc() || end != index.data() + index.size()) return false;
  return i >= 0 && i < job.Replicas(api::CanonicalReplicaType(job.kind, type));
}

}  // namespace

api::Json BuildReplicaService(const api::TrainingJob& job, const frameworks::ReplicaRef& replica) {
  api::Json labels = {
      {std::string(api::kLabelOperatorName), AsciiLower(job.info().name) + "-controller"},
      {std::string(api::kLabelJobName), job.metadata.name},
      {std::string(api::kLabelReplicaType), AsciiLower(replica.type)},
      {std::string(api::kLabelReplicaIndex), std::to_string(replica.index)}};
  api::Json ports = api::Json::array();
  if (const api::Container* c = frameworks::DefaultContainer(job, replica.type); c != nullptr) {
    for (const api::ContainerPort& p : c->ports) {
      if (!p.container_port) continue;
      api::Json port = {{"name", p.name}, {"port", *p.container_port}};
      ports.push_back(std::move(port));
    }
  }
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata",
           {{"name", frameworks::ReplicaName(job, replica)},
            {"namespace", job.metadata.namespace_},
            {"labels", labels},
            {"ownerReferences", api::Json::array({api::Encode(OwnerOf(job))})}}},
          {"spec", {{"clusterIP", "None"}, {"selector", labels}, {"ports", ports}}}};
}

api::Container PyTorchInitContainer(const api::TrainingJob& job, const std::string& image,
                                    int max_tries) {
  api::Container c;
  c.name = "init-pytorch";
  c.image = image;
  c.extra = {{"imagePullPolicy", "IfNotPresent"}};
  std::string master = frameworks::ReplicaName(job, {"Master", 0});
  c.command = {"sh", "-c",
               fmt::format("err=1;for i in $(seq {}); do if nslookup {}; then err=0 && break; fi;"
                           "echo waiting for master; sleep 2; done; exit $err",
                           max_tries, master)};
  auto quantity = [](const char* text) { return *Quantity::Parse(text); };
  c.resources.limits = {{"cpu", quantity("100m")}, {"memory", quantity("20Mi")}};
  c.resources.requests = {{"cpu", quantity("50m")}, {"memory", quantity("10Mi")}};
  return c;
}

Status ReconcileServices(store::ObjectStore& store, const api::TrainingJob& job,
                         const RecordFn& record) {
  if (job.info().mpi_launcher) return OkStatus();  // mpirun reaches pods by kubectl exec
  std::vector<api::Json> have;  // copied out: a scan's visitor must not call the store
  RETURN_IF_ERROR(store.ScanOwnedBy("Service", job.metadata.uid,
                                    [&](const api::Json& s) { have.push_back(s); }));
  std::set<std::string> names;
  for (const api::Json& service : have) {
    std::string name = api::StringAt(service, {"metadata", "name"});
    if (InRange(job, service)) {
      names.insert(name);
      continue;
    }
    RETURN_IF_ERROR(DeleteIfPresent(store, {"Service", job.metadata.namespace_, name}));
    RETURN_IF_ERROR(record("SuccessfulDeleteService", "Deleted service: " + name));
  }
  for (const frameworks::ReplicaRef& replica : frameworks::AllReplicas(job)) {
    std::string name = frameworks::ReplicaName(job, replica);
    if (names.contains(name)) continue;
    Result<api::Json> created = store.Create(BuildReplicaService(job, replica));
    if (!created.ok()) {
      if (created.status().code() == StatusCode::kAlreadyExists) continue;  // not ours yet in cache
      RETURN_IF_ERROR(
          record("FailedCreateService", "Error creating: " + created.status().message()));
      return created.status();
    }
    RETURN_IF_ERROR(record("SuccessfulCreateService", "Created service: " + name));
  }
  return OkStatus();
}

Status DeleteServiceOf(store::ObjectStore& store, const api::TrainingJob& job,
                       const std::string& pod_name, const RecordFn& record) {
  Result<api::Json> gone = store.Delete({"Service", job.metadata.namespace_, pod_name});
  if (gone.status().code() == StatusCode::kNotFound) return OkStatus();
  RETURN_IF_ERROR(gone.status());
  return record("SuccessfulDeleteService", "Deleted service: " + pod_name);
}

}  // namespace trainyard::controller
