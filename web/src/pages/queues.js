// Queues and nodes: the nodes' capacity, Kueue's ClusterQueues (quota,
// usage, pending and admitted workloads) and LocalQueues. Live lists.
import { useMemo } from "preact/hooks";
import { html } from "../lib/util.js";
import { useWatchedList } from "../lib/hooks.js";

// A Kubernetes quantity ("500m", "4Gi", "2") as a number.
export function quantity(q) {
  if (q === undefined || q === null) return NaN;
  const m = String(q).match(/^([+-]?[\d.]+(?:e[+-]?\d+)?)([a-zA-Z]*)$/);
  if (!m) return NaN;
  const mult = { "": 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4, Pi: 1024 ** 5 }[m[2]];
  return mult === undefined ? NaN : Number(m[1]) * mult;
}
function showQuantity(name, q) {
  const v = quantity(q);
  if (!isFinite(v)) return q ?? "";
  if (name === "memory" || name.endsWith("storage")) return v >= 1024 ** 3 ? `${(v / 1024 ** 3).toFixed(1)}Gi` : `${Math.round(v / 1024 ** 2)}Mi`;
  return String(Number(v.toPrecision(4)));
}

function Bar({ used, total }) {
  const f = total > 0 ? used / total : 0;
  return html`<div class=${`bar${f > 1 ? " over" : ""}`} title=${`${Math.round(f * 100)}%`}><span style=${`width:${Math.min(100, f * 100)}%`}></span></div>`;
}

const sortByName = (m) => [...m.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));

export function QueuesPage({ ns }) {
  const nodes = useWatchedList("/api/v1/nodes");
  const cqs = useWatchedList("/apis/kueue.x-k8s.io/v1beta1/clusterqueues");
  const lqs = useWatchedList(ns ? `/apis/kueue.x-k8s.io/v1beta1/namespaces/${encodeURIComponent(ns)}/localqueues` : "/apis/kueue.x-k8s.io/v1beta1/localqueues");
  const nodeRows = useMemo(() => sortByName(nodes.items), [nodes.version]);
  const cqRows = useMemo(() => sortByName(cqs.items), [cqs.version]);
  const lqRows = useMemo(() => sortByName(lqs.items), [lqs.version, ns]);
  const resources = [...new Set(nodeRows.flatMap((n) => Object.keys(n.status?.capacity || {})))].filter((r) => !r.startsWith("hugepages"));

  return html`<section id="queues-page" data-testid="queues-page">
    <h1>Queues & nodes</h1>
    <h2>Nodes</h2>
    <table class="grid" data-testid="nodes-table">
      <thead><tr><th>Node</th><th>Ready</th>${resources.map((r) => html`<th>${r} (allocatable / capacity)</th>`)}</tr></thead>
      <tbody>${nodeRows.map((n) => {
        const ready = (n.status?.conditions || []).find((c) => c.type === "Ready");
        return html`<tr data-testid="node-row" data-name=${n.metadata.name}>
          <td>${n.metadata.name}</td>
          <td class=${ready?.status === "True" ? "ok" : "warn"}>${ready?.status === "True" ? "Ready" : ready?.reason || "NotReady"}</td>
          ${resources.map((r) => html`<td>${showQuantity(r, n.status?.allocatable?.[r])} / ${showQuantity(r, n.status?.capacity?.[r])}</td>`)}
        </tr>`;
      })}</tbody>
    </table>
    <h2>ClusterQueues</h2>
    ${cqRows.length ? html`<table class="grid" data-testid="clusterqueues-table">
      <thead><tr><th>Name</th><th>Cohort</th><th>Pending</th><th>Admitted</th><th>Flavor</th><th>Resource</th><th>Usage / nominal quota</th><th></th><th>Borrowed</th><th>Borrowing limit</th></tr></thead>
      <tbody>${cqRows.flatMap((cq) => {
        const rows = [];
        const usage = cq.status?.flavorsUsage || [];
        for (const group of cq.spec?.resourceGroups || []) {
          for (const flavor of group.flavors || []) {
            for (const r of flavor.resources || []) {
              const used = (usage.find((u) => u.name === flavor.name)?.resources || []).find((x) => x.name === r.name) || {};
              rows.push({ flavor: flavor.name, r, used });
            }
          }
        }
        if (!rows.length) rows.push({ flavor: "", r: { name: "" }, used: {} });
        return rows.map((row, i) => html`<tr data-testid=${i === 0 ? "clusterqueue-row" : "clusterqueue-resource"} data-name=${cq.metadata.name}>
          <td>${i === 0 ? cq.metadata.name : ""}</td><td>${i === 0 ? cq.spec?.cohort || "" : ""}</td>
          <td class="num">${i === 0 ? cq.status?.pendingWorkloads ?? 0 : ""}</td><td class="num">${i === 0 ? cq.status?.admittedWorkloads ?? 0 : ""}</td>
          <td>${row.flavor}</td><td>${row.r.name}</td>
          <td>${showQuantity(row.r.name, row.used.total ?? "0")} / ${showQuantity(row.r.name, row.r.nominalQuota)}</td>
          <td><${Bar} used=${quantity(row.used.total ?? "0")} total=${quantity(row.r.nominalQuota)} /></td>
          <td>${row.used.borrowed ? showQuantity(row.r.name, row.used.borrowed) : ""}</td>
          <td>${row.r.borrowingLimit !== undefined ? showQuantity(row.r.name, row.r.borrowingLimit) : html`<span class="muted">none</span>`}</td>
        </tr>`);
      })}</tbody>
    </table>` : html`<p class="muted">${cqs.synced ? "No ClusterQueues (Kueue's objects: see examples/scheduling/queues.yaml)." : "loading…"}</p>`}
    <h2>LocalQueues</h2>
    ${lqRows.length ? html`<table class="grid" data-testid="localqueues-table">
      <thead><tr><th>Namespace</th><th>Name</th><th>ClusterQueue</th><th>Pending</th><th>Admitted</th></tr></thead>
      <tbody>${lqRows.map((lq) => html`<tr data-testid="localqueue-row" data-name=${lq.metadata.name}>
        <td>${lq.metadata.namespace}</td><td>${lq.metadata.name}</td><td>${lq.spec?.clusterQueue}</td>
        <td class="num">${lq.status?.pendingWorkloads ?? 0}</td><td class="num">${lq.status?.admittedWorkloads ?? 0}</td>
      </tr>`)}</tbody>
    </table>` : html`<p class="muted">${lqs.synced ? "No LocalQueues." : "loading…"}</p>`}
  </section>`;
}
