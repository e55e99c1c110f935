// The kinds the dashboard knows: where they live, how to read their state,
// how to find their pods and how to suspend them.
export const JOB_KINDS = [
  { kind: "PyTorchJob", group: "kubeflow.org", version: "v1", plural: "pytorchjobs", replicaKey: "pytorchReplicaSpecs" },
  { kind: "TFJob", group: "kubeflow.org", version: "v1", plural: "tfjobs", replicaKey: "tfReplicaSpecs" },
  { kind: "XGBoostJob", group: "kubeflow.org", version: "v1", plural: "xgboostjobs", replicaKey: "xgbReplicaSpecs" },
  { kind: "MPIJob", group: "kubeflow.org", version: "v1", plural: "mpijobs", replicaKey: "mpiReplicaSpecs" },
  { kind: "PaddleJob", group: "kubeflow.org", version: "v1", plural: "paddlejobs", replicaKey: "paddleReplicaSpecs" },
  { kind: "JAXJob", group: "kubeflow.org", version: "v1", plural: "jaxjobs", replicaKey: "jaxReplicaSpecs" },
  { kind: "TrainJob", group: "trainer.kubeflow.org", version: "v1alpha1", plural: "trainjobs" },
  { kind: "Job", group: "batch", version: "v1", plural: "jobs" },
  { kind: "JobSet", group: "jobset.x-k8s.io", version: "v1alpha2", plural: "jobsets" },
];
export const EXPERIMENT = { kind: "Experiment", group: "kubeflow.org", version: "v1beta1", plural: "experiments" };
export const TRIAL = { kind: "Trial", group: "kubeflow.org", version: "v1beta1", plural: "trials" };
export const TRAINJOB = JOB_KINDS.find((k) => k.kind === "TrainJob");
export const OPTIMIZATION_JOB = { kind: "OptimizationJob", group: "trainer.kubeflow.org", version: "v1alpha1", plural: "optimizationjobs" };

// A job's progress (KEP-2779's status.trainerStatus: what its trainer
// reports, or what trainyard read of the counts it printed), or null.
export function progressOf(obj) {
  const t = obj.status?.trainerStatus;
  if (!t || t.progressPercentage === undefined) return null;
  return { percent: t.progressPercentage, eta: t.estimatedRemainingSeconds };
}

const ALL = [...JOB_KINDS, EXPERIMENT, TRIAL, OPTIMIZATION_JOB];
// A kind as a route may name it: "PyTorchJob", or as kubectl takes it,
// "pytorchjob" or "pytorchjobs".
export const kindInfo = (kind) => {
  const k = String(kind || "").toLowerCase();
  return ALL.find((x) => x.kind.toLowerCase() === k || x.plural === k);
};

export function collection(info, ns) {
  const base = info.group ? `/apis/${info.group}/${info.version}` : `/api/${info.version}`;
  return ns ? `${base}/namespaces/${encodeURIComponent(ns)}/${info.plural}` : `${base}/${info.plural}`;
}
export const objectPath = (info, ns, name) => `${collection(info, ns)}/${encodeURIComponent(name)}`;

export const isV1 = (info) => info.group === "kubeflow.org" && info.version === "v1";

const trueConds = (obj) => (obj.status?.conditions || []).filter((c) => c.status === "True");

// One word for an object's state, from its conditions.
export function stateOf(obj) {
  const conds = obj.status?.conditions || [];
  const on = (t) => conds.some((c) => c.type === t && c.status === "True");
  if (on("Succeeded") || on("Complete") || on("Completed")) return "Succeeded";
  if (on("EarlyStopped") || obj.metadata?.annotations?.["trainyard.dev/early-stopped"]) return "EarlyStopped";
  if (on("Failed")) return "Failed";
  if (on("MetricsUnavailable")) return "MetricsUnavailable";
  if (on("Suspended") || isSuspended(obj)) return "Suspended";
  if (on("Restarting")) return "Restarting";
  if (on("Running")) return "Running";
  // An OptimizationJob has no Running condition: created and not ended is running.
  if (obj.kind === "OptimizationJob" && on("Created")) return "Running";
  if (obj.kind === "Job" && (obj.status?.active || 0) > 0) return "Running";
  if (on("Created")) return "Created";
  const last = trueConds(obj).at(-1);
  return last ? last.type : "Pending";
}
export const isFinished = (state) => ["Succeeded", "Failed", "EarlyStopped", "MetricsUnavailable"].includes(state);

export function isSuspended(obj) {
  const info = kindInfo(obj.kind);
  if (!info) return false;
  return isV1(info) ? !!obj.spec?.runPolicy?.suspend : !!obj.spec?.suspend;
}
export function suspendPatch(info, suspend) {
  return isV1(info) ? { spec: { runPolicy: { suspend } } } : { spec: { suspend } };
}
export const canSuspend = (info) => JOB_KINDS.includes(info);

// [ready, total] replicas when the kind says, else null.
export function replicasOf(obj) {
  const info = kindInfo(obj.kind);
  if (!info) return null;
  if (info.replicaKey) {
    const specs = obj.spec?.[info.replicaKey] || {};
    let total = 0;
    for (const s of Object.values(specs)) total += s.replicas ?? 1;
    let ready = 0;
    for (const s of Object.values(obj.status?.replicaStatuses || {})) ready += (s.active || 0) + (s.succeeded || 0);
    return [ready, total];
  }
  if (obj.kind === "Job") {
    const total = obj.spec?.completions ?? obj.spec?.parallelism ?? 1;
    return [(obj.status?.active || 0) + (obj.status?.succeeded || 0), total];
  }
  if (obj.kind === "TrainJob") {
    const n = obj.spec?.trainer?.numNodes;
    return n ? [null, n] : null;
  }
  if (obj.kind === "JobSet") {
    let total = 0;
    for (const r of obj.spec?.replicatedJobs || []) total += (r.replicas ?? 1) * (r.template?.spec?.parallelism ?? 1);
    return [null, total];
  }
  return null;
}

// The label selector of the pods of a job.
export function podSelector(obj) {
  const name = obj.metadata.name;
  switch (obj.kind) {
    case "TrainJob": return `jobset.sigs.k8s.io/jobset-name=${name}`;
    case "JobSet": return `jobset.sigs.k8s.io/jobset-name=${name}`;
    case "Job": return `batch.kubernetes.io/job-name=${name}`;
    case "Trial": return `katib.kubeflow.org/trial=${name}`;
    case "Experiment": return `katib.kubeflow.org/experiment=${name}`;
    default: return `training.kubeflow.org/job-name=${name}`;
  }
}

export const queueOf = (obj) => obj.metadata?.labels?.["kueue.x-k8s.io/queue-name"] || "";
export const ownerKind = (obj) => (obj.metadata?.ownerReferences || []).find((o) => o.controller)?.kind || "";

export function startTimeOf(obj) { return obj.status?.startTime || obj.metadata?.creationTimestamp; }
export function endTimeOf(obj) {
  if (obj.status?.completionTime) return obj.status.completionTime;
  const c = (obj.status?.conditions || []).find((c) => c.status === "True" && ["Succeeded", "Failed", "Complete", "EarlyStopped"].includes(c.type));
  return c?.lastTransitionTime;
}
