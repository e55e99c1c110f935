// Parallel coordinates in SVG: one axis per parameter plus the objective,
// one line per trial, coloured by its objective value (best: darkest).
import { html, formatNumber } from "./util.js";

// axes: [{name, type: "linear"|"log"|"category", values?: [..]}]
// rows: [{id, values: {axisName: value}, objective: number|null, highlight}]
export function ParallelCoordinates({ axes, rows, objectiveName, maximize, width = 1000, height = 320 }) {
  const pad = { l: 40, r: 60, t: 30, b: 24 };
  const n = axes.length;
  if (n < 2) return html`<p class="muted">Not enough axes.</p>`;
  const x = (i) => pad.l + (i * (width - pad.l - pad.r)) / (n - 1);
  const H = height - pad.t - pad.b;
  const scales = axes.map((a) => scaleOf(a, rows));
  const objs = rows.map((r) => r.objective).filter((v) => v !== null && isFinite(v));
  const lo = Math.min(...objs), hi = Math.max(...objs);
  const shade = (v) => {
    if (v === null || !isFinite(v) || hi === lo) return "rgba(37,99,235,.55)";
    let t = (v - lo) / (hi - lo);
    if (!maximize) t = 1 - t;
    // from light orange (worse) to deep blue (better)
    const c = (a, b) => Math.round(a + (b - a) * t);
    return `rgba(${c(251, 30)},${c(146, 64)},${c(60, 175)},${0.35 + 0.6 * t})`;
  };
  const lines = rows.map((r) => {
    const pts = axes.map((a, i) => {
      const v = a.name === objectiveName && a.objective ? r.objective : r.values[a.name];
      const y = scales[i](v);
      return y === null ? null : [x(i), pad.t + H * (1 - y)];
    });
    return { r, pts };
  });
  const path = (pts) => pts.reduce((d, p, i) => (p ? `${d}${d && pts[i - 1] ? "L" : "M"}${p[0].toFixed(1)},${p[1].toFixed(1)}` : d), "");
  return html`<svg viewBox=${`0 0 ${width} ${height}`} data-testid="parcoords-svg" data-lines=${rows.length} data-axes=${n}>
    ${lines.filter((l) => !l.r.highlight).map(({ r, pts }) => html`<path d=${path(pts)} fill="none" stroke=${shade(r.objective)} stroke-width="1.5" data-testid="parcoords-line" data-trial=${r.id}><title>${r.id}: ${formatNumber(r.objective)}</title></path>`)}
    ${lines.filter((l) => l.r.highlight).map(({ r, pts }) => html`<path d=${path(pts)} fill="none" stroke="#16a34a" stroke-width="3" data-testid="parcoords-line" data-trial=${r.id} data-best="true"><title>best: ${r.id}: ${formatNumber(r.objective)}</title></path>`)}
    ${axes.map((a, i) => html`<g>
      <line x1=${x(i)} x2=${x(i)} y1=${pad.t} y2=${pad.t + H} stroke="#475569" stroke-width="1" />
      <text class="axis-label" x=${x(i)} y=${pad.t - 12} text-anchor="middle">${a.name}</text>
      ${scales[i].ticks.map(([label, y]) => html`<text class="tick" x=${x(i) + 4} y=${pad.t + H * (1 - y) + 3}>${label}</text>`)}
    </g>`)}
  </svg>`;
}

// A function value -> [0,1] (or null), with .ticks [[label, pos]].
function scaleOf(axis, rows) {
  if (axis.type === "category") {
    const cats = axis.values?.length ? axis.values : [...new Set(rows.map((r) => String(r.values[axis.name])))].sort();
    const pos = (v) => { const i = cats.indexOf(String(v)); return i < 0 ? null : cats.length === 1 ? 0.5 : i / (cats.length - 1); };
    pos.ticks = cats.map((c) => [c, pos(c)]);
    return pos;
  }
  const vals = rows.map((r) => Number(axis.objective ? r.objective : r.values[axis.name])).filter((v) => isFinite(v) && (axis.type !== "log" || v > 0));
  let min = axis.min ?? Math.min(...vals), max = axis.max ?? Math.max(...vals);
  if (!vals.length && !(isFinite(min) && isFinite(max))) { min = 0; max = 1; }
  const log = axis.type === "log" && min > 0;
  const f = log ? Math.log : (v) => v;
  const a = f(min), b = f(max);
  const pos = (v) => {
    const n = Number(v);
    if (v === null || v === undefined || !isFinite(n) || (log && n <= 0)) return null;
    return b === a ? 0.5 : Math.min(1, Math.max(0, (f(n) - a) / (b - a)));
  };
  pos.ticks = [0, 0.5, 1].map((t) => {
    const v = log ? Math.exp(a + (b - a) * t) : a + (b - a) * t;
    return [formatNumber(v), t];
  });
  if (b === a) pos.ticks = [[formatNumber(min), 0.5]];
  return pos;
}
