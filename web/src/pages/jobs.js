// The jobs page: every job kind in one live table (a page of rows at a
// time), filters, and the experiments below.
import { useMemo, useState } from "preact/hooks";
import { html, age, formatDuration, ts, jobHref, experimentHref, optimizationHref, stateClass, formatNumber } from "../lib/util.js";
import { useWatchedList, useNow } from "../lib/hooks.js";
import { JOB_KINDS, EXPERIMENT, OPTIMIZATION_JOB, collection, stateOf, replicasOf, queueOf, ownerKind, startTimeOf, endTimeOf, progressOf } from "../lib/kinds.js";
import { ProgressBar } from "./optimization.js";

const PAGE_SIZE = 100;
// Jobs that these kinds create for themselves are listed under their owner.
const CHILD_OF = ["Trial", "TrainJob", "JobSet", "OptimizationJob"];
const STATES = ["Created", "Pending", "Running", "Restarting", "Suspended", "Succeeded", "Failed"];

// One live list per kind; the hooks are called in a fixed order.
function useAllJobs(ns) {
  const lists = JOB_KINDS.map((k) => useWatchedList(collection(k, ns)));
  const version = lists.map((l) => l.version).join(",");
  const synced = lists.every((l) => l.synced);
  const errors = lists.filter((l) => l.error).map((l) => l.error);
  const rows = useMemo(() => {
    const out = [];
    for (const l of lists) for (const o of l.items.values()) out.push(o);
    return out;
  }, [version, ns]);
  return { rows, synced, errors };
}

