// A job's page (any job kind, or a Katib Trial): state and actions,
// conditions over time, replicas, logs, metrics, artifacts, events and the
// manifest.
import { useEffect, useMemo, useState } from "preact/hooks";
import { html, formatTime, age, formatDuration, ts, toYaml, stateClass, experimentHref, keyOf } from "../lib/util.js";
import { useWatchedList, useWatchedObject, usePoll, useNow } from "../lib/hooks.js";
import { kindInfo, collection, objectPath, stateOf, isFinished, isSuspended, suspendPatch, canSuspend, podSelector, queueOf, startTimeOf, endTimeOf, replicasOf } from "../lib/kinds.js";
import { mergePatch, del } from "../lib/api.js";
import { useConfirm } from "../lib/confirm.js";
import { LogViewer } from "../lib/logs.js";
import { MetricCharts, seriesPath } from "../lib/metrics.js";
import { Artifacts } from "../lib/artifacts.js";

export function JobPage({ kind: named, ns, name }) {
  const info = kindInfo(named);
  if (!info) return html`<div class="error">Unknown kind ${named}.</div>`;
  const { kind } = info;  // as objects name it, however the route spelt it
  const { obj, synced, error } = useWatchedObject(collection(info, ns), name);
  const [dialog, ask] = useConfirm();
  const [tab, setTab] = useState("overview");
  const now = useNow(1000);

  if (!obj) {
    return html`<section>
      <h1>${kind} ${ns}/${name}</h1>
      ${error ? html`<div class="error">${error.message}</div>` : null}
      <p class="muted" data-testid="job-missing">${synced ? "Not found (deleted, or not created yet)." : "loading…"}</p>
    </section>`;
  }
  const state = stateOf(obj);
  const finished = isFinished(state);
  const suspended = isSuspended(obj);
  const path = objectPath(info, ns, name);
  const owner = (obj.metadata.ownerReferences || []).find((o) => o.kind === "Experiment");
  const expName = owner?.name || obj.metadata.labels?.["katib.kubeflow.org/experiment"];
  const reps = replicasOf(obj);

  const suspendAction = () => ask({
    title: suspended ? `Resume ${name}?` : `Suspend ${name}?`,
    message: suspended ? "Its replicas start again." : "Its running replicas are stopped; resume starts them again.",
    okLabel: suspended ? "Resume" : "Suspend",
    action: () => mergePatch(path, suspendPatch(info, !suspended)),
  });
  const deleteAction = () => ask({
    title: `Delete ${kind} ${name}?`,
    message: "The job, its pods and their logs are deleted. This cannot be undone.",
    okLabel: "Delete", danger: true,
    action: async () => { await del(path); location.hash = "#/jobs"; },
  });

  const tabs = [["overview", "Overview"], ["logs", "Logs"], ["metrics", "Metrics"], ["artifacts", "Artifacts"], ["events", "Events"], ["manifest", "Manifest"]];
  return html`<section id="job-page" data-testid="job-page" data-state=${state}>
    <div class="toolbar">
      <h1><span class="muted">${kind}</span> ${ns}/<span data-testid="job-name">${name}</span></h1>
      <span class=${stateClass(state)} data-testid="job-state">${state}</span>
      <span class="spacer"></span>
      ${canSuspend(info) && !finished ? html`<button data-testid="suspend-button" onClick=${suspendAction}>${suspended ? "Resume" : "Suspend"}</button>` : null}
      <button class="danger" data-testid="delete-button" onClick=${deleteAction}>Delete</button>
    </div>
    <dl class="facts">
      <dt>created</dt><dd>${formatTime(obj.metadata.creationTimestamp)} (${age(obj.metadata.creationTimestamp, now)} ago)</dd>
      ${obj.status?.startTime || endTimeOf(obj) ? html`<dt>duration</dt><dd>${formatDuration((endTimeOf(obj) ? ts(endTimeOf(obj)) : now) - ts(startTimeOf(obj)))}</dd>` : null}
      ${reps ? html`<dt>replicas</dt><dd>${reps[0] === null ? reps[1] : `${reps[0]}/${reps[1]}`}</dd>` : null}
      ${queueOf(obj) ? html`<dt>queue</dt><dd>${queueOf(obj)}</dd>` : null}
      ${expName ? html`<dt>experiment</dt><dd><a href=${experimentHref(ns, expName)}>${expName}</a></dd>` : null}
    </dl>
    <nav class="tabs">${tabs.map(([id, label]) => html`<button class=${tab === id ? "on" : ""} data-testid=${`tab-${id}`} onClick=${() => setTab(id)}>${label}</button>`)}</nav>
    ${tab === "overview" ? html`
      <div class="two-col">
        <div><h2>Conditions</h2><${Conditions} obj=${obj} /></div>
        <div><h2>Replicas</h2><${Replicas} obj=${obj} onLogs=${() => setTab("logs")} /></div>
      </div>
      <h2>Metrics</h2><${Metrics} path=${path} finished=${finished} />
      <h2>Events</h2><${Events} ns=${ns} name=${name} />` : null}
    ${tab === "logs" ? html`<${Logs} obj=${obj} />` : null}
    ${tab === "metrics" ? html`<${Metrics} path=${path} finished=${finished} />` : null}
    ${tab === "artifacts" ? html`<${Artifacts} path=${path} finished=${finished} />` : null}
    ${tab === "events" ? html`<${Events} ns=${ns} name=${name} />` : null}
    ${tab === "manifest" ? html`<${Manifest} obj=${obj} />` : null}
    ${dialog}
  </section>`;
}

