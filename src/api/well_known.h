// The well-known labels, annotations and reasons, spelled once. Upstream's
// (the training operator's, batch/v1's, Katib's, Kueue's), which clients
// and other controllers select on, and trainyard's own (trainyard.dev/),
// which carry state between its controllers and its node agent. (PBT's
// trial labels live with the algorithm, in tune/sampler.h.)
#pragma once

#include <string_view>

namespace trainyard::api {

// The training operator's labels on each replica pod (and its service).
inline constexpr std::string_view kLabelJobName = "training.kubeflow.org/job-name";
inline constexpr std::string_view kLabelOperatorName = "training.kubeflow.org/operator-name";
inline constexpr std::string_view kLabelReplicaType = "training.kubeflow.org/replica-type";
inline constexpr std::string_view kLabelReplicaIndex = "training.kubeflow.org/replica-index";
inline constexpr std::string_view kLabelJobRole = "training.kubeflow.org/job-role";

// batch/v1's labels and annotation on a Job's pods.
inline constexpr std::string_view kBatchJobNameLabel = "batch.kubernetes.io/job-name";
inline constexpr std::string_view kBatchControllerUidLabel = "batch.kubernetes.io/controller-uid";
inline constexpr std::string_view kBatchCompletionIndex =
    "batch.kubernetes.io/job-completion-index";

// Labels every Katib trial and its job carry.
inline constexpr std::string_view kExperimentLabel = "katib.kubeflow.org/experiment";
inline constexpr std::string_view kTrialLabel = "katib.kubeflow.org/trial";

// The label a job names its Kueue LocalQueue with.
inline constexpr std::string_view kQueueNameLabel = "kueue.x-k8s.io/queue-name";

// trainyard's own annotations: the GPUs a pod was given (device indices,
// "0,1"); the ports a job's replicas were given; how often the controller
// re-created a replica's pod; the order trials were created in.
inline constexpr std::string_view kGpusAnnotation = "trainyard.dev/gpus";
inline constexpr std::string_view kPortsAnnotation = "trainyard.dev/ports";
inline constexpr std::string_view kRecreationsAnnotation = "trainyard.dev/recreations";
inline constexpr std::string_view kTrialIndexAnnotation = "trainyard.dev/trial-index";
// The job or trial a pod's replicas log to and write their output for
// (api::FormatTrackedOwner), put on the pod by the controller that makes it.
inline constexpr std::string_view kTrackedOwnerAnnotation = "trainyard.dev/tracked-owner";
// Which collector reads a job's own metrics (api/job_metrics.h,
// docs/tracking.md): "StdOut", the default, and the others.
inline constexpr std::string_view kJobMetricsAnnotation = "trainyard.dev/metrics";
// Where a pod's replicas find their files when trainyard runs containers in
// their images (docs/images.md): "host" asks for this machine's files, as
// before images (a command runs the host's programs); "image", the default,
// for the image's root. Set on a pod template, as the user's opt-in.
inline constexpr std::string_view kRootAnnotation = "trainyard.dev/root";
// On a TrainJob's trainer pods (one machine): they are given the endpoint
// and token to report the TrainJob's progress with (KEP-2779).
inline constexpr std::string_view kTrainerStepAnnotation = "trainyard.dev/trainer-step";
inline constexpr std::string_view kHostRoot = "host";
inline constexpr std::string_view kImageRoot = "image";

// Why a container waits to be restarted after a back-off (the kubelet's
// word), and the PodScheduled=False reasons for "no room now" and "more
// than the whole machine".
inline constexpr std::string_view kRestartWaitReason = "CrashLoopBackOff";
// Why a container waits for a ConfigMap, Secret or claim it needs.
inline constexpr std::string_view kConfigWaitReason = "CreateContainerConfigError";
inline constexpr std::string_view kUnschedulableReason = "Unschedulable";
inline constexpr std::string_view kExceedsCapacityReason = "ExceedsCapacity";

// Kubeflow Trainer v2: the label that says which step of a TrainJob a
// runtime's replicated job is, its values, and the containers each step's
// pods must have; the runtime label that marks a deprecated runtime.
inline constexpr std::string_view kAncestorStepLabel =
    "trainer.kubeflow.org/trainjob-ancestor-step";
inline constexpr std::string_view kAncestorTrainer = "trainer";
inline constexpr std::string_view kAncestorDatasetInitializer = "dataset-initializer";
inline constexpr std::string_view kAncestorModelInitializer = "model-initializer";
inline constexpr std::string_view kNodeContainer = "node";
inline constexpr std::string_view kLauncherJob = "launcher";
inline constexpr std::string_view kRuntimeSupportLabel = "trainer.kubeflow.org/support";
inline constexpr std::string_view kTrainJobController = "trainer.kubeflow.org/trainjob-controller";
inline constexpr std::string_view kMultiKueueController = "kueue.x-k8s.io/multikueue";

// JobSet's labels on its Jobs and their pods.
inline constexpr std::string_view kJobSetNameLabel = "jobset.sigs.k8s.io/jobset-name";
inline constexpr std::string_view kReplicatedJobNameLabel = "jobset.sigs.k8s.io/replicatedjob-name";
inline constexpr std::string_view kReplicatedJobReplicasLabel =
    "jobset.sigs.k8s.io/replicatedjob-replicas";
inline constexpr std::string_view kJobIndexLabel = "jobset.sigs.k8s.io/job-index";
inline constexpr std::string_view kJobSetRestartAttemptLabel = "jobset.sigs.k8s.io/restart-attempt";
inline constexpr std::string_view kJobSetGroupNameLabel = "jobset.sigs.k8s.io/group-name";
// The coordinator's stable DNS name, told to every pod of the JobSet.
inline constexpr std::string_view kJobSetCoordinatorLabel = "jobset.sigs.k8s.io/coordinator";
// JobSet's spec.managedBy for its own controller.
inline constexpr std::string_view kJobSetController = "jobset.sigs.k8s.io/jobset-controller";

}  // namespace trainyard::api
