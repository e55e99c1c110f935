// An experiment's page: its state and best trial, the sortable trial
// table, best-so-far over trials, parallel coordinates, and every trial's
// metric curves overlaid.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { html, formatTime, formatNumber, ts, toYaml, stateClass, jobHref, keyOf } from "../lib/util.js";
import { useWatchedList, useWatchedObject } from "../lib/hooks.js";
import { EXPERIMENT, TRIAL, collection, objectPath, stateOf, isFinished } from "../lib/kinds.js";
import { get, del } from "../lib/api.js";
import { useConfirm } from "../lib/confirm.js";
import { Chart, align, color } from "../lib/chart.js";
import { ParallelCoordinates } from "../lib/parcoords.js";
import { seriesOf, seriesPath, XAxisSwitch } from "../lib/metrics.js";
import { ParetoChart } from "./optimization.js";

// trainyard's multi-objective mode: the annotation's metrics are objectives
// beside the experiment's own ("params=minimize,latency=minimize").
function paretoObjectivesOf(exp) {
  const objective = exp.spec?.objective || {};
  const out = [{ metric: objective.objectiveMetricName, direction: objective.type === "maximize" ? "Maximize" : "Minimize" }];
  for (const item of (exp.metadata.annotations?.["trainyard.dev/objectives"] || "").split(",")) {
    const [metric, direction] = item.split("=").map((x) => x.trim());
    if (metric && direction) out.push({ metric, direction: direction === "maximize" ? "Maximize" : "Minimize" });
  }
  return out;
}

// A trial's value of `metric` as the experiment's strategy reads it.
export function trialMetric(trial, metric, strategy = "latest") {
  const m = (trial.status?.observation?.metrics || []).find((x) => x.name === metric);
  if (!m) return null;
  const v = Number(strategy === "max" ? m.max : strategy === "min" ? m.min : m.latest);
  return isFinite(v) ? v : null;
}
const trialIndex = (t) => {
  const a = t.metadata.annotations?.["trainyard.dev/trial-index"];
  return a !== undefined ? Number(a) : ts(t.metadata.creationTimestamp);
};

