// What a JobSet makes, as upstream's JobSet controller makes it: its
// Jobs, the headless Service its pods' subdomain names, and the claims of
// its volumeClaimPolicies. Pure: documents to create.
#pragma once

#include <string>
#include <vector>

#include "api/jobset.h"

namespace trainyard::controller {

// `<jobset>-<replicatedJob>-<index>`.
std::string ChildJobName(const std::string& jobset, const std::string& replicated_job, int index);

// The subdomain its pods share: network.subdomain, else the JobSet's name;
// empty when enableDNSHostnames is false.
std::string SubdomainOf(const api::ObjectMeta& meta, const api::JobSetSpec& spec);

// Job `index` of `rjob` in restart attempt `attempt`: the template's Job,
// Indexed, with JobSet's labels and annotations on it and its pods, the
// pods in the subdomain, the claims they mount, suspended as the JobSet is.
api::Json ChildJob(const api::ObjectMeta& meta, const api::JobSetSpec& spec,
                   const api::ReplicatedJob& rjob, int index, int attempt);

// The headless Service that gives the subdomain its DNS names on a cluster.
api::Json HeadlessService(const api::ObjectMeta& meta, const api::JobSetSpec& spec);

// The claims volumeClaimPolicies make: `<template name>-<jobset>`, owned by
// the JobSet unless their retention policy keeps them when it is deleted.
std::vector<api::Json> PolicyClaims(const api::ObjectMeta& meta, const api::JobSetSpec& spec);

}  // namespace trainyard::controller
