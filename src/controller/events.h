// Kubernetes Events (core/v1) for what the job controller does: the pods it
// creates and deletes, and each condition a job reaches, as upstream's
// operator records them and `kubectl describe` lists them. A job's events
// are deleted with it.
#pragma once

#include <string>

#include "api/meta.h"
#include "common/clock.h"
#include "common/field_path.h"
#include "store/object_store.h"

namespace trainyard::controller {

struct InvolvedObject {
  std::string api_version;  // "kubeflow.org/v1"
  std::string kind;         // "PyTorchJob"
  const api::ObjectMeta* meta = nullptr;
};

// `type` is "Normal" or "Warning"; `reason` a CamelCase word
// ("SuccessfulCreatePod"); `message` a sentence for people.
Status RecordEvent(store::ObjectStore& store, const Clock& clock, const InvolvedObject& object,
                   const std::string& type, const std::string& reason, const std::string& message);

// On a cluster, where no webhook of ours may have checked it: `object`
// is invalid, so nothing is made for it. A Warning <Kind>FailedValidation
// with every error, as upstream v1.7's.
Status RecordFailedValidation(store::ObjectStore& store, const Clock& clock,
                              const InvolvedObject& object, const FieldErrors& errors);

// Records events about one object, as client-go's EventRecorder does for
// the object it is given.
class EventRecorder {
 public:
  // `store`, `clock` and the object's metadata outlive the recorder.
  EventRecorder(store::ObjectStore& store, const Clock& clock, InvolvedObject object)
      : store_(store), clock_(clock), object_(std::move(object)) {}
  Status Event(const std::string& type, const std::string& reason,
               const std::string& message) const {
    return RecordEvent(store_, clock_, object_, type, reason, message);
  }

 private:
  store::ObjectStore& store_;
  const Clock& clock_;
  InvolvedObject object_;
};

// Deletes the events about the object `key` names.
Status DeleteEventsOf(store::ObjectStore& store, const store::ObjectKey& key);

}  // namespace trainyard::controller
