// The steps every reconciler shares, written once: load the object and
// decode it with its defaults, read the pods it controls by owner uid, and
// write its status only when it changed (so a reconcile with nothing new
// writes nothing, which is what makes reconcilers converge).
#pragma once

#include <fmt/format.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "api/defaults.h"
#include "api/object.h"
#include "api/pod_object.h"
#include "store/object_store.h"

namespace trainyard::controller {

template <class T>
struct Loaded {
  api::Json stored;  // as stored, for the status write
  T object;          // decoded, with defaults
};

// The object at `key` as a T, defaulted; nullopt when it is gone.
// INVALID_ARGUMENT when what is stored is not a T or does not decode.
template <class T>
Result<std::optional<Loaded<T>>> LoadObject(const store::ObjectReader& store,
                                            const store::ObjectKey& key) {
  Result<api::Json> stored = store.Get(key);
  if (stored.status().code() == StatusCode::kNotFound) return std::optional<Loaded<T>>();
  if (!stored.ok()) return stored.status();
  api::DecodeResult decoded = api::DecodeObject(*stored);
  T* object = decoded.object ? std::get_if<T>(&*decoded.object) : nullptr;
  if (object == nullptr || !decoded.errors.empty()) {
    return InvalidArgumentError(fmt::format("{} cannot be decoded", key.ToString()));
  }
  api::SetDefaults(*decoded.object);  // by the kind's hooks, whatever T is
  return std::optional<Loaded<T>>(Loaded<T>{*std::move(stored), std::move(*object)});
}

// The pods whose controller owner reference is `uid`, decoded, read from
// the store's owner index: the namespace's other pods cost nothing.
Result<std::vector<api::Pod>> ControlledPods(const store::ObjectReader& store,
                                             const std::string& uid);

// Writes `status` into `stored` through the status subresource when it
// differs from the stored one; `before` runs first when it does (events
// for the conditions that changed).
Status WriteStatusIfChanged(store::ObjectStore& store, api::Json& stored, api::Json status,
                            const std::function<Status()>& before = nullptr);

}  // namespace trainyard::controller
