// The compare page: pick jobs and trials, overlay their metric curves and
// see where their parameters (a trial's assignments, a job's spec) differ.
import { useEffect, useMemo, useState } from "preact/hooks";
import { html, formatNumber, stateClass, jobHref } from "../lib/util.js";
import { get, listAll } from "../lib/api.js";
import { JOB_KINDS, TRIAL, kindInfo, collection, objectPath, stateOf, isFinished } from "../lib/kinds.js";
import { Chart, align, color } from "../lib/chart.js";
import { seriesOf, seriesPath, XAxisSwitch } from "../lib/metrics.js";

const parseItems = (q) => (q.get("items") || "").split(",").filter(Boolean).map((s) => {
  const [kind, ns, ...name] = s.split("/");
  return { kind, ns, name: name.join("/"), id: s };
}).filter((i) => kindInfo(i.kind) && i.ns && i.name);

function setItems(items) {
  location.hash = `#/compare?items=${items.map((i) => i.id).join(",")}`;
}

// Everything that could be compared, for the picker (fetched once).
function useCandidates(ns) {
  const [all, setAll] = useState([]);
  useEffect(() => {
    let stop = false;
    Promise.all([...JOB_KINDS, TRIAL].map((k) => listAll(collection(k, ns)).then((l) => l.items).catch(() => [])))
      .then((lists) => { if (!stop) setAll(lists.flat()); });
    return () => { stop = true; };
  }, [ns]);
  return all;
}

// The objects and observation logs of the items, polled while they run.
function useItemData(items) {
  const [data, setData] = useState({});
  const key = items.map((i) => i.id).join(",");
  useEffect(() => {
    let stop = false;
    let timer = null;
    const finished = new Set();
    const tick = async () => {
      const updates = {};
      for (const it of items) {
        if (finished.has(it.id)) continue;
        const path = objectPath(kindInfo(it.kind), it.ns, it.name);
        try {
          const [obj, log] = await Promise.all([get(path), get(seriesPath(path)).catch(() => null)]);
          updates[it.id] = { obj, log };
          if (isFinished(stateOf(obj))) finished.add(it.id);
        } catch (e) { updates[it.id] = { error: e.message }; finished.add(it.id); }
      }
      if (stop) return;
      if (Object.keys(updates).length) setData((d) => ({ ...d, ...updates }));
      if (finished.size < items.length) timer = setTimeout(tick, 2000);
    };
    tick();
    return () => { stop = true; clearTimeout(timer); };
  }, [key]);
  return data;
}

// "a.b[0].c" -> value, for every leaf of a job's spec.
function flatten(value, prefix = "", out = {}) {
  if (Array.isArray(value)) {
    if (!value.length) out[prefix] = "[]";
    value.forEach((v, i) => flatten(v, `${prefix}[${i}]`, out));
  } else if (value && typeof value === "object") {
    const keys = Object.keys(value);
    if (!keys.length && prefix) out[prefix] = "{}";
    for (const k of keys) flatten(value[k], prefix ? `${prefix}.${k}` : k, out);
  } else if (prefix) out[prefix] = value === null ? "null" : String(value);
  return out;
}
function paramsOf(obj) {
  if (!obj) return {};
  if (obj.kind === "Trial") return Object.fromEntries((obj.spec?.parameterAssignments || []).map((p) => [p.name, p.value]));
  return flatten(obj.spec || {});
}

