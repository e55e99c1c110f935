#include "scheduler/tests/scenario.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "api/reflect.h"
#include "api/yaml.h"

namespace trainyard::scheduler::testing {
namespace {

using api::Json;

// Errors in a scenario file are the test author's: exceptions, caught once.
struct BadScenario : std::runtime_error {
  using std::runtime_error::runtime_error;
};

int64_t Milli(const Json& value, const std::string& what) {
  std::string text = value.is_string() ? value.get<std::string>() : value.dump();
  Result<Quantity> q = Quantity::Parse(text);
  if (!q.ok()) throw BadScenario(fmt::format("{}: {}", what, q.status().message()));
  return q->milli();
}

Amounts AmountsOf(const Json& map, const std::string& what) {
  Amounts out;
  if (map.is_null()) return out;
  for (const auto& [name, value] : map.items()) out[name] = Milli(value, what + "." + name);
  return out;
}

template <class T>
T DecodeApi(const Json& value, const std::string& what) {
  T out;
  FieldErrors errors;
  api::Decode(value, FieldPath(what), out, errors);
  if (!errors.empty()) throw BadScenario(errors.front().ToString());
  return out;
}

std::map<std::string, std::string> Strings(const Json& map) {
  std::map<std::string, std::string> out;
  if (map.is_null()) return out;
  for (const auto& [k, v] : map.items()) out[k] = v.is_string() ? v.get<std::string>() : v.dump();
  return out;
}

std::vector<std::string> Ids(int count) {
  std::vector<std::string> ids;
  for (int i = 0; i < count; ++i) ids.push_back(std::to_string(i));
  return ids;
}

Node NodeOf(const Json& j) {
  Node node;
  node.name = j.at("name");
  node.labels = Strings(j.value("labels", Json()));
  node.allocatable = AmountsOf(j.value("allocatable", Json()), node.name + ".allocatable");
  auto gpus = node.allocatable.find(std::string(kGpuResource));
  if (gpus != node.allocatable.end())
    node.devices[std::string(kGpuResource)] = Ids(gpus->second / 1000);
  if (j.contains("devices")) {
    for (const auto& [name, ids] : j["devices"].items()) node.devices[name] = ids;
  }
  for (const Json& t : j.value("taints", Json::array())) {
    node.taints.push_back({t.value("key", ""), t.value("value", ""), t.value("effect", "")});
  }
  node.unschedulable = j.value("unschedulable", false);
  return node;
}

PodResources ResourcesOf(const Json& j, const std::string& what) {
  return {AmountsOf(j.value("requests", Json()), what + ".requests"),
          AmountsOf(j.value("limits", Json()), what + ".limits")};
}

void AddPending(const Json& j, Gang& gang) {
  PendingPod pod;
  pod.resources = ResourcesOf(j, gang.id);
  pod.constraints.node_selector = Strings(j.value("nodeSelector", Json()));
  if (j.contains("affinity")) {
    pod.constraints.required_affinity = DecodeApi<api::NodeSelector>(j["affinity"], "affinity");
  }
  for (const Json& t : j.value("tolerations", Json::array())) {
    pod.constraints.tolerations.push_back(DecodeApi<api::Toleration>(t, "tolerations"));
  }
  std::string name = j.at("name");
  int replicas = j.value("replicas", 1);
  for (int i = 0; i < replicas; ++i) {
    pod.name = replicas == 1 ? name : fmt::format("{}-{}", name, i);
    gang.pending.push_back(pod);
  }
}

void AddBound(const Json& j, Gang& gang) {
  BoundPod pod;
  pod.name = j.at("name");
  pod.node = j.at("node");
  pod.resources = ResourcesOf(j, gang.id);
  if (j.contains("gpus")) pod.devices[std::string(kGpuResource)] = j["gpus"];
  gang.bound.push_back(std::move(pod));
}

int64_t Seconds(const Json& j, const char* key, int64_t fallback = 0) {
  return j.contains(key) ? static_cast<int64_t>(j[key].get<double>() * 1000) : fallback;
}

Gang GangOf(const Json& j, int index) {
  Gang gang;
  gang.id = j.at("id");
  gang.namespace_ = j.value("namespace", "default");
  gang.cluster_queue = j.value("queue", "");
  gang.priority = j.value("priority", 0);
  gang.created = Seconds(j, "created", index);
  if (j.value("preemptionPolicy", "") == "Never") gang.preemption = PreemptionPolicy::kNever;
  for (const Json& pod : j.value("pods", Json::array())) AddPending(pod, gang);
  for (const Json& pod : j.value("bound", Json::array())) AddBound(pod, gang);
  if (j.contains("minAvailable")) gang.min_available = j["minAvailable"].get<int32_t>();
  gang.min_resources = AmountsOf(j.value("minResources", Json()), gang.id + ".minResources");
  if (j.contains("scheduleTimeout")) gang.schedule_timeout_ms = Seconds(j, "scheduleTimeout");
  if (j.contains("timeLimit")) gang.time_limit_ms = Seconds(j, "timeLimit");
  gang.waiting_since = Seconds(j, "waitingSince");
  gang.started = Seconds(j, "started");
  gang.terminating = j.value("terminating", false);
  gang.nominated = j.value("nominated", false);
  return gang;
}

ClusterQueue QueueOf(const Json& j) {
  ClusterQueue q;
  q.name = j.at("name");
  q.cohort = j.value("cohort", "");
  const Json quotas = j.value("quotas", Json::object());
  for (const auto& [name, value] : quotas.items()) {
    Quota quota;
    if (value.is_object()) {
      quota.nominal = Milli(value.at("nominal"), q.name + "." + name);
      if (value.contains("borrowingLimit"))
        quota.borrowing_limit = Milli(value["borrowingLimit"], name);
      if (value.contains("lendingLimit")) quota.lending_limit = Milli(value["lendingLimit"], name);
    } else {
      quota.nominal = Milli(value, q.name + "." + name);
    }
    q.quotas[name] = quota;
  }
  std::string within = j.value("withinClusterQueue", "Never");
  if (within == "LowerPriority") q.within_queue = WithinQueuePreemption::kLowerPriority;
  if (within == "LowerOrNewerEqualPriority")
    q.within_queue = WithinQueuePreemption::kLowerOrNewerEqualPriority;
  std::string reclaim = j.value("reclaimWithinCohort", "Never");
  if (reclaim == "LowerPriority") q.reclaim = ReclaimPreemption::kLowerPriority;
  if (reclaim == "Any") q.reclaim = ReclaimPreemption::kAny;
  if (j.value("queueingStrategy", "") == "StrictFIFO") q.strategy = QueueingStrategy::kStrictFifo;
  q.fair_weight_milli = j.contains("weight") ? Milli(j["weight"], "weight") : 1000;
  q.stopped = j.value("stopped", false);
  return q;
}

Expectation ExpectationOf(const Json& j) {
  Expectation e;
  e.placements = Strings(j.value("placements", Json()));
  e.devices = Strings(j.value("devices", Json()));
  e.waiting = Strings(j.value("waiting", Json()));
  e.evictions = Strings(j.value("evictions", Json()));
  const Json positions = j.value("positions", Json::object());
  for (const auto& [gang, position] : positions.items()) {
    e.positions[gang] = position.get<int>();
  }
  return e;
}

Scenario ScenarioOf(const Json& j, const std::string& file) {
  Scenario s;
  s.file = file;
  s.name = j.at("name");
  if (j.value("policy", "BinPack") == "Spread") s.options.policy = Policy::kSpread;
  s.options.fair_sharing = j.value("fairSharing", true);
  s.snapshot.now = Seconds(j, "now");
  for (const Json& n : j.value("nodes", Json::array())) s.snapshot.nodes.push_back(NodeOf(n));
  int index = 0;
  for (const Json& g : j.value("gangs", Json::array()))
    s.snapshot.gangs.push_back(GangOf(g, index++));
  for (const Json& q : j.value("clusterQueues", Json::array()))
    s.snapshot.cluster_queues.push_back(QueueOf(q));
  for (const Json& q : j.value("resourceQuotas", Json::array())) {
    s.snapshot.resource_quotas.push_back(
        {q.value("namespace", "default"), q.at("name"), AmountsOf(q.at("hard"), "hard")});
  }
  s.expect = ExpectationOf(j.value("expect", Json::object()));
  return s;
}

std::string Joined(const std::vector<std::string>& ids) {
  return fmt::format("{}", fmt::join(ids, ","));
}

}  // namespace

Result<std::vector<Scenario>> LoadScenarios(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  ASSIGN_OR_RETURN(std::vector<api::SourceDocument> docs, api::ParseManifests(text.str(), path));
  std::vector<Scenario> out;
  for (const api::SourceDocument& doc : docs) {
    try {
      out.push_back(ScenarioOf(doc.value, path));
    } catch (const std::exception& e) {
      return InvalidArgumentError(fmt::format("{}:{}: {}", path, doc.line, e.what()));
    }
  }
  return out;
}

std::string Render(const Decision& d) {
  std::string out;
  for (const Placement& p : d.placements) {
    out += p.gang + "/" + p.pod + "@" + p.node;
    for (const auto& [r, ids] : p.devices) {
      for (const std::string& id : ids) out += " " + r + "#" + id;
    }
    out += "\n";
  }
  for (const Waiting& w : d.waiting)
    out += fmt::format("wait {} {} {} {}\n", w.gang, w.reason, w.position, w.message);
  for (const Eviction& e : d.evictions)
    out += fmt::format("evict {} {} {}\n", e.gang, e.reason, e.message);
  return out;
}

std::string Compare(const Decision& decision, const Expectation& expect) {
  std::string diff;
  std::map<std::string, std::string> placed, devices;
  for (const Placement& p : decision.placements) {
    std::string key = p.gang + "/" + p.pod;
    placed[key] = p.node;
    auto gpus = p.devices.find(std::string(kGpuResource));
    if (gpus != p.devices.end()) devices[key] = Joined(gpus->second);
  }
  if (placed != expect.placements) {
    diff += "placements:\n";
    for (const auto& [pod, node] : placed) diff += fmt::format("  got {}: {}\n", pod, node);
    for (const auto& [pod, node] : expect.placements)
      diff += fmt::format("  want {}: {}\n", pod, node);
  }
  for (const auto& [pod, ids] : expect.devices) {
    if (devices[pod] != ids)
      diff += fmt::format("devices of {}: got {}, want {}\n", pod, devices[pod], ids);
  }
  std::map<std::string, const Waiting*> waiting;
  for (const Waiting& w : decision.waiting) waiting[w.gang] = &w;
  for (const auto& [gang, w] : waiting) {
    auto want = expect.waiting.find(gang);
    std::string got = fmt::format("{}: {}", w->reason, w->message);
    if (want == expect.waiting.end()) {
      diff += fmt::format("waiting {}: unexpected, {}\n", gang, got);
      continue;
    }
    size_t colon = want->second.find(':');
    std::string reason = want->second.substr(0, colon);
    std::string text = colon == std::string::npos ? "" : want->second.substr(colon + 2);
    if (w->reason != reason || w->message.find(text) == std::string::npos) {
      diff += fmt::format("waiting {}: got \"{}\", want \"{}\"\n", gang, got, want->second);
    }
  }
  for (const auto& [gang, want] : expect.waiting) {
    if (!waiting.contains(gang)) diff += fmt::format("waiting {}: missing, want {}\n", gang, want);
  }
  std::map<std::string, std::string> evicted;
  for (const Eviction& e : decision.evictions) evicted[e.gang] = e.reason;
  if (evicted != expect.evictions) {
    for (const auto& [gang, reason] : evicted)
      diff += fmt::format("evicted got {}: {}\n", gang, reason);
    for (const auto& [gang, reason] : expect.evictions)
      diff += fmt::format("evicted want {}: {}\n", gang, reason);
  }
  for (const auto& [gang, position] : expect.positions) {
    int got = waiting.contains(gang) ? waiting[gang]->position : 0;
    if (got != position)
      diff += fmt::format("position of {}: got {}, want {}\n", gang, got, position);
  }
  return diff;
}

}  // namespace trainyard::scheduler::testing