function Conditions({ obj }) {
  const conds = [...(obj.status?.conditions || [])].sort((a, b) => ts(a.lastTransitionTime) - ts(b.lastTransitionTime));
  if (!conds.length) return html`<p class="muted">No conditions yet.</p>`;
  return html`<ol class="timeline" data-testid="conditions">${conds.map((c) => html`
    <li class=${c.status === "True" ? "on" : "off"} data-testid="condition" data-type=${c.type} data-status=${c.status}>
      <span class="when">${formatTime(c.lastTransitionTime)}</span>
      <b>${c.type}</b> <span class="muted">${c.status === "True" ? "" : `(${c.status})`}</span>
      <div class="muted small">${c.reason}${c.message ? `: ${c.message}` : ""}</div>
    </li>`)}</ol>`;
}

function usePods(obj) {
  const ns = obj.metadata.namespace;
  const list = useWatchedList(`/api/v1/namespaces/${encodeURIComponent(ns)}/pods`, { labelSelector: podSelector(obj) });
  const pods = useMemo(() => [...list.items.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name)), [list.version, ns]);
  return { pods, synced: list.synced };
}

function containerSummary(cs) {
  const st = cs.state || {};
  if (st.running) return "running";
  if (st.waiting) return `waiting${st.waiting.reason ? ` (${st.waiting.reason})` : ""}`;
  if (st.terminated) return `exited ${st.terminated.exitCode}${st.terminated.reason ? ` (${st.terminated.reason})` : ""}`;
  return "";
}

function Replicas({ obj, onLogs }) {
  const { pods, synced } = usePods(obj);
  if (!pods.length) return html`<p class="muted" data-testid="no-pods">${synced ? "No pods." : "loading…"}</p>`;
  return html`<table class="grid" data-testid="replicas-table">
    <thead><tr><th>Pod</th><th>Phase</th><th>Container</th><th>State</th><th>Restarts</th><th>Previous run's exit</th></tr></thead>
    <tbody>${pods.flatMap((p) => {
      const statuses = p.status?.containerStatuses?.length ? p.status.containerStatuses : (p.spec?.containers || []).map((c) => ({ name: c.name }));
      return statuses.map((cs, i) => {
        const last = cs.lastState?.terminated;
        return html`<tr data-testid="replica-row" data-pod=${p.metadata.name} data-phase=${p.status?.phase || ""}>
          <td>${i === 0 ? p.metadata.name : ""}</td>
          <td>${i === 0 ? html`<span class=${stateClass(p.status?.phase)}>${p.status?.phase || "Pending"}</span>` : ""}</td>
          <td>${cs.name}</td>
          <td>${containerSummary(cs)}</td>
          <td data-testid="restarts">${cs.restartCount ?? 0}</td>
          <td>${last ? `${last.exitCode}${last.reason ? ` (${last.reason})` : ""}` : ""}</td>
        </tr>`;
      });
    })}</tbody></table>
    <button class="link" onClick=${onLogs}>logs…</button>`;
}

