// Small helpers shared by the pages: the html tag, times, formatting.
import { h } from "preact";
import htm from "htm";

export const html = htm.bind(h);

export const ts = (s) => (s ? Date.parse(s) : NaN);

export function formatDuration(ms) {
  if (!isFinite(ms) || ms < 0) return "";
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${s % 60 ? `${s % 60}s` : ""}`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${m % 60 ? `${m % 60}m` : ""}`;
  return `${Math.floor(h / 24)}d${h % 24 ? `${h % 24}h` : ""}`;
}
export const age = (s, now = Date.now()) => formatDuration(now - ts(s));
export function formatTime(s) {
  const t = ts(s);
  if (!isFinite(t)) return "";
  const d = new Date(t);
  return d.toLocaleString(undefined, { hour12: false });
}

export function formatNumber(v) {
  if (v === undefined || v === null || v === "") return "";
  const n = Number(v);
  if (!isFinite(n)) return String(v);
  if (Number.isInteger(n)) return String(n);
  const a = Math.abs(n);
  if (a !== 0 && (a < 1e-3 || a >= 1e6)) return n.toExponential(3);
  return String(Number(n.toPrecision(4)));
}

export const keyOf = (obj) => `${obj.metadata.namespace || ""}/${obj.metadata.name}`;

export function jobHref(kind, ns, name) { return `#/jobs/${kind}/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`; }
export function optimizationHref(ns, name) { return `#/optimizationjobs/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`; }
export function experimentHref(ns, name) { return `#/experiments/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`; }

// A YAML rendering of a JSON value, for showing manifests.
export function toYaml(value, indent = "") {
  const scalar = (v) => {
    if (v === null || v === undefined) return "null";
    if (typeof v === "string") {
      if (v === "" || /^[\s?:,\[\]{}#&*!|>'"%@`]|^-( |$)|[:#]\s|:$|\s$|\n|^(true|false|null|yes|no|on|off|~)$/i.test(v) || /^[-+]?[\d.]+(e[-+]?\d+)?$/i.test(v)) return JSON.stringify(v);
      return v;
    }
    return String(v);
  };
  if (Array.isArray(value)) {
    if (!value.length) return "[]";
    return value.map((v) => {
      if (v && typeof v === "object" && !(Array.isArray(v) && !v.length) && !(!Array.isArray(v) && !Object.keys(v).length)) {
        const inner = toYaml(v, indent + "  ");
        return `${indent}- ${inner.slice(indent.length + 2)}`;
      }
      return `${indent}- ${scalarOrEmpty(v, scalar)}`;
    }).join("\n");
  }
  if (value && typeof value === "object") {
    const keys = Object.keys(value);
    if (!keys.length) return "{}";
    return keys.map((k) => {
      const v = value[k];
      const key = scalar(k);
      if (v && typeof v === "object" && (Array.isArray(v) ? v.length : Object.keys(v).length)) {
        return `${indent}${key}:\n${toYaml(v, Array.isArray(v) ? indent : indent + "  ")}`;
      }
      return `${indent}${key}: ${scalarOrEmpty(v, scalar)}`;
    }).join("\n");
  }
  return indent + scalar(value);
}
function scalarOrEmpty(v, scalar) {
  if (Array.isArray(v)) return "[]";
  if (v && typeof v === "object") return "{}";
  return scalar(v);
}

// The state's CSS class.
export const stateClass = (s) => `state state-${String(s || "").toLowerCase()}`;
