#include "controller/jobset_children.h"

#include <fmt/format.h>

#include "api/batch_job.h"
#include "api/kinds.h"
#include "api/well_known.h"

namespace trainyard::controller {
namespace {

using api::Json;

Json OwnerReferenceTo(const api::ObjectMeta& meta) {
  return Json{{"apiVersion", std::string(api::kJobSetGroupVersion)},
              {"kind", "JobSet"},
              {"name", meta.name},
              {"uid", meta.uid},
              {"controller", true},
              {"blockOwnerDeletion", true}};
}

// The volumes of the claims a pod's containers mount, as JobSet adds them.
void MountPolicyClaims(const api::ObjectMeta& meta, const api::JobSetSpec& spec,
                       api::PodSpec& pod) {
  for (const api::VolumeClaimPolicy& policy : spec.volume_claim_policies) {
    for (const api::ClaimTemplate& claim : policy.templates) {
      const std::string& name = claim.metadata.name;
      bool mounted = false;
      for (const auto* list : {&pod.containers, &pod.init_containers}) {
        for (const api::Container& c : *list) {
          for (const api::VolumeMount& m : c.volume_mounts) mounted = mounted || m.name == name;
        }
      }
      if (!mounted) continue;
      api::Volume volume;
      volume.name = name;
      volume.persistent_volume_claim =
          api::PersistentVolumeClaimVolumeSource{.claim_name = name + "-" + meta.name};
      pod.volumes.push_back(std::move(volume));
    }
  }
}

}  // namespace

std::string ChildJobName(const std::string& jobset, const std::string& replicated_job, int index) {
  return fmt::format("{}-{}-{}", jobset, replicated_job, index);
}

std::string SubdomainOf(const api::ObjectMeta& meta, const api::JobSetSpec& spec) {
  if (spec.network && !spec.network->enable_dns_hostnames.value_or(true)) return "";
  return spec.network && !spec.network->subdomain.empty() ? spec.network->subdomain : meta.name;
}

Json ChildJob(const api::ObjectMeta& meta, const api::JobSetSpec& spec,
              const api::ReplicatedJob& rjob, int index, int attempt) {
  api::BatchJobSpec job = rjob.template_.spec;
  std::map<std::string, std::string> marks = {
      {std::string(api::kJobSetNameLabel), meta.name},
      {std::string(api::kReplicatedJobNameLabel), rjob.name},
      {std::string(api::kReplicatedJobReplicasLabel), std::to_string(rjob.replicas.value_or(1))},
      {std::string(api::kJobIndexLabel), std::to_string(index)},
      {std::string(api::kJobSetRestartAttemptLabel), std::to_string(attempt)},
      {std::string(api::kJobSetGroupNameLabel),
       rjob.group_name.empty() ? "default" : rjob.group_name}};
  // The coordinator every pod is told of: one pod's stable DNS name.
  if (spec.coordinator) {
    marks[std::string(api::kJobSetCoordinatorLabel)] =
        fmt::format("{}-{}-{}-{}.{}", meta.name, spec.coordinator->replicated_job,
                    spec.coordinator->job_index.value_or(0),
                    spec.coordinator->pod_index.value_or(0), SubdomainOf(meta, spec));
  }
  api::ObjectMeta& pod_meta = job.template_.metadata;
  for (const auto& [key, value] : marks) {
    pod_meta.labels[key] = value;
    pod_meta.annotations[key] = value;
  }
  std::string subdomain = SubdomainOf(meta, spec);
  if (!subdomain.empty()) job.template_.spec.extra["subdomain"] = subdomain;
  MountPolicyClaims(meta, spec, job.template_.spec);
  job.suspend = spec.suspend.value_or(false);
  Json labels = api::Encode(rjob.template_.metadata.labels);
  Json annotations = api::Encode(rjob.template_.metadata.annotations);
  for (const auto& [key, value] : marks) {
    labels[key] = value;
    annotations[key] = value;
  }
  return Json{{"apiVersion", std::string(api::kBatchGroupVersion)},
              {"kind", "Job"},
              {"metadata",
               {{"name", ChildJobName(meta.name, rjob.name, index)},
                {"namespace", meta.namespace_},
                {"labels", std::move(labels)},
                {"annotations", std::move(annotations)},
                {"ownerReferences", Json::array({OwnerReferenceTo(meta)})}}},
              {"spec", api::Encode(job)}};
}

Json HeadlessService(const api::ObjectMeta& meta, const api::JobSetSpec& spec) {
  bool publish = spec.network && spec.network->publish_not_ready_addresses.value_or(false);
  return Json{{"apiVersion", "v1"},
              {"kind", "Service"},
              {"metadata",
               {{"name", SubdomainOf(meta, spec)},
                {"namespace", meta.namespace_},
                {"ownerReferences", Json::array({OwnerReferenceTo(meta)})}}},
              {"spec",
               {{"clusterIP", "None"},
                {"selector", {{std::string(api::kJobSetNameLabel), meta.name}}},
                {"publishNotReadyAddresses", publish}}}};
}

std::vector<Json> PolicyClaims(const api::ObjectMeta& meta, const api::JobSetSpec& spec) {
  std::vector<Json> claims;
  for (const api::VolumeClaimPolicy& policy : spec.volume_claim_policies) {
    bool retain = api::StringAt(policy.retention_policy, "whenDeleted") == "Retain";
    for (const api::ClaimTemplate& t : policy.templates) {
      Json labels = api::Encode(t.metadata.labels);
      labels[std::string(api::kJobSetNameLabel)] = meta.name;
      Json claim_meta = {{"name", t.metadata.name + "-" + meta.name},
                         {"namespace", meta.namespace_},
                         {"labels", std::move(labels)}};
      if (!t.metadata.annotations.empty()) {
        claim_meta["annotations"] = api::Encode(t.metadata.annotations);
      }
      if (!retain) claim_meta["ownerReferences"] = Json::array({OwnerReferenceTo(meta)});
      claims.push_back(Json{{"apiVersion", "v1"},
                            {"kind", "PersistentVolumeClaim"},
                            {"metadata", std::move(claim_meta)},
                            {"spec", t.spec}});
    }
  }
  return claims;
}

}  // namespace trainyard::controller