export function ExperimentPage({ ns, name }) {
  const { obj: exp, synced, error } = useWatchedObject(collection(EXPERIMENT, ns), name);
  const trialsList = useWatchedList(collection(TRIAL, ns), { labelSelector: `katib.kubeflow.org/experiment=${name}` });
  const [dialog, ask] = useConfirm();
  const trials = useMemo(() => [...trialsList.items.values()].sort((a, b) => trialIndex(a) - trialIndex(b) || a.metadata.name.localeCompare(b.metadata.name)), [trialsList.version]);

  if (!exp) {
    return html`<section><h1>Experiment ${ns}/${name}</h1>
      ${error ? html`<div class="error">${error.message}</div>` : null}
      <p class="muted" data-testid="experiment-missing">${synced ? "Not found." : "loading…"}</p></section>`;
  }
  const state = stateOf(exp);
  const objective = exp.spec?.objective || {};
  const metricName = objective.objectiveMetricName;
  const maximize = objective.type !== "minimize";
  const strategy = (objective.metricStrategies || []).find((s) => s.name === metricName)?.value || (maximize ? "max" : "min");
  const params = (exp.spec?.parameters || []);
  const st = exp.status || {};
  const bestName = st.currentOptimalTrial?.bestTrialName;
  const bestValue = (st.currentOptimalTrial?.observation?.metrics || []).find((m) => m.name === metricName);
  const deleteAction = () => ask({
    title: `Delete experiment ${name}?`, message: "Its trials and their jobs are deleted too.", okLabel: "Delete", danger: true,
    action: async () => { await del(objectPath(EXPERIMENT, ns, name)); location.hash = "#/jobs"; },
  });

  return html`<section id="experiment-page" data-testid="experiment-page" data-state=${state}>
    <div class="toolbar">
      <h1><span class="muted">Experiment</span> ${ns}/${name}</h1>
      <span class=${stateClass(state)} data-testid="experiment-state">${state}</span>
      <span class="spacer"></span>
      <a class="button" href=${`#/compare?items=${trials.map((t) => `Trial/${ns}/${t.metadata.name}`).join(",")}`}>Compare trials</a>
      <button class="danger" data-testid="delete-button" onClick=${deleteAction}>Delete</button>
    </div>
    <dl class="facts">
      <dt>objective</dt><dd>${objective.type} <b>${metricName}</b>${objective.goal !== undefined ? ` (goal ${objective.goal})` : ""}</dd>
      <dt>algorithm</dt><dd>${exp.spec?.algorithm?.algorithmName}${exp.spec?.earlyStopping ? `, early stopping: ${exp.spec.earlyStopping.algorithmName}` : ""}</dd>
      <dt>trials</dt><dd data-testid="trial-counts">${st.trials ?? 0} of ${exp.spec?.maxTrialCount ?? "?"}: ${st.trialsSucceeded ?? 0} succeeded, ${st.trialsRunning ?? 0} running, ${st.trialsFailed ?? 0} failed, ${st.trialsEarlyStopped ?? 0} early stopped</dd>
      ${bestName ? html`<dt>best</dt><dd data-testid="best-trial"><b>${bestName}</b>: ${metricName} ${formatNumber(bestValue?.[strategy === "latest" ? "latest" : strategy] ?? bestValue?.latest)}
        <span class="muted">(${(st.currentOptimalTrial.parameterAssignments || []).map((p) => `${p.name}=${formatNumber(p.value)}`).join(", ")})</span></dd>` : null}
      <dt>created</dt><dd>${formatTime(exp.metadata.creationTimestamp)}</dd>
    </dl>
    <h2>Trials</h2>
    <${TrialTable} trials=${trials} params=${params} metricName=${metricName} strategy=${strategy} bestName=${bestName}
      metrics=${[metricName, ...(objective.additionalMetricNames || [])]} ns=${ns} maximize=${maximize} />
    <div class="grid-2">
      <div class="panel"><h2>Best so far</h2><${BestSoFar} trials=${trials} metricName=${metricName} strategy=${strategy} maximize=${maximize} /></div>
      <div class="panel parcoords" data-testid="parcoords"><h2>Parameters → ${metricName}</h2>
        <${ParallelCoordinates} axes=${[...params.map(axisOf), { name: metricName, type: "linear", objective: true }]}
          rows=${trials.filter((t) => trialMetric(t, metricName, strategy) !== null).map((t) => ({
            id: t.metadata.name,
            values: Object.fromEntries((t.spec?.parameterAssignments || []).map((p) => [p.name, p.value])),
            objective: trialMetric(t, metricName, strategy),
            highlight: t.metadata.name === bestName,
          }))}
          objectiveName=${metricName} maximize=${maximize} width=${640} height=${300} /></div>
    </div>
    ${st.paretoFront?.length ? html`<div class="panel" style="margin-top:12px" data-testid="experiment-front">
      <h2>Pareto front: ${paretoObjectivesOf(exp).slice(0, 2).map((o) => o.metric).join(" and ")}</h2>
      <${ParetoChart} objectives=${paretoObjectivesOf(exp)} front=${new Set(st.paretoFront.map((m) => m.bestTrialName))}
        points=${trials.map((t) => ({ name: t.metadata.name, values: paretoObjectivesOf(exp).slice(0, 2).map((o) => trialMetric(t, o.metric)) }))
          .filter((p) => p.values[0] !== null && p.values[1] !== null)} /></div>` : null}
    <div class="panel" style="margin-top:12px"><${TrialCurves} trials=${trials} ns=${ns} metrics=${[metricName, ...(objective.additionalMetricNames || [])]} /></div>
    <details><summary>Manifest</summary><pre class="manifest">${toYaml(exp.spec)}</pre></details>
    ${dialog}
  </section>`;
}

function axisOf(p) {
  const fs = p.feasibleSpace || {};
  if (p.parameterType === "categorical" || p.parameterType === "discrete") {
    return { name: p.name, type: "category", values: fs.list ? (p.parameterType === "discrete" ? [...fs.list].sort((a, b) => a - b) : fs.list) : undefined };
  }
  const min = fs.min !== undefined ? Number(fs.min) : undefined;
  const max = fs.max !== undefined ? Number(fs.max) : undefined;
  return { name: p.name, type: fs.distribution?.startsWith("log") ? "log" : "linear", min, max };
}

function TrialTable({ trials, params, metricName, strategy, bestName, metrics, ns, maximize }) {
  const [sort, setSort] = useState({ key: "#", dir: 1 });
  const rows = useMemo(() => trials.map((t, i) => {
    const assigned = Object.fromEntries((t.spec?.parameterAssignments || []).map((p) => [p.name, p.value]));
    const vals = { "#": i + 1, name: t.metadata.name, state: stateOf(t), objective: trialMetric(t, metricName, strategy) };
    for (const p of params) vals[`p:${p.name}`] = assigned[p.name];
    for (const m of metrics.slice(1)) vals[`m:${m}`] = trialMetric(t, m, "latest");
    return { t, vals };
  }), [trials, metricName]);
  const sorted = [...rows].sort((a, b) => {
    let x = a.vals[sort.key], y = b.vals[sort.key];
    const nx = Number(x), ny = Number(y);
    if (x !== null && y !== null && x !== undefined && y !== undefined && isFinite(nx) && isFinite(ny)) { x = nx; y = ny; }
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    return (x < y ? -1 : x > y ? 1 : 0) * sort.dir;
  });
  const th = (key, label) => html`<th class="sortable" data-testid=${`sort-${key}`} onClick=${() => setSort({ key, dir: sort.key === key ? -sort.dir : (key === "objective" && maximize ? -1 : 1) })}>
    ${label}${sort.key === key ? (sort.dir > 0 ? " ▲" : " ▼") : ""}</th>`;
  if (!trials.length) return html`<p class="muted" data-testid="no-trials">No trials yet.</p>`;
  return html`<div style="overflow:auto"><table class="grid" data-testid="trials-table">
    <thead><tr>${th("#", "#")}${th("name", "Trial")}${th("state", "State")}${params.map((p) => th(`p:${p.name}`, p.name))}
      ${th("objective", `${metricName} (${strategy})`)}${metrics.slice(1).map((m) => th(`m:${m}`, m))}</tr></thead>
    <tbody>${sorted.map(({ t, vals }) => html`<tr key=${t.metadata.uid} class=${t.metadata.name === bestName ? "best" : ""}
        data-testid="trial-row" data-trial=${t.metadata.name} data-state=${vals.state} data-objective=${vals.objective ?? ""}>
      <td class="num">${vals["#"]}</td>
      <td><a href=${jobHref("Trial", ns, t.metadata.name)}>${t.metadata.name}</a>${t.metadata.name === bestName ? html` <span class="ok" title="best trial">★</span>` : null}</td>
      <td><span class=${stateClass(vals.state)} data-testid="trial-state">${vals.state === "EarlyStopped" ? "early stopped" : vals.state}</span></td>
      ${params.map((p) => html`<td class="num">${formatNumber(vals[`p:${p.name}`])}</td>`)}
      <td class="num" data-testid="trial-objective"><b>${formatNumber(vals.objective)}</b></td>
      ${metrics.slice(1).map((m) => html`<td class="num">${formatNumber(vals[`m:${m}`])}</td>`)}
    </tr>`)}</tbody></table></div>`;
}

function BestSoFar({ trials, metricName, strategy, maximize }) {
  const data = useMemo(() => {
    const xs = [], ys = [], best = [];
    let b = null;
    trials.forEach((t, i) => {
      const v = trialMetric(t, metricName, strategy);
      if (v !== null) b = b === null ? v : maximize ? Math.max(b, v) : Math.min(b, v);
      xs.push(i + 1); ys.push(v); best.push(b);
    });
    return [xs, ys, best];
  }, [trials, metricName]);
  if (!trials.length) return html`<p class="muted">No trials yet.</p>`;
  return html`<${Chart} testid="best-so-far-chart" xLabel="trial" height=${260}
    series=${[{ label: metricName, points: "only", stroke: "#94a3b8" }, { label: "best so far", stroke: "#16a34a", width: 2 }]} data=${data} />`;
}

// Each trial's curve of one metric, from its observation log (polled every
// 2 s while the trial runs; a finished trial's log is fetched once).
function TrialCurves({ trials, ns, metrics }) {
  const [metric, setMetric] = useState(metrics[0]);
  const [axis, setAxis] = useState("step");
  const [logs, setLogs] = useState({});
  const done = useRef(new Set());
  const trialsRef = useRef(trials);
  trialsRef.current = trials;
  useEffect(() => {
    let stop = false;
    let timer = null;
    const tick = async () => {
      const todo = trialsRef.current.filter((t) => !done.current.has(t.metadata.name));
      const updates = {};
      // A few at a time, leaving connections for the rest of the page.
      for (let i = 0; i < todo.length && !stop; i += 2) {
        await Promise.all(todo.slice(i, i + 2).map(async (t) => {
          const finished = isFinished(stateOf(t));
          try {
            updates[t.metadata.name] = await get(seriesPath(objectPath(TRIAL, ns, t.metadata.name)));
            if (finished) done.current.add(t.metadata.name);
          } catch { /* retried next tick */ }
        }));
      }
      if (!stop && Object.keys(updates).length) setLogs((l) => ({ ...l, ...updates }));
      if (!stop) timer = setTimeout(tick, 2000);
    };
    tick();
    return () => { stop = true; clearTimeout(timer); };
  }, [ns]);
  const shown = trials.filter((t) => logs[t.metadata.name]);
  const data = useMemo(() => align(shown.map((t) => (seriesOf(logs[t.metadata.name])[metric] || []).map((p) => [axis === "step" ? p.step : p.t, p.v]))), [logs, metric, axis, shown.length]);
  return html`<div data-testid="trial-curves">
    <div class="toolbar small"><h2 style="margin:0">Trial curves</h2>
      <select data-testid="curve-metric" value=${metric} onChange=${(e) => setMetric(e.target.value)}>${metrics.map((m) => html`<option value=${m}>${m}</option>`)}</select>
      x-axis <${XAxisSwitch} axis=${axis} setAxis=${setAxis} /></div>
    ${shown.length ? html`<${Chart} testid="trial-curves-chart" time=${axis === "time"} height=${300}
      series=${shown.map((t, i) => ({ label: t.metadata.name, stroke: color(i) }))} data=${data} />` : html`<p class="muted">No metrics yet.</p>`}
  </div>`;
}
