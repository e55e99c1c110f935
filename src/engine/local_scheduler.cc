#include "engine/local_scheduler.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "api/pod_object.h"

namespace trainyard::engine {
namespace {

// On the stored JSON, without copying any of it.
bool IsTerminal(const api::Json& pod) {
  auto status = pod.find("status");
  if (status == pod.end() || !status->is_object()) return false;
  auto phase = status->find("phase");
  return phase != status->end() && (*phase == "Succeeded" || *phase == "Failed");
}

bool IsBound(const api::Json& pod) {
  auto spec = pod.find("spec");
  if (spec == pod.end() || !spec->is_object()) return false;
  auto node = spec->find("nodeName");
  return node != spec->end() && node->is_string() && !node->get_ref<const std::string&>().empty();
}

std::string GangKey(const api::Json& pod) {
  const api::Json& meta = pod["metadata"];
  for (const api::Json& owner : meta.value("ownerReferences", api::Json::array())) {
    if (owner.value("controller", false)) return owner.value("uid", "");
  }
  return "pod/" + meta.value("namespace", "") + "/" + meta.value("name", "");
}

std::vector<std::string> SplitGpus(const std::string& text) {
  std::vector<std::string> ids;
  std::istringstream in(text);
  std::string id;
  while (std::getline(in, id, ',')) {
    if (!id.empty()) ids.push_back(id);
  }
  return ids;
}

int64_t VersionOf(const api::Json& pod) {
  std::string rv = pod["metadata"].value("resourceVersion", "0");
  return std::strtoll(rv.c_str(), nullptr, 10);
}

}  // namespace

struct LocalScheduler::Gang {
  int64_t first_version = 0;  // creation order: the oldest pod's resourceVersion
  std::vector<api::Json> pods;
  std::vector<scheduler::PodDemand> demands;
};

Status LocalScheduler::MarkUnschedulable(Gang& gang, const std::string& reason,
                                         const std::string& message) {
  for (api::Json& doc : gang.pods) {
    api::Json& status = doc["status"];
    if (!status.is_object()) status = api::Json::object();
    api::Json& conditions = status["conditions"];
    if (!conditions.is_array()) conditions = api::Json::array();
    auto it = std::find_if(conditions.begin(), conditions.end(), [](const api::Json& c) {
      return c.value("type", "") == "PodScheduled";
    });
    if (it != conditions.end() && it->value("status", "") == "False" &&
        it->value("message", "") == message) {
      continue;
    }
    api::Json condition = {{"type", "PodScheduled"},
                           {"status", "False"},
                           {"reason", reason},
                           {"message", message},
                           {"lastTransitionTime", FormatRfc3339(options_.clock->Now())}};
    if (it != conditions.end()) {
      *it = std::move(condition);
    } else {
      conditions.push_back(std::move(condition));
    }
    status["phase"] = "Pending";
    Result<api::Json> written = options_.store->UpdateStatus(doc);
    if (!written.ok() && written.status().code() != StatusCode::kNotFound) return written.status();
  }
  return OkStatus();
}

Status LocalScheduler::Sync() {
  // Most steps have nothing to bind: find that out before copying anything.
  bool any_pending = false;
  RETURN_IF_ERROR(options_.store->Scan("Pod", "", [&](const api::Json& pod) {
    any_pending = any_pending || (!IsTerminal(pod) && !IsBound(pod));
  }));
  if (!any_pending) return OkStatus();
  ASSIGN_OR_RETURN(store::ObjectStore::ListResult list, options_.store->List("Pod", ""));
  scheduler::InUse in_use;
  std::map<std::string, Gang> gangs;
  for (api::Json& doc : list.items) {
    if (IsTerminal(doc)) continue;
    ASSIGN_OR_RETURN(api::Pod pod, api::DecodePod(doc));
    scheduler::Amounts demand = scheduler::PodDemandOf(pod.spec);
    if (!pod.spec.node_name.empty()) {
      for (const auto& [name, milli] : demand) in_use.amounts[name] += milli;
      auto gpus = pod.metadata.annotations.find(std::string(api::kGpusAnnotation));
      if (gpus != pod.metadata.annotations.end()) {
        for (const std::string& id : SplitGpus(gpus->second)) in_use.gpus.insert(id);
      }
      continue;
    }
    Gang& gang = gangs[GangKey(doc)];
    int64_t version = VersionOf(doc);
    gang.first_version = gang.pods.empty() ? version : std::min(gang.first_version, version);
    gang.demands.push_back({pod.metadata.name, std::move(demand)});
    gang.pods.push_back(std::move(doc));
  }
  std::vector<Gang*> order;
  for (auto& [key, gang] : gangs) order.push_back(&gang);
  std::sort(order.begin(), order.end(),
            [](const Gang* a, const Gang* b) { return a->first_version < b->first_version; });
  bool blocked = false;
  for (Gang* gang : order) {
    scheduler::GangFit fit = scheduler::FitGang(options_.machine, in_use, gang->demands);
    if (!fit.ever_fits) {
      RETURN_IF_ERROR(
          MarkUnschedulable(*gang, std::string(api::kExceedsCapacityReason), fit.reason));
      continue;
    }
    if (!fit.fits || blocked) {
      std::string message =
          !fit.fits ? fit.reason : "waiting behind an earlier job that does not fit yet";
      RETURN_IF_ERROR(MarkUnschedulable(*gang, std::string(api::kUnschedulableReason), message));
      blocked = true;
      continue;
    }
    for (size_t i = 0; i < gang->pods.size(); ++i) {
      api::Json& doc = gang->pods[i];
      const std::vector<std::string>& gpus = fit.gpus[gang->demands[i].name];
      doc["spec"]["nodeName"] = options_.node_name;
      if (!gpus.empty()) {
        std::string ids;
        for (const std::string& id : gpus) ids += (ids.empty() ? "" : ",") + id;
        doc["metadata"]["annotations"][std::string(api::kGpusAnnotation)] = ids;
        in_use.gpus.insert(gpus.begin(), gpus.end());
      }
      for (const auto& [name, milli] : gang->demands[i].amounts) in_use.amounts[name] += milli;
      Result<api::Json> bound = options_.store->Update(doc);
      if (!bound.ok() && bound.status().code() != StatusCode::kNotFound) return bound.status();
    }
  }
  return OkStatus();
}

}  // namespace trainyard::engine
