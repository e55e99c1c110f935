// How the node agent reads the pods it runs: every pod the first time,
// then those written since and those with work pending; each decoded once
// per resourceVersion.
#include <fmt/format.h>

#include "api/json.h"
#include "node/node_agent.h"

namespace trainyard::node {

Result<const api::Pod*> NodeAgent::Decoded(const api::Json& doc) {
  const api::Json& meta = doc["metadata"];
  std::string key = api::StringAt(meta, "namespace") + "/" + api::StringAt(meta, "name");
  std::string rv = api::StringAt(meta, "resourceVersion");
  auto it = decoded_.find(key);
  if (it != decoded_.end() && it->second.first == rv) return &it->second.second;
  ASSIGN_OR_RETURN(api::Pod pod, api::DecodePod(doc));
  auto& entry = decoded_[key];
  entry = {rv, std::move(pod)};
  return &entry.second;
}

void NodeAgent::AddPod(const api::Json& doc, std::vector<const api::Pod*>& pods) {
  Result<const api::Pod*> pod = Decoded(doc);
  if (pod.ok()) {
    pods.push_back(*pod);
    return;
  }
  // A pod that cannot be decoded is left as it is, said once, and never
  // stops the others (nor, as an orphan, loses a process it has).
  std::string key =
      api::StringAt(doc["metadata"], "namespace") + "/" + api::StringAt(doc["metadata"], "name");
  if (unreadable_.insert(key + "@" + api::StringAt(doc["metadata"], "resourceVersion")).second) {
    options_.log->Warning("trainyard: pod {} cannot be decoded, left alone: {}", key,
                          pod.status().message());
  }
}

Status NodeAgent::ReadAllPods(std::vector<const api::Pod*>& pods) {
  {
    MutexLock lock(changed_mu_);
    changed_.clear();  // every pod is looked at now
  }
  std::set<std::string> live;
  // In place, without copying any pod's JSON.
  RETURN_IF_ERROR(options_.store->Scan("Pod", "", [&](const api::Json& doc) {
    live.insert(api::StringAt(doc["metadata"], "namespace") + "/" +
                api::StringAt(doc["metadata"], "name"));
    AddPod(doc, pods);
  }));
  std::erase_if(decoded_, [&](const auto& entry) { return !live.contains(entry.first); });
  for (const auto& [key, replica] : replicas_) {
    if (!live.contains(key)) gone_.insert(key);
  }
  MutexLock lock(changed_mu_);  // a grace no replica here will take
  std::erase_if(deletion_grace_, [&](const auto& entry) {
    return !live.contains(entry.first) && !replicas_.contains(entry.first);
  });
  return OkStatus();
}

Status NodeAgent::ReadChangedPods(std::vector<const api::Pod*>& pods) {
  std::set<std::string> keys;
  {
    MutexLock lock(changed_mu_);
    keys.swap(changed_);
  }
  for (const std::string& key : active_) {
    if (!gone_.contains(key)) keys.insert(key);
  }
  for (const std::string& key : keys) {
    size_t slash = key.find('/');
    Result<api::Json> doc =
        options_.store->Get({"Pod", key.substr(0, slash), key.substr(slash + 1)});
    if (doc.ok()) {
      AddPod(*doc, pods);
      continue;
    }
    if (doc.status().code() != StatusCode::kNotFound) return doc.status();
    decoded_.erase(key);
    if (replicas_.contains(key)) {
      gone_.insert(key);
    } else {
      MutexLock lock(changed_mu_);  // a grace no replica here will take
      deletion_grace_.erase(key);
    }
  }
  return OkStatus();
}

}  // namespace trainyard::node
