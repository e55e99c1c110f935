// Observation logs (metricLogs) as per-metric series, and charts of them.
import { useState } from "preact/hooks";
import { html } from "./util.js";
import { Chart, align } from "./chart.js";

// {name: [{step, t, v}]}: step is the value's index among its metric's values.
export function seriesOf(log) {
  const out = {};
  for (const m of log?.metricLogs || []) {
    const name = m.metric?.name;
    const v = Number(m.metric?.value);
    if (!name || !isFinite(v)) continue;
    (out[name] ||= []).push({ step: out[name].length, t: Date.parse(m.timeStamp) / 1000, v });
  }
  return out;
}

export function XAxisSwitch({ axis, setAxis }) {
  return html`<span class="segmented" data-testid="x-axis">
    <button class=${axis === "step" ? "on" : ""} data-testid="x-step" onClick=${() => setAxis("step")}>step</button>
    <button class=${axis === "time" ? "on" : ""} data-testid="x-time" onClick=${() => setAxis("time")}>time</button>
  </span>`;
}

// One chart per metric of one observation log.
export function MetricCharts({ log }) {
  const [axis, setAxis] = useState("step");
  const series = seriesOf(log);
  const names = Object.keys(series);
  if (!names.length) return html`<p class="muted" data-testid="no-metrics">No metrics yet.</p>`;
  return html`<div>
    <div class="toolbar small">x-axis <${XAxisSwitch} axis=${axis} setAxis=${setAxis} /></div>
    <div class="charts">${names.map((name) => {
      const pts = series[name];
      const data = align([pts.map((p) => [axis === "step" ? p.step : p.t, p.v])]);
      return html`<div class="chart-card" key=${name} data-testid="metric-chart" data-metric=${name}>
        <${Chart} title=${name} series=${[{ label: name }]} data=${data} time=${axis === "time"} height=${200} testid=${`chart-${name}`} />
      </div>`;
    })}</div>
  </div>`;
}