export function JobsPage({ ns }) {
  const { rows, synced, errors } = useAllJobs(ns);
  const [kind, setKind] = useState("");
  const [state, setState] = useState("");
  const [search, setSearch] = useState("");
  const [hideChildren, setHideChildren] = useState(true);
  const [page, setPage] = useState(0);
  const [sort, setSort] = useState({ key: "created", dir: -1 });
  const [picked, setPicked] = useState(() => new Set());
  const togglePick = (id) => setPicked((p) => { const n = new Set(p); if (n.has(id)) n.delete(id); else n.add(id); return n; });
  const now = useNow(1000);

  const filtered = useMemo(() => {
    const q = search.trim().toLowerCase();
    const out = [];
    for (const o of rows) {
      if (kind && o.kind !== kind) continue;
      if (hideChildren && CHILD_OF.includes(ownerKind(o))) continue;
      const s = stateOf(o);
      if (state && s !== state) continue;
      if (q && !o.metadata.name.toLowerCase().includes(q)) continue;
      out.push({ o, s });
    }
    const key = sort.key;
    const val = ({ o, s }) => key === "name" ? o.metadata.name : key === "kind" ? o.kind : key === "namespace" ? o.metadata.namespace
      : key === "state" ? s : key === "queue" ? queueOf(o) : ts(o.metadata.creationTimestamp) || 0;
    out.sort((a, b) => {
      const x = val(a), y = val(b);
      return (x < y ? -1 : x > y ? 1 : a.o.metadata.name < b.o.metadata.name ? -1 : 1) * sort.dir;
    });
    return out;
  }, [rows, kind, state, search, hideChildren, sort]);

  const pages = Math.max(1, Math.ceil(filtered.length / PAGE_SIZE));
  const current = Math.min(page, pages - 1);
  const visible = filtered.slice(current * PAGE_SIZE, (current + 1) * PAGE_SIZE);
  const th = (key, label) => html`<th class="sortable" data-sort=${key} onClick=${() => setSort({ key, dir: sort.key === key ? -sort.dir : 1 })}>
    ${label}${sort.key === key ? (sort.dir > 0 ? " ▲" : " ▼") : ""}</th>`;

  return html`<section>
    <div class="toolbar">
      <h1>Jobs</h1>
      <select id="kind-filter" data-testid="kind-filter" value=${kind} onChange=${(e) => { setKind(e.target.value); setPage(0); }}>
        <option value="">all kinds</option>
        ${JOB_KINDS.map((k) => html`<option value=${k.kind}>${k.kind}</option>`)}
      </select>
      <select id="state-filter" data-testid="state-filter" value=${state} onChange=${(e) => { setState(e.target.value); setPage(0); }}>
        <option value="">all states</option>
        ${STATES.map((s) => html`<option value=${s}>${s}</option>`)}
      </select>
      <input id="job-search" data-testid="job-search" type="search" placeholder="name contains…" value=${search}
        onInput=${(e) => { setSearch(e.target.value); setPage(0); }} />
      <label class="check" title="jobs that a Trial, TrainJob, JobSet or OptimizationJob runs"><input type="checkbox" data-testid="hide-children" checked=${hideChildren} onChange=${(e) => { setHideChildren(e.target.checked); setPage(0); }} /> hide child jobs</label>
      <span class="spacer"></span>
      ${picked.size ? html`<a class="button" data-testid="compare-picked" href=${`#/compare?items=${[...picked].join(",")}`}>Compare ${picked.size}</a>` : null}
      <a class="button" href="#/submit">Submit…</a>
    </div>
    ${errors.length ? html`<div class="error" data-testid="jobs-error">${errors[0].message}${errors[0].status === 403 && !ns ? " (the token may list only some namespaces: pick one above)" : ""}</div>` : null}
    <table class="grid" id="jobs-table" data-testid="jobs-table">
      <thead><tr><th class="narrow"></th>${th("kind", "Kind")}${th("namespace", "Namespace")}${th("name", "Name")}${th("state", "State")}
        ${th("created", "Age")}<th>Duration</th><th>Progress</th><th>Replicas</th>${th("queue", "Queue")}</tr></thead>
      <tbody>
        ${visible.map(({ o, s }) => {
          const start = startTimeOf(o);
          const end = endTimeOf(o);
          const reps = replicasOf(o);
          const id = `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`;
          return html`<tr key=${o.metadata.uid || o.kind + o.metadata.namespace + o.metadata.name}
              data-testid="job-row" data-kind=${o.kind} data-name=${o.metadata.name} data-namespace=${o.metadata.namespace} data-state=${s}>
            <td class="narrow"><input type="checkbox" title="compare" checked=${picked.has(id)} onChange=${() => togglePick(id)} /></td>
            <td>${o.kind}</td><td>${o.metadata.namespace}</td>
            <td><a href=${jobHref(o.kind, o.metadata.namespace, o.metadata.name)}>${o.metadata.name}</a></td>
            <td><span class=${stateClass(s)} data-testid="job-state">${s}</span></td>
            <td title=${o.metadata.creationTimestamp}>${age(o.metadata.creationTimestamp, now)}</td>
            <td>${o.status?.startTime || end ? formatDuration((end ? ts(end) : now) - ts(start)) : ""}</td>
            <td>${progressOf(o) ? html`<${ProgressBar} progress=${progressOf(o)} />` : ""}</td>
            <td>${reps ? (reps[0] === null ? `${reps[1]}` : `${reps[0]}/${reps[1]}`) : ""}</td>
            <td>${queueOf(o)}</td>
          </tr>`;
        })}
      </tbody>
    </table>
    ${!synced ? html`<p class="muted">loading…</p>` : !filtered.length ? html`<p class="muted" data-testid="jobs-empty">No jobs${rows.length ? " match the filters" : ""}.</p>` : null}
    <div class="pager" data-testid="jobs-pager">
      <button disabled=${current === 0} onClick=${() => setPage(current - 1)} data-testid="page-prev">‹ prev</button>
      <span data-testid="page-info">page ${current + 1} of ${pages} · ${filtered.length} of ${rows.length} jobs</span>
      <button disabled=${current >= pages - 1} onClick=${() => setPage(current + 1)} data-testid="page-next">next ›</button>
    </div>
    <${ExperimentsTable} ns=${ns} now=${now} />
    <${OptimizationJobsTable} ns=${ns} now=${now} />
  </section>`;
}

// Experiments a page at a time, as jobs are: the newest first.
const EXPERIMENTS_PER_PAGE = 100;

