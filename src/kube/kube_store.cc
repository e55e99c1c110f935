#include "kube/kube_store.h"

#include <fmt/format.h>

#include <charconv>

#include "api/json.h"
#include "api/registry.h"
#include "common/strings.h"

namespace trainyard::kube {
namespace {

std::optional<int64_t> Version(const api::Json& object) {
  std::string text = api::StringAt(object, {"metadata", "resourceVersion"});
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// Whether `incoming` is no older than `held`. Versions that do not read as
// integers cannot be ordered: the later arrival wins.
bool NotOlder(const api::Json& incoming, const api::Json& held) {
  std::optional<int64_t> a = Version(incoming), b = Version(held);
  return !a || !b || *a >= *b;
}

// Whether `object` is newer than the watch's `watched` resourceVersion
// (the etcd revision every kube-apiserver issues, one order for the kind).
// Versions that do not read as integers cannot be ordered: it is taken.
bool Newer(const api::Json& object, const std::string& watched) {
  std::optional<int64_t> a = Version(object);
  int64_t b = 0;
  auto [end, ec] = std::from_chars(watched.data(), watched.data() + watched.size(), b);
  if (!a || watched.empty() || ec != std::errc() || end != watched.data() + watched.size()) {
    return true;
  }
  return *a > b;
}

// What installs the CustomResourceDefinition of `type` on a cluster:
// trainyard's own for Kubeflow's kinds; the projects' for JobSet and the
// gang schedulers' PodGroups, which trainyard uses but does not define.
std::string InstallHint(const api::ResourceType& type) {
  if (type.group == "jobset.x-k8s.io") {
    return "install JobSet, whose controller runs a TrainJob's Jobs "
           "(https://jobset.sigs.k8s.io/docs/installation/), or leave --trainer out";
  }
  if (type.group == "scheduling.volcano.sh") {
    return "install Volcano, whose PodGroups --gang-scheduler-name volcano asks for "
           "(https://volcano.sh/en/docs/installation/)";
  }
  if (type.group == "scheduling.x-k8s.io") {
    return "install scheduler-plugins' coscheduling, whose PodGroups --gang-scheduler-name asks "
           "for (https://github.com/kubernetes-sigs/scheduler-plugins: its manifests/crds), or "
           "name volcano or trainyard";
  }
  return "install its CustomResourceDefinition (`trainyard manifests crds | kubectl apply "
         "--server-side -f -`)";
}

// A list's items carry no kind or apiVersion; the cache keeps whole
// objects, as a watch sends them.
void Complete(const std::string& kind, api::Json& object) {
  const api::ResourceType* type = api::ResourceTypeOfKind(kind);
  object["kind"] = type != nullptr ? type->kind : kind;
  if (type != nullptr) object["apiVersion"] = type->GroupVersion();
}

// A list's items; Go writes an empty one as null.
api::Json& ItemsOf(api::Json& list) {
  static const api::Json kNone = api::Json::array();
  api::Json& items = list["items"];
  if (!items.is_array()) items = kNone;
  return items;
}

std::string NamespaceOf(const api::Json& o) { return api::StringAt(o, {"metadata", "namespace"}); }
std::string NameOf(const api::Json& o) { return api::StringAt(o, {"metadata", "name"}); }

}  // namespace

KubeStore::KubeStore(KubeStoreOptions options) : options_(std::move(options)) {}

KubeStore::~KubeStore() { Stop(); }

bool KubeStore::Watched(const std::string& kind) const {
  return std::find(options_.kinds.begin(), options_.kinds.end(), kind) != options_.kinds.end();
}

Status KubeStore::Start() {
  std::vector<std::string> served;
  for (const std::string& kind : options_.kinds) {
    Status listed = Relist(kind, /*notify=*/false);
    const api::ResourceType* type = api::ResourceTypeOfKind(kind);
    bool optional = std::find(options_.optional_kinds.begin(), options_.optional_kinds.end(),
                              kind) != options_.optional_kinds.end();
    if (listed.code() == StatusCode::kNotFound && type != nullptr && optional) {
      options_.log->Warning(
          "trainyard operator: the cluster serves no {}: its objects are not "
          "reconciled; {}",
          type->Qualified(), InstallHint(*type));
      continue;
    }
    served.push_back(kind);
    if (listed.code() == StatusCode::kNotFound && type != nullptr) {
      // A kind the cluster does not serve: its CRD is not installed.
      return NotFoundError(fmt::format("the cluster serves no {} ({}): {}", type->Qualified(),
                                       Trim(listed.message()), InstallHint(*type)));
    }
    RETURN_IF_ERROR(listed);
  }
  options_.kinds = std::move(served);
  {
    // What the lists filled the caches with was told to no watcher: a
    // watch resumes from after it at the earliest.
    MutexLock lock(watch_mu_);
    history_from_ = CurrentResourceVersion();
  }
  for (size_t i = 0; i < options_.kinds.size(); ++i) {
    handles_.push_back(std::make_unique<WatchHandle>());
  }
  for (const std::string& kind : options_.kinds) {
    threads_.emplace_back([this, kind] { Follow(kind); });
  }
  return OkStatus();
}

void KubeStore::Stop() {
  {
    MutexLock lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.NotifyAll();
  for (auto& handle : handles_) handle->Stop();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

void KubeStore::Pause(Duration d) {
  MutexLock lock(stop_mu_);
  stop_cv_.WaitFor(stop_mu_, d, [this] { return stopping_.load(); });
}

Status KubeStore::Relist(const std::string& kind, bool notify) {
  ASSIGN_OR_RETURN(api::Json list, options_.client->List(kind, options_.namespace_));
  std::map<Name, api::Json> listed;
  for (api::Json& item : ItemsOf(list)) {
    if (!item.is_object()) continue;
    Complete(kind, item);
    // The key first: nlohmann's assignment takes its operand by value, and
    // C++17 builds that operand (moving `item` away) before the left side.
    Name name{NamespaceOf(item), NameOf(item)};
    listed[name] = std::move(item);
  }
  std::vector<api::Json> gone;
  {
    MutexLock lock(mu_);
    Cache& cache = caches_[kind];
    for (const auto& [name, object] : cache.objects) {
      if (!listed.contains(name)) gone.push_back(object);
    }
    cache.resource_version = api::StringAt(list, {"metadata", "resourceVersion"});
  }
  for (api::Json& object : gone) Apply(kind, std::move(object), /*deleted=*/true, notify, true);
  for (auto& [name, object] : listed) {
    Apply(kind, std::move(object), /*deleted=*/false, notify, /*from_watch=*/true);
  }
  return OkStatus();
}

void KubeStore::Follow(const std::string& kind) {
  size_t slot =
      std::find(options_.kinds.begin(), options_.kinds.end(), kind) - options_.kinds.begin();
  WatchHandle& handle = *handles_[slot];
  int failures = 0;
  std::string said;
  while (!stopping_) {
    std::string since;
    {
      MutexLock lock(mu_);
      since = caches_[kind].resource_version;
    }
    bool expired = false;
    Status watched = options_.client->Watch(
        kind, options_.namespace_, since,
        [&](const api::Json& event) {
          std::string type = api::StringAt(event, "type");
          api::Json object = event.contains("object") ? event["object"] : api::Json::object();
          if (type == "ERROR") {
            // 410: the version is older than the server keeps.
            expired = api::IntAt(object, {"code"}) == 410;
            return false;
          }
          std::string rv = api::StringAt(object, {"metadata", "resourceVersion"});
          if (type != "BOOKMARK") {
            Complete(kind, object);
            Apply(kind, std::move(object), type == "DELETED", /*notify=*/true,
                  /*from_watch=*/true);
          }
          MutexLock lock(mu_);
          if (!rv.empty()) caches_[kind].resource_version = rv;
          return true;
        },
        handle);
    if (stopping_) return;
    if (expired || watched.code() == StatusCode::kOutOfRange) {
      watched = Relist(kind, /*notify=*/true);
    }
    if (watched.ok()) {
      failures = 0;
      continue;
    }
    // The server is away or refuses: said once per cause, retried with
    // backoff up to 30 s.
    if (watched.message() != said) {
      options_.log->Warning("trainyard: watching {}: {}; retrying", kind, watched.message());
      said = watched.message();
    }
    Duration backoff = std::chrono::milliseconds(200) * (1 << std::min(failures++, 7));
    Pause(std::min<Duration>(backoff, std::chrono::seconds(30)));
  }
}

void KubeStore::Index(const std::string& kind, const api::Json& object, bool add) {
  OwnedKey key{kind, NamespaceOf(object), NameOf(object)};
  for (const api::Json& ref : api::ArrayRefAt(object, {"metadata", "ownerReferences"})) {
    std::string uid = api::StringAt(ref, "uid");
    if (uid.empty()) continue;
    if (add) {
      owned_[uid].insert(key);
    } else if (auto it = owned_.find(uid); it != owned_.end()) {
      it->second.erase(key);
      if (it->second.empty()) owned_.erase(it);
    }
  }
}

void KubeStore::Apply(const std::string& kind, api::Json object, bool deleted, bool notify,
                      bool from_watch) {
  if (!notify) {
    (void)TakeIn(kind, std::move(object), deleted, from_watch);
    return;
  }
  // Held from the cache's change to its delivery: an own write (on the
  // writing thread) and the informer's event for the same object reach
  // watchers in the order the cache took them, never an older one last.
  MutexLock delivering(watch_mu_);
  std::optional<store::WatchEvent> event = TakeIn(kind, std::move(object), deleted, from_watch);
  if (!event) return;
  for (const auto& [id, callback] : watchers_) callback(*event);
  history_.push_back(std::move(*event));
  if (history_.size() > options_.watch_history) {
    history_from_ = history_.front().resource_version;
    history_.pop_front();
  }
}

std::optional<store::WatchEvent> KubeStore::TakeIn(const std::string& kind, api::Json object,
                                                   bool deleted, bool from_watch) {
  Name name{NamespaceOf(object), NameOf(object)};
  store::WatchEvent event;
  MutexLock lock(mu_);
  Cache& cache = caches_[kind];
  // As an informer: a write's answer no newer than what the kind's watch
  // has delivered is in the cache already, or was superseded (deleted,
  // most of all): it never takes the cache back.
  if (!from_watch && !Newer(object, cache.resource_version)) return std::nullopt;
  auto it = cache.objects.find(name);
  if (it != cache.objects.end()) {
    if (!NotOlder(object, it->second)) return std::nullopt;  // a stale event
    if (!deleted && it->second == object) return std::nullopt;
    Index(kind, it->second, /*add=*/false);
  } else if (deleted) {
    return std::nullopt;  // gone already
  }
  event.type = deleted                     ? store::EventType::kDeleted
               : it == cache.objects.end() ? store::EventType::kAdded
                                           : store::EventType::kModified;
  event.resource_version = ++changes_;
  if (deleted) {
    cache.objects.erase(it);
  } else {
    Index(kind, object, /*add=*/true);
    cache.objects[name] = object;
  }
  event.object = std::move(object);
  return event;
}

Result<api::Json> KubeStore::Get(const store::ObjectKey& key) const {
  if (!Watched(key.kind)) {
    ASSIGN_OR_RETURN(api::Json object, options_.client->Get(key.kind, key.namespace_, key.name));
    return object;
  }
  MutexLock lock(mu_);
  auto cache = caches_.find(key.kind);
  if (cache != caches_.end()) {
    auto it = cache->second.objects.find({key.namespace_, key.name});
    if (it != cache->second.objects.end()) return it->second;
  }
  return NotFoundError(fmt::format("{} not found", key.ToString()));
}

Result<store::ObjectReader::ListResult> KubeStore::List(const std::string& kind,
                                                        const std::string& namespace_) const {
  ListResult out;
  RETURN_IF_ERROR(Scan(kind, namespace_, [&](const api::Json& o) { out.items.push_back(o); }));
  out.resource_version = CurrentResourceVersion();
  return out;
}

Status KubeStore::Scan(const std::string& kind, const std::string& namespace_,
                       const std::function<void(const api::Json&)>& visit) const {
  if (!Watched(kind)) {
    ASSIGN_OR_RETURN(api::Json list, options_.client->List(kind, namespace_));
    for (api::Json& item : ItemsOf(list)) {
      if (!item.is_object()) continue;
      Complete(kind, item);
      visit(item);
    }
    return OkStatus();
  }
  MutexLock lock(mu_);
  auto cache = caches_.find(kind);
  if (cache == caches_.end()) return OkStatus();
  for (const auto& [name, object] : cache->second.objects) {
    if (namespace_.empty() || name.first == namespace_) visit(object);
  }
  return OkStatus();
}

Status KubeStore::ScanOwnedBy(const std::string& kind, const std::string& owner_uid,
                              const std::function<void(const api::Json&)>& visit) const {
  if (!Watched(kind)) {
    // Unwatched kinds are read whole: only what this uid owns is shown.
    return Scan(kind, "", [&](const api::Json& object) {
      for (const api::Json& ref : api::ArrayRefAt(object, {"metadata", "ownerReferences"})) {
        if (api::StringAt(ref, "uid") == owner_uid) return visit(object);
      }
    });
  }
  MutexLock lock(mu_);
  auto owned = owned_.find(owner_uid);
  auto cache = caches_.find(kind);
  if (owned == owned_.end() || cache == caches_.end()) return OkStatus();
  for (const auto& [owned_kind, ns, name] : owned->second) {
    if (owned_kind != kind) continue;
    auto it = cache->second.objects.find({ns, name});
    if (it != cache->second.objects.end()) visit(it->second);
  }
  return OkStatus();
}

int64_t KubeStore::CurrentResourceVersion() const {
  MutexLock lock(mu_);
  return changes_;
}

Result<api::Json> KubeStore::Written(const std::string& kind, Result<api::Json> written,
                                     const api::Json& sent) {
  if (written.status().code() == StatusCode::kAborted && Watched(kind)) {
    // A conflict: the cache was behind. The object is read again now, so
    // that the caller's retry starts from what the server holds rather
    // than waiting for the watch to catch up.
    Result<api::Json> fresh = options_.client->Get(kind, NamespaceOf(sent), NameOf(sent));
    if (fresh.ok()) {
      Complete(kind, *fresh);
      Apply(kind, std::move(*fresh), /*deleted=*/false, /*notify=*/true, /*from_watch=*/false);
    }
  }
  RETURN_IF_ERROR(written.status());
  Complete(kind, *written);
  if (Watched(kind))
    Apply(kind, *written, /*deleted=*/false, /*notify=*/true, /*from_watch=*/false);
  return written;
}

Result<api::Json> KubeStore::Create(api::Json object) {
  std::string kind = api::StoreKindOf(object);
  api::Json status = api::ValueAt(object, "status");
  ASSIGN_OR_RETURN(api::Json created, Written(kind, options_.client->Create(object), object));
  // kube-apiserver keeps no status sent with a create where the kind has a
  // status subresource: what was meant is written through it, as a
  // controller writes a status it sets (a Suggestion's, a Trial's, ...).
  const api::ResourceType* type = api::ResourceTypeOfKind(kind);
  bool meant = status.is_object() && !status.empty();
  if (type == nullptr || !type->has_status || !meant || api::ValueAt(created, "status") == status) {
    return created;
  }
  created["status"] = std::move(status);
  return Written(kind, options_.client->UpdateStatus(created), created);
}

Result<api::Json> KubeStore::Update(api::Json object) {
  std::string kind = api::StoreKindOf(object);
  return Written(kind, options_.client->Update(object), object);
}

Result<api::Json> KubeStore::UpdateStatus(api::Json object) {
  std::string kind = api::StoreKindOf(object);
  return Written(kind, options_.client->UpdateStatus(object), object);
}

Result<api::Json> KubeStore::Delete(const store::ObjectKey& key) {
  ASSIGN_OR_RETURN(api::Json answer, options_.client->Delete(key.kind, key.namespace_, key.name));
  if (!Watched(key.kind)) return answer;
  // An object that waits on finalizers or a grace period stays, marked;
  // one the server removed at once is gone from the cache too.
  // kube-apiserver answers a delete it carried out at once (an unbound or
  // finished pod: grace period 0, no finalizers) with the object as it
  // was, marked: it is gone, not waiting.
  bool marked = !api::StringAt(answer, {"metadata", "deletionTimestamp"}).empty();
  bool at_once = api::IntAt(answer, {"metadata", "deletionGracePeriodSeconds"}) == 0 &&
                 api::ArrayRefAt(answer, {"metadata", "finalizers"}).empty();
  bool remains = api::StoreKindOf(answer) == key.kind && marked && !at_once;
  if (remains) {
    Apply(key.kind, answer, /*deleted=*/false, /*notify=*/true, /*from_watch=*/false);
    return answer;
  }
  std::optional<api::Json> held;
  {
    MutexLock lock(mu_);
    Cache& cache = caches_[key.kind];
    if (auto it = cache.objects.find({key.namespace_, key.name}); it != cache.objects.end()) {
      held = it->second;
    }
  }
  // Gone: the cache's copy goes, whatever the watch has said so far.
  if (held)
    Apply(key.kind, std::move(*held), /*deleted=*/true, /*notify=*/true, /*from_watch=*/true);
  return answer;
}

Result<store::WatchId> KubeStore::Watch(int64_t since, store::WatchCallback callback) {
  MutexLock lock(watch_mu_);
  if (since != 0) {
    if (since < history_from_) {
      return OutOfRangeError(
          fmt::format("resourceVersion {} is older than the {} changes kept (from {}): list again",
                      since, history_.size(), history_from_));
    }
    for (const store::WatchEvent& event : history_) {
      if (event.resource_version > since) callback(event);
    }
  }
  store::WatchId id = next_watch_++;
  watchers_[id] = std::move(callback);
  return id;
}

void KubeStore::StopWatch(store::WatchId id) {
  MutexLock lock(watch_mu_);
  watchers_.erase(id);
}

}  // namespace trainyard::kube