function Logs({ obj }) {
  const { pods, synced } = usePods(obj);
  const [sel, setSel] = useState("");
  const choices = pods.flatMap((p) => (p.spec?.containers || [{ name: "" }]).map((c) => ({ pod: p, container: c.name, key: `${p.metadata.name}/${c.name}` })));
  const chosen = choices.find((c) => c.key === sel) || choices[0];
  if (!chosen) return html`<p class="muted" data-testid="no-pods">${synced ? "No pods, so no logs." : "loading…"}</p>`;
  const cs = (chosen.pod.status?.containerStatuses || []).find((s) => s.name === chosen.container) || {};
  const phase = chosen.pod.status?.phase;
  const running = phase === "Running" || phase === "Pending" || !phase;
  return html`<div>
    <div class="toolbar small">
      <label>replica <select data-testid="log-pod" value=${chosen.key} onChange=${(e) => setSel(e.target.value)}>
        ${choices.map((c) => html`<option value=${c.key}>${c.key}</option>`)}
      </select></label>
      <span class="muted">${phase}${cs.restartCount ? `, ${cs.restartCount} restarts` : ""}</span>
    </div>
    <${LogViewer} key=${chosen.key} ns=${obj.metadata.namespace} pod=${chosen.pod.metadata.name} container=${chosen.container}
      running=${running} restartCount=${cs.restartCount || 0} phase=${phase || ""} />
  </div>`;
}

function Metrics({ path, finished }) {
  // Poll while it runs; once more when it has finished.
  const { value, error } = usePoll(seriesPath(path), 2000, !finished, [finished]);
  if (error && !value) return html`<p class="muted">Metrics unavailable: ${error.message}</p>`;
  return html`<div data-testid="metrics"><${MetricCharts} answer=${value} objectPath=${path} /></div>`;
}

function Events({ ns, name }) {
  const list = useWatchedList(`/api/v1/namespaces/${encodeURIComponent(ns)}/events`, { fieldSelector: `involvedObject.name=${name}` });
  const events = useMemo(() => [...list.items.values()]
    .filter((e) => e.involvedObject?.name === name)
    .sort((a, b) => ts(a.lastTimestamp || a.eventTime || a.metadata.creationTimestamp) - ts(b.lastTimestamp || b.eventTime || b.metadata.creationTimestamp)), [list.version]);
  if (!events.length) return html`<p class="muted" data-testid="no-events">${list.synced ? "No events." : "loading…"}</p>`;
  return html`<table class="grid" data-testid="events-table">
    <thead><tr><th>Time</th><th>Type</th><th>Reason</th><th>Message</th><th>Count</th></tr></thead>
    <tbody>${events.map((e) => html`<tr key=${keyOf(e)} data-testid="event-row" data-reason=${e.reason}>
      <td>${formatTime(e.lastTimestamp || e.eventTime || e.metadata.creationTimestamp)}</td>
      <td class=${e.type === "Warning" ? "warn" : ""}>${e.type}</td><td>${e.reason}</td><td>${e.message}</td><td>${e.count || 1}</td>
    </tr>`)}</tbody></table>`;
}

function Manifest({ obj }) {
  const [format, setFormat] = useState("yaml");
  const [full, setFull] = useState(false);
  const shown = useMemo(() => {
    if (full) return obj;
    const copy = JSON.parse(JSON.stringify(obj));
    delete copy.metadata.managedFields;
    if (copy.metadata.annotations) {
      delete copy.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"];
      if (!Object.keys(copy.metadata.annotations).length) delete copy.metadata.annotations;
    }
    return copy;
  }, [obj, full]);
  return html`<div>
    <div class="toolbar small">
      <span class="segmented">
        <button class=${format === "yaml" ? "on" : ""} onClick=${() => setFormat("yaml")}>YAML</button>
        <button class=${format === "json" ? "on" : ""} onClick=${() => setFormat("json")}>JSON</button>
      </span>
      <label class="check"><input type="checkbox" checked=${full} onChange=${(e) => setFull(e.target.checked)} /> with last-applied annotation</label>
    </div>
    <pre class="manifest" data-testid="manifest">${format === "yaml" ? toYaml(shown) : JSON.stringify(shown, null, 2)}</pre>
  </div>`;
}