function ExperimentsTable({ ns, now }) {
  const list = useWatchedList(collection(EXPERIMENT, ns));
  const rows = useMemo(() => [...list.items.values()].sort((a, b) => ts(b.metadata.creationTimestamp) - ts(a.metadata.creationTimestamp)), [list.version, ns]);
  const [page, setPage] = useState(0);
  const pages = Math.max(1, Math.ceil(rows.length / EXPERIMENTS_PER_PAGE));
  const current = Math.min(page, pages - 1);
  const shown = rows.slice(current * EXPERIMENTS_PER_PAGE, (current + 1) * EXPERIMENTS_PER_PAGE);
  return html`<h2>Experiments</h2>
    <table class="grid" id="experiments-table" data-testid="experiments-table">
      <thead><tr><th>Namespace</th><th>Name</th><th>State</th><th>Age</th><th>Trials</th><th>Objective</th><th>Best</th></tr></thead>
      <tbody>${shown.map((e) => {
        const s = stateOf(e);
        const st = e.status || {};
        const obj = e.spec?.objective || {};
        const best = (st.currentOptimalTrial?.observation?.metrics || []).find((m) => m.name === obj.objectiveMetricName);
        return html`<tr key=${e.metadata.uid} data-testid="experiment-row" data-name=${e.metadata.name} data-state=${s}>
          <td>${e.metadata.namespace}</td>
          <td><a href=${experimentHref(e.metadata.namespace, e.metadata.name)}>${e.metadata.name}</a></td>
          <td><span class=${stateClass(s)}>${s}</span></td>
          <td>${age(e.metadata.creationTimestamp, now)}</td>
          <td>${st.trials ?? 0}${e.spec?.maxTrialCount ? ` / ${e.spec.maxTrialCount}` : ""}
            ${st.trialsRunning ? html` <span class="muted">(${st.trialsRunning} running)</span>` : null}</td>
          <td>${obj.type} ${obj.objectiveMetricName}</td>
          <td>${best ? formatNumber(best.latest) : ""}</td>
        </tr>`;
      })}</tbody>
    </table>
    ${pages > 1 ? html`<div class="pager">
      <button disabled=${current === 0} onClick=${() => setPage(current - 1)} data-testid="experiments-prev">‹ prev</button>
      <span data-testid="experiments-page-info">page ${current + 1} of ${pages} · ${rows.length} experiments</span>
      <button disabled=${current >= pages - 1} onClick=${() => setPage(current + 1)} data-testid="experiments-next">next ›</button>
    </div>` : null}
    ${list.synced && !rows.length ? html`<p class="muted">No experiments.</p>` : null}`;
}

// Trainer's OptimizationJobs: tuning whose trials are TrainJobs.
function OptimizationJobsTable({ ns, now }) {
  const list = useWatchedList(collection(OPTIMIZATION_JOB, ns));
  const rows = useMemo(() => [...list.items.values()].sort((a, b) => ts(b.metadata.creationTimestamp) - ts(a.metadata.creationTimestamp)), [list.version, ns]);
  if (list.synced && !rows.length) return null;
  return html`<h2>Optimization jobs</h2>
    <table class="grid" data-testid="optimizationjobs-table">
      <thead><tr><th>Namespace</th><th>Name</th><th>State</th><th>Age</th><th>Trials</th><th>Objectives</th><th>Best</th></tr></thead>
      <tbody>${rows.map((o) => {
        const s = stateOf(o);
        const st = o.status || {};
        const c = st.trialCounts || {};
        return html`<tr key=${o.metadata.uid} data-testid="optimizationjob-row" data-name=${o.metadata.name} data-state=${s}>
          <td>${o.metadata.namespace}</td>
          <td><a href=${optimizationHref(o.metadata.namespace, o.metadata.name)}>${o.metadata.name}</a></td>
          <td><span class=${stateClass(s)}>${s}</span></td>
          <td>${age(o.metadata.creationTimestamp, now)}</td>
          <td>${(c.succeeded ?? 0) + (c.failed ?? 0) + (c.earlyStopped ?? 0)} / ${o.spec?.numTrials ?? 1}${c.running ? html` <span class="muted">(${c.running} running)</span>` : null}</td>
          <td>${(o.spec?.objectives || []).map((x) => `${(x.direction || "Minimize").toLowerCase()} ${x.metric}`).join(", ")}</td>
          <td>${(st.result?.metrics || []).map((m) => `${m.name} ${formatNumber(m.value)}`).join(", ")}${st.paretoFront?.length ? html` <span class="muted">(front of ${st.paretoFront.length})</span>` : null}</td>
        </tr>`;
      })}</tbody>
    </table>`;
}
