// An OptimizationJob's page (Kubeflow Trainer's tuning over TrainJobs): its
// state and best trial, its trials (TrainJobs) with their progress,
// parameters and reported metrics, and, for two objectives or more, the
// Pareto front drawn over every trial in the first two.
import { useMemo } from "preact/hooks";
import { html, formatTime, formatNumber, toYaml, stateClass, jobHref } from "../lib/util.js";
import { useWatchedList, useWatchedObject } from "../lib/hooks.js";
import { OPTIMIZATION_JOB, TRAINJOB, collection, stateOf, progressOf } from "../lib/kinds.js";

const trialIndex = (t) => Number(t.metadata.labels?.["trainyard.dev/trial-index"] ?? 0);
const parametersOf = (t) => {
  try { return JSON.parse(t.metadata.annotations?.["trainyard.dev/trial-parameters"] || "{}"); } catch { return {}; }
};
const named = (list, name) => (list || []).find((m) => m.name === name)?.value;

// The objectives' values of each trial: as its trainer reported them, or
// as the job's status lists them (status.trialResults: pushed or printed).
function valuesOf(trial, objectives, known) {
  return objectives.map((o) => {
    const v = Number(named(trial.status?.trainerStatus?.metrics, o.metric) ?? known.get(trial.metadata.name)?.[o.metric]);
    return isFinite(v) ? v : null;
  });
}

export function OptimizationPage({ ns, name }) {
  const { obj: job, synced, error } = useWatchedObject(collection(OPTIMIZATION_JOB, ns), name);
  const list = useWatchedList(collection(TRAINJOB, ns), { labelSelector: `trainyard.dev/optimization-job=${name}` });
  const trials = useMemo(() => [...list.items.values()].sort((a, b) => trialIndex(a) - trialIndex(b)), [list.version]);
  if (!job) {
    return html`<section><h1>OptimizationJob ${ns}/${name}</h1>
      ${error ? html`<div class="error">${error.message}</div>` : null}
      <p class="muted" data-testid="optimization-missing">${synced ? "Not found." : "loading…"}</p></section>`;
  }
  const state = stateOf(job);
  const spec = job.spec || {};
  const st = job.status || {};
  const objectives = spec.objectives || [];
  const counts = st.trialCounts || {};
  const algorithm = spec.searchAlgorithm?.trainyard?.algorithmName || (spec.searchAlgorithm?.grid ? "grid" : "random");
  // What the status says of each trial that reported.
  const known = new Map();
  for (const r of [st.result, ...(st.paretoFront || []), ...(st.trialResults || [])]) {
    if (r) known.set(r.trainJobName, Object.fromEntries((r.metrics || []).map((m) => [m.name, m.value])));
  }
  const front = new Set((st.paretoFront || []).map((r) => r.trainJobName));
  const best = st.result?.trainJobName;
  return html`<section id="optimization-page" data-testid="optimization-page" data-state=${state}>
    <div class="toolbar">
      <h1><span class="muted">OptimizationJob</span> ${ns}/${name}</h1>
      <span class=${stateClass(state)} data-testid="optimization-state">${state}</span>
    </div>
    <dl class="facts">
      <dt>objectives</dt><dd>${objectives.map((o) => html`<span>${o.direction || "Minimize"} <b>${o.metric}</b> </span>`)}</dd>
      <dt>algorithm</dt><dd>${algorithm}</dd>
      <dt>trials</dt><dd data-testid="trial-counts">${counts.created ?? 0} of ${spec.numTrials ?? 1}: ${counts.succeeded ?? 0} succeeded, ${counts.running ?? 0} running, ${counts.failed ?? 0} failed, ${counts.earlyStopped ?? 0} early stopped (${spec.parallelTrials ?? 1} at a time)</dd>
      ${best ? html`<dt>best</dt><dd data-testid="best-trial"><b>${best}</b>: ${(st.result.metrics || []).map((m) => `${m.name} ${formatNumber(m.value)}`).join(", ")}${" "}
        <span class="muted">(${(st.result.parameters || []).map((p) => `${p.name}=${formatNumber(p.value)}`).join(", ")})</span></dd>` : null}
      <dt>created</dt><dd>${formatTime(job.metadata.creationTimestamp)}</dd>
    </dl>
    <h2>Trials</h2>
    ${trials.length ? html`<div style="overflow:auto"><table class="grid" data-testid="optimization-trials">
      <thead><tr><th>#</th><th>TrainJob</th><th>State</th><th>Progress</th>
        ${(spec.parameters || []).map((p) => html`<th>${p.name}</th>`)}${objectives.map((o) => html`<th>${o.metric}</th>`)}</tr></thead>
      <tbody>${trials.map((t) => {
        const values = valuesOf(t, objectives, known);
        const params = parametersOf(t);
        const p = progressOf(t);
        const n = t.metadata.name;
        return html`<tr key=${t.metadata.uid} class=${n === best ? "best" : ""} data-testid="optimization-trial" data-trial=${n}
            data-state=${stateOf(t)} data-front=${front.has(n) ? "true" : "false"}>
          <td class="num">${trialIndex(t)}</td>
          <td><a href=${jobHref("TrainJob", ns, n)}>${n}</a>${n === best ? html` <span class="ok" title="best trial">★</span>` : null}</td>
          <td><span class=${stateClass(stateOf(t))}>${stateOf(t)}</span></td>
          <td>${p ? html`<${ProgressBar} progress=${p} />` : ""}</td>
          ${(spec.parameters || []).map((q) => html`<td class="num">${formatNumber(params[q.name])}</td>`)}
          ${values.map((v) => html`<td class="num">${v === null ? "" : formatNumber(v)}</td>`)}
        </tr>`;
      })}</tbody></table></div>` : html`<p class="muted">No trials yet.</p>`}
    ${objectives.length >= 2 ? html`<div class="panel" style="margin-top:12px"><h2>Pareto front: ${objectives[0].metric} and ${objectives[1].metric}</h2>
      <${ParetoChart} objectives=${objectives} front=${front}
        points=${trials.map((t) => ({ name: t.metadata.name, values: valuesOf(t, objectives, known) })).filter((p) => p.values[0] !== null && p.values[1] !== null)} /></div>` : null}
    <details><summary>Manifest</summary><pre class="manifest">${toYaml(job.spec)}</pre></details>
  </section>`;
}

