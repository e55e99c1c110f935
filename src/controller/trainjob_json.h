// JSON edits the TrainJob builder makes on a JobSet spec, as Kubernetes'
// strategic merge does: lists of named items (containers, env, volumes,
// volumeMounts) merge by name, maps key by key, anything else is replaced.
#pragma once

#include <string>
#include <string_view>

#include "api/json.h"

namespace trainyard::controller::trainjob {

using api::Json;

// The item of `list` whose "name" is `name`; nullptr if none (or `list`
// is no array).
Json* FindNamed(Json& list, std::string_view name);
// Replaces the item of `list` named as `item`, or appends it.
void UpsertNamed(Json& list, Json item);
// Merges named lists by name (recursively for containers), maps key by
// key, and replaces everything else.
void StrategicMerge(Json& into, const Json& patch);

// {"name": name, "value": value}
Json EnvValue(std::string name, std::string value);
// {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}
Json EnvField(std::string name, std::string field_path);
// Adds {"containerPort": port, "protocol": "TCP"} unless the port is listed.
void UpsertPort(Json& container, int port);

// A replicated job's pod spec and its container named `name` (nullptr if none).
Json& PodSpecOf(Json& replicated_job);
Json* ContainerOf(Json& replicated_job, std::string_view name);
// The value of the label trainer.kubeflow.org/trainjob-ancestor-step.
std::string AncestorStepOf(const Json& replicated_job);

}  // namespace trainyard::controller::trainjob
