// Metric logs as per-metric series, and charts of them. The server sends
// them drawn to size (`observations?series=true`): each metric's values by
// step, a long one cut into buckets that keep their lowest and highest
// value; a range dragged over a chart is asked for again in full detail.
import { useEffect, useMemo, useState } from "preact/hooks";
import { get, withQuery } from "./api.js";
import { html } from "./util.js";
import { Chart, align } from "./chart.js";

// How many points a chart asks for: about one per pixel of its width.
export const POINTS = 1000;

// The observations URL of a job or trial, as series.
export function seriesPath(objectPath, extra = {}) {
  return withQuery(`${objectPath}/observations`, { series: "true", points: POINTS, ...extra });
}

// {name: [{step, t, v, lo, hi}]} from a MetricSeries answer: v is the
// bucket's last value, lo and hi its lowest and highest; a metric not
// downsampled has lo == hi == v.
export function seriesOf(answer) {
  const out = {};
  for (const s of answer?.series || []) {
    out[s.name] = s.step.map((step, i) => ({ step, t: s.time[i], v: s.value?.[i] ?? s.max[i], lo: s.min[i], hi: s.max[i] }));
  }
  return out;
}

const downsampled = (pts) => pts.some((p) => p.lo !== p.hi);

export function XAxisSwitch({ axis, setAxis }) {
  return html`<span class="segmented" data-testid="x-axis">
    <button class=${axis === "step" ? "on" : ""} data-testid="x-step" onClick=${() => setAxis("step")}>step</button>
    <button class=${axis === "time" ? "on" : ""} data-testid="x-time" onClick=${() => setAxis("time")}>time</button>
  </span>`;
}

// One metric's chart; a dragged range of steps is fetched again in full
// detail (double-click: back to the whole run).
function MetricChart({ name, points, axis, objectPath }) {
  const [zoom, setZoom] = useState(null);  // {from, to} in steps
  const [detail, setDetail] = useState(null);
  useEffect(() => {
    if (!zoom) { setDetail(null); return undefined; }
    let stop = false;
    get(seriesPath(objectPath, { metric: name, fromStep: Math.floor(zoom.from), toStep: Math.ceil(zoom.to) }))
      .then((a) => { if (!stop) setDetail(seriesOf(a)[name] || []); })
      .catch(() => {});
    return () => { stop = true; };
  }, [zoom?.from, zoom?.to, objectPath, name]);
  const pts = detail || points;
  const both = downsampled(pts);
  // Made again only when the values change: the page re-renders every
  // second (ages), and new data would redraw every chart.
  const data = useMemo(() => {
    const x = (p) => (axis === "step" ? p.step : p.t);
    return align(both ? [pts.map((p) => [x(p), p.hi]), pts.map((p) => [x(p), p.lo])] : [pts.map((p) => [x(p), p.v])]);
  }, [pts, axis, both]);
  const series = both ? [{ label: `${name} (max)` }, { label: `${name} (min)` }] : [{ label: name }];
  // Zooming reads steps: on a time axis, a drag only zooms the view.
  const onZoom = axis === "step" ? (from, to) => setZoom(from === null ? null : { from, to }) : undefined;
  return html`<div class="chart-card" data-testid="metric-chart" data-metric=${name} data-zoomed=${zoom ? "true" : "false"}>
    <${Chart} title=${name} series=${series} data=${data} time=${axis === "time"} height=${200} testid=${`chart-${name}`} onZoom=${onZoom} />
  </div>`;
}

// One chart per metric of a job's or trial's series (`answer`, as fetched
// from seriesPath(objectPath)).
export function MetricCharts({ answer, objectPath }) {
  const [axis, setAxis] = useState("step");
  const series = useMemo(() => seriesOf(answer), [answer]);
  const names = Object.keys(series);
  if (!names.length) return html`<p class="muted" data-testid="no-metrics">No metrics yet.</p>`;
  return html`<div>
    <div class="toolbar small">x-axis <${XAxisSwitch} axis=${axis} setAxis=${setAxis} />
      <span class="muted">drag over a chart to look closer; double-click to see it all</span></div>
    <div class="charts">${names.map((name) => html`<${MetricChart} key=${`${name}-${axis}`} name=${name} points=${series[name]} axis=${axis} objectPath=${objectPath} />`)}</div>
  </div>`;
}