// A job's share done and time left, as KEP-2779's trainerStatus says.
export function ProgressBar({ progress }) {
  const { percent, eta } = progress;
  return html`<span class="progress" data-testid="progress" data-percent=${percent} title=${eta !== undefined ? `${eta} s left` : ""}>
    <span class="progress-bar"><span style=${`width:${Math.max(0, Math.min(100, percent))}%`}></span></span>
    ${percent}%${eta !== undefined ? html` <span class="muted">${formatEta(eta)}</span>` : null}</span>`;
}

function formatEta(s) {
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.round(s / 60)}m`;
  return `${Math.round(s / 3600)}h`;
}

// Every trial in the first two objectives, the front's members marked
// and joined in order of the first (an SVG: exact, and testable).
export function ParetoChart({ objectives, points, front, width = 640, height = 320 }) {
  if (!points.length) return html`<p class="muted">No trial has reported both yet.</p>`;
  const pad = 48;
  const xs = points.map((p) => p.values[0]), ys = points.map((p) => p.values[1]);
  const range = (v) => { const lo = Math.min(...v), hi = Math.max(...v); return hi > lo ? [lo, hi] : [lo - 1, hi + 1]; };
  const [x0, x1] = range(xs), [y0, y1] = range(ys);
  const X = (v) => pad + (v - x0) / (x1 - x0) * (width - 2 * pad);
  const Y = (v) => height - pad - (v - y0) / (y1 - y0) * (height - 2 * pad);
  const members = points.filter((p) => front.has(p.name)).sort((a, b) => a.values[0] - b.values[0]);
  const line = members.map((p) => `${X(p.values[0])},${Y(p.values[1])}`).join(" ");
  return html`<svg data-testid="pareto-chart" data-front=${members.length} width=${width} height=${height} class="pareto">
    <line x1=${pad} y1=${height - pad} x2=${width - pad} y2=${height - pad} stroke="#94a3b8" />
    <line x1=${pad} y1=${pad} x2=${pad} y2=${height - pad} stroke="#94a3b8" />
    <text x=${width / 2} y=${height - 12} text-anchor="middle">${objectives[0].metric} (${(objectives[0].direction || "Minimize").toLowerCase()})</text>
    <text x=${14} y=${height / 2} text-anchor="middle" transform=${`rotate(-90 14 ${height / 2})`}>${objectives[1].metric} (${(objectives[1].direction || "Minimize").toLowerCase()})</text>
    <text x=${pad} y=${height - pad + 16} font-size="11">${formatNumber(x0)}</text>
    <text x=${width - pad} y=${height - pad + 16} font-size="11" text-anchor="end">${formatNumber(x1)}</text>
    <text x=${pad - 4} y=${height - pad} font-size="11" text-anchor="end">${formatNumber(y0)}</text>
    <text x=${pad - 4} y=${pad + 4} font-size="11" text-anchor="end">${formatNumber(y1)}</text>
    ${members.length > 1 ? html`<polyline points=${line} fill="none" stroke="#2563eb" stroke-width="1.5" />` : null}
    ${points.map((p) => html`<circle data-testid="pareto-point" data-trial=${p.name} data-front=${front.has(p.name) ? "true" : "false"}
        cx=${X(p.values[0])} cy=${Y(p.values[1])} r=${front.has(p.name) ? 5 : 3.5}
        fill=${front.has(p.name) ? "#2563eb" : "#cbd5e1"}><title>${p.name}: ${formatNumber(p.values[0])}, ${formatNumber(p.values[1])}</title></circle>`)}
  </svg>`;
}