export function ComparePage({ ns, query }) {
  const items = parseItems(query);
  const candidates = useCandidates(ns);
  const data = useItemData(items);
  const [search, setSearch] = useState("");
  const [axis, setAxis] = useState("step");
  const [metric, setMetric] = useState("");
  const [showAll, setShowAll] = useState(false);

  const chosen = new Set(items.map((i) => i.id));
  const q = search.trim().toLowerCase();
  const matches = q ? candidates.filter((o) => o.metadata.name.toLowerCase().includes(q) && !chosen.has(`${o.kind}/${o.metadata.namespace}/${o.metadata.name}`)).slice(0, 15) : [];

  const series = items.map((it) => seriesOf(data[it.id]?.log));
  const metrics = [...new Set(series.flatMap((s) => Object.keys(s)))];
  const current = metrics.includes(metric) ? metric : metrics[0] || "";
  const chartData = useMemo(() => align(series.map((s) => (s[current] || []).map((p) => [axis === "step" ? p.step : p.t, p.v]))), [data, current, axis, items.length]);

  const params = items.map((it) => paramsOf(data[it.id]?.obj));
  const keys = [...new Set(params.flatMap((p) => Object.keys(p)))].sort();
  const differing = keys.filter((k) => new Set(params.map((p) => p[k] ?? "")).size > 1);
  const shownKeys = showAll ? keys : differing;

  return html`<section id="compare-page" data-testid="compare-page">
    <div class="toolbar"><h1>Compare</h1>
      <input type="search" data-testid="compare-search" placeholder="add a job or trial by name…" value=${search} onInput=${(e) => setSearch(e.target.value)} />
      ${items.length ? html`<button class="link" onClick=${() => setItems([])}>clear</button>` : null}
    </div>
    ${matches.length ? html`<ul class="picker">${matches.map((o) => {
      const id = `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`;
      return html`<li><button class="link" data-testid="compare-add" onClick=${() => { setItems([...items, { id }]); setSearch(""); }}>+ ${o.kind} ${o.metadata.namespace}/${o.metadata.name}</button> <span class=${stateClass(stateOf(o))}>${stateOf(o)}</span></li>`;
    })}</ul>` : null}
    ${!items.length ? html`<p class="muted">Pick jobs or trials to compare (an experiment's page links its trials here).</p>` : html`
      <table class="grid" data-testid="compare-items">
        <thead><tr><th></th><th>Kind</th><th>Name</th><th>State</th>${metrics.map((m) => html`<th>${m} (last)</th>`)}<th></th></tr></thead>
        <tbody>${items.map((it, i) => {
          const d = data[it.id];
          return html`<tr data-testid="compare-item" data-id=${it.id}>
            <td><span class="swatch" style=${`background:${color(i)}`}></span></td>
            <td>${it.kind}</td><td><a href=${jobHref(it.kind, it.ns, it.name)}>${it.ns}/${it.name}</a></td>
            <td>${d?.error ? html`<span class="warn">${d.error}</span>` : d?.obj ? html`<span class=${stateClass(stateOf(d.obj))}>${stateOf(d.obj)}</span>` : "…"}</td>
            ${metrics.map((m) => html`<td class="num">${formatNumber(series[i][m]?.at(-1)?.v)}</td>`)}
            <td><button class="link" onClick=${() => setItems(items.filter((x) => x.id !== it.id))}>remove</button></td>
          </tr>`;
        })}</tbody>
      </table>
      <div class="panel" style="margin-top:12px">
        <div class="toolbar small"><h2 style="margin:0">Curves</h2>
          <select data-testid="compare-metric" value=${current} onChange=${(e) => setMetric(e.target.value)}>${metrics.map((m) => html`<option value=${m}>${m}</option>`)}</select>
          x-axis <${XAxisSwitch} axis=${axis} setAxis=${setAxis} /></div>
        ${current ? html`<${Chart} testid="compare-chart" time=${axis === "time"} height=${300}
          series=${items.map((it, i) => ({ label: it.name, stroke: color(i) }))} data=${chartData} />` : html`<p class="muted">No metrics.</p>`}
      </div>
      <h2>Parameters</h2>
      <div class="toolbar small"><label class="check"><input type="checkbox" checked=${showAll} onChange=${(e) => setShowAll(e.target.checked)} /> show equal ones too</label>
        <span class="muted">${differing.length} of ${keys.length} differ</span></div>
      <div style="overflow:auto"><table class="grid" data-testid="compare-params">
        <thead><tr><th>parameter</th>${items.map((it) => html`<th>${it.name}</th>`)}</tr></thead>
        <tbody>${shownKeys.map((k) => html`<tr class=${differing.includes(k) ? "diff" : ""} data-testid="param-row" data-param=${k}>
          <td><code>${k}</code></td>${params.map((p) => html`<td>${p[k] ?? html`<span class="muted">—</span>`}</td>`)}</tr>`)}</tbody>
      </table></div>`}
  </section>`;
}
