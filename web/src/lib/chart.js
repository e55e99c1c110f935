// uPlot wrapped for Preact: a chart that keeps its uPlot instance and feeds
// it new data, re-creating it only when its series change.
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import { html } from "./util.js";

export const PALETTE = ["#2563eb", "#dc2626", "#16a34a", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#65a30d", "#ea580c", "#4f46e5", "#0d9488", "#9333ea"];
const INT_INCRS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 1e6];
export const color = (i) => PALETTE[i % PALETTE.length];

// series: [{label, stroke?, points?, width?}] for data[1..]; data: [xs, ys...]
// onZoom(from, to): the x range the user dragged over; (null, null) when a
// double-click asks for the whole again.
export function Chart({ title, series, data, time = false, height = 220, testid, xLabel, yLabel, logY = false, onZoom }) {
  const box = useRef(null);
  const plot = useRef(null);
  const zoomed = useRef(onZoom);
  zoomed.current = onZoom;
  // A range the user dragged over stays in view when new data comes (a
  // running job's next poll), until a double-click.
  const userZoomed = useRef(false);
  const shape = JSON.stringify([series.map((s) => [s.label, s.stroke, !!s.points]), time, height, logY, xLabel]);
  useEffect(() => {
    const el = box.current;
    const width = Math.max(300, el.clientWidth || 600);
    const opts = {
      width, height,
      title,
      // One point alone gets a small range around it, not uPlot's default.
      scales: { x: { time, range: singleRange }, y: logY ? { distr: 3 } : {} },
      axes: [time ? { label: xLabel } : { label: xLabel, incrs: INT_INCRS }, { label: yLabel, size: 60 }],
      legend: { live: true },
      hooks: {
        setSelect: [(u) => {
          if (u.select.width < 2) return;
          userZoomed.current = true;
          zoomed.current?.(u.posToVal(u.select.left, "x"), u.posToVal(u.select.left + u.select.width, "x"));
        }],
      },
      series: [
        { label: xLabel || (time ? "time" : "step") },
        ...series.map((s, i) => ({
          label: s.label,
          stroke: s.stroke || color(i),
          width: s.width ?? 1.5,
          spanGaps: true,
          points: s.points ? { show: true, size: 6, fill: s.stroke || color(i) } : { size: 5 },
          paths: s.points === "only" ? () => null : undefined,
        })),
      ],
    };
    plot.current = new uPlot(opts, data, el);
    const ro = new ResizeObserver(() => {
      const w = Math.max(300, el.clientWidth);
      if (plot.current && Math.abs(plot.current.width - w) > 4) plot.current.setSize({ width: w, height });
    });
    ro.observe(el);
    const whole = () => { userZoomed.current = false; zoomed.current?.(null, null); };
    el.addEventListener("dblclick", whole);
    return () => { ro.disconnect(); el.removeEventListener("dblclick", whole); plot.current?.destroy(); plot.current = null; };
  }, [shape]);
  useEffect(() => { plot.current?.setData(data, !userZoomed.current); }, [data]);
  return html`<div class="chart" ref=${box} data-testid=${testid} data-series=${series.length} data-points=${data[0]?.length || 0} data-xmax=${data[0]?.length ? data[0][data[0].length - 1] : ""}></div>`;
}

// The x range: one x value alone gets a small range around it (uPlot's
// own is a day for time, 0..100 for steps).
function singleRange(u, min, max) {
  const xs = u.data[0] || [];
  if (xs.length && xs[0] === xs[xs.length - 1]) return [xs[0] - 1, xs[0] + 1];
  return [min, max];
}

// Aligns several (x, y) series onto one sorted x axis for uPlot.
export function align(seriesXY) {
  const xs = [...new Set(seriesXY.flatMap((s) => s.map((p) => p[0])))].sort((a, b) => a - b);
  const index = new Map(xs.map((x, i) => [x, i]));
  const ys = seriesXY.map((s) => {
    const col = new Array(xs.length).fill(null);
    for (const [x, y] of s) col[index.get(x)] = y;
    return col;
  });
  return [xs, ...ys];
}
