// How a job kind is laid out, for the code that treats every job kind
// alike (tracking, metrics, a run's progress, trials): it asks the kind's
// shape, never its name. Each job kind's shape is made in job_shapes.cc and
// set on its ResourceType by the registry.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "api/json.h"

namespace trainyard::api {

struct JobShape {
  // The label on its pods that names the job.
  std::string pod_job_label;
  // The label on its pods that names their role in it; empty for a kind
  // whose pods are all alike (a batch Job's).
  std::string pod_role_label;
  // The kinds between the job and its pods, outermost first: a TrainJob's
  // pods are its JobSet's Jobs'; empty when the job owns its pods.
  std::vector<std::string> pod_owner_kinds;
  // The status list of the jobs it runs, each with an `active` count
  // ("replicatedJobsStatus"); empty for a kind that owns its pods.
  std::string child_jobs_status;
  // Where `suspend` is: {"spec", "suspend"} or {"spec", "runPolicy", "suspend"}.
  std::vector<std::string> suspend_path;
  // Where a trial's variables go for a kind whose pod templates come from
  // elsewhere (a TrainJob's trainer env, {"spec", "trainer", "env"});
  // empty when they go into `pod_templates`.
  std::vector<std::string> trial_env_path;
  // Every pod template in the job, to mark a trial's pods.
  std::function<std::vector<Json*>(Json& job)> pod_templates;
  // The container a job's parameters are read from (its master's or first
  // role's first container; a TrainJob's trainer); nullptr when none.
  std::function<const Json*(const Json& job)> main_container;
  // The container of `pod` (one of the job's) its own metrics are read
  // from, as Katib's primary pod and container; "" for every other pod.
  std::function<std::string(const Json& job, const Json& pod)> metrics_container;
  // As a Katib trial's job, Katib's defaults: the condition type that says
  // it succeeded ("" for a kind Katib runs no trial of, a JobSet), and its
  // primary pods' labels.
  std::string trial_success_condition;
  std::map<std::string, std::string> trial_primary_pod_labels;
  // The container a trial's primary pods run it in, where the kind fixes
  // it (a TrainJob's trainer runs in its runtime's `node`); "": any.
  std::string fixed_primary_container;
};

struct KindInfo;

// The shapes of the job kinds.
JobShape TrainingJobShape(const KindInfo& info);  // kubeflow.org/v1's
JobShape BatchJobShape();
JobShape JobSetShape();
JobShape TrainJobShape();

}  // namespace trainyard::api
