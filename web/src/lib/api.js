// The API client: fetch with the bearer token, paged lists that follow
// metadata.continue, and watches that re-list and re-watch on their own.
const TOKEN_KEY = "trainyard.token";

export function token() {
  try { return localStorage.getItem(TOKEN_KEY) || ""; } catch { return ""; }
}
export function setToken(t) {
  if (t) localStorage.setItem(TOKEN_KEY, t); else localStorage.removeItem(TOKEN_KEY);
}

// Listeners told when the API answers 401 (the shell shows the token form).
const authListeners = new Set();
export function onAuthRequired(fn) { authListeners.add(fn); return () => authListeners.delete(fn); }

export class ApiError extends Error {
  constructor(status, body) {
    const message = (body && body.message) || `HTTP ${status}`;
    super(message);
    this.status = status;
    this.body = body;
  }
}

export async function request(path, { method = "GET", body, contentType, signal, raw = false } = {}) {
  const headers = {};
  const t = token();
  if (t) headers["Authorization"] = `Bearer ${t}`;
  if (contentType) headers["Content-Type"] = contentType;
  else if (body !== undefined && typeof body !== "string") headers["Content-Type"] = "application/json";
  const res = await fetch(path, {
    method, headers, signal,
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  if (res.status === 401) authListeners.forEach((fn) => fn());
  if (raw) return res;
  const text = await res.text();
  let parsed = null;
  try { parsed = text ? JSON.parse(text) : null; } catch { parsed = { message: text }; }
  if (!res.ok) throw new ApiError(res.status, parsed);
  return parsed;
}

export const get = (path, opts) => request(path, opts);

export function withQuery(path, params) {
  const q = Object.entries(params || {})
    .filter(([, v]) => v !== undefined && v !== null && v !== "")
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join("&");
  if (!q) return path;
  return path + (path.includes("?") ? "&" : "?") + q;
}

// Every item of a list, page by page (limit/continue); a server that
// ignores limit answers everything at once with no continue token.
// onPage(itemsSoFar) after each page but the last, to show them early.
export async function listAll(path, { params = {}, signal, limit = 500, onPage } = {}) {
  let items = [];
  let cont = "";
  let resourceVersion = "";
  for (;;) {
    const page = await get(withQuery(path, { ...params, limit, continue: cont }), { signal });
    items = items.concat(page.items || []);
    resourceVersion = page.metadata?.resourceVersion || resourceVersion;
    cont = page.metadata?.continue || "";
    if (!cont) break;
    onPage?.(items);
  }
  return { items, resourceVersion };
}

// Resolves after `ms`, or at once when `signal` aborts; its listener goes
// with it either way (a watch's signal lives as long as its page).
const sleep = (ms, signal) => new Promise((resolve) => {
  const on = () => { clearTimeout(t); resolve(); };
  const t = setTimeout(() => { signal?.removeEventListener("abort", on); resolve(); }, ms);
  signal?.addEventListener("abort", on, { once: true });
});

// A browser keeps at most 6 HTTP/1.1 connections to a server, and a watch
// holds one for as long as it runs. So at most STREAM_SLOTS watches stream
// at once; the others poll: a short watch from their resourceVersion that
// reads what is there and hangs up, every POLL_MS.
const STREAM_SLOTS = 3;
const POLL_MS = 2000;
const RELIST_MS = 5000;
let freeSlots = STREAM_SLOTS;
export const watchStats = { streaming: 0, polling: 0 };

// Lists `path` then watches it, until `signal` aborts:
//   onSync(items, partial)  the full list (first, and after each re-list);
//                       partial: the pages so far of a long list
//   onEvent(type, obj)  ADDED/MODIFIED/DELETED from the watch
//   onError(err)        a failed list or watch (it retries with backoff)
// A stream that ends cleanly is re-watched from the last resourceVersion;
// a 410 Gone, an ERROR event or a failure re-lists after a backoff. An empty
// list starts polling rather than taking a stream slot.
export function watchList(path, { params = {}, onSync, onEvent, onError, signal }) {
  (async () => {
    let backoff = 500;
    let rv = "";
    let needList = true;
    let empty = false;
    while (!signal.aborted) {
      let slot = false;
      try {
        if (needList) {
          const list = await listAll(path, { params, signal, onPage: (items) => onSync(items, true) });
          if (signal.aborted) return;
          rv = list.resourceVersion;
          empty = list.items.length === 0;
          onSync(list.items);
          needList = false;
        }
        if (!empty && freeSlots > 0) { freeSlots--; slot = true; }
        const wasEmpty = empty;
        const result = await watchOnce(path, params, rv, slot, signal, (type, obj) => {
          empty = false;
          onEvent(type, obj);
        });
        if (result.unwatchable) {
          // A kind served without watch: re-list it every RELIST_MS instead.
          if (slot) { freeSlots++; slot = false; }
          needList = true;
          await sleep(RELIST_MS, signal);
          continue;
        }
        if (result.rv) rv = result.rv;
        if (result.gone) {
          // Gone again and again: each re-list waits longer.
          needList = true;
          await sleep(backoff, signal);
          backoff = Math.min(backoff * 2, 15000);
          continue;
        }
        // A stream that ended at once with nothing (a proxy closing it, say)
        // waits before the next, rather than spinning.
        if (slot && result.quick) {
          await sleep(backoff, signal);
          backoff = Math.min(backoff * 2, 15000);
        } else {
          backoff = 500;
          // A poll that found the list no longer empty streams at once, if it can.
          if (!slot && !(wasEmpty && !empty && freeSlots > 0)) await sleep(POLL_MS, signal);
        }
      } catch (err) {
        if (signal.aborted) return;
        onError?.(err);
        // The list is still good: a watch that failed (the server busy, a
        // stream limit) resumes from where it was; a failed list is retried.
        if (!rv) needList = true;
        if (slot) { freeSlots++; slot = false; }
        await sleep(backoff, signal);
        backoff = Math.min(backoff * 2, 15000);
      } finally {
        if (slot) freeSlots++;
      }
    }
  })();
}

// One watch request from `rv`: a stream held until the server ends it
// (`long`), or a short one that hangs up once the backlog has arrived.
async function watchOnce(path, params, rv, long, signal, onEvent) {
  const ctl = new AbortController();
  const abort = () => ctl.abort();
  signal.addEventListener("abort", abort, { once: true });
  let quiet = null;
  const hangUpWhenQuiet = () => {
    if (long) return;
    clearTimeout(quiet);
    quiet = setTimeout(() => ctl.abort(), 150);
  };
  (long ? watchStats.streaming++ : watchStats.polling++);
  let lastRv = "";
  let gone = false;
  const started = Date.now();
  try {
    const q = { ...params, watch: 1, resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds: long ? 240 : 2 };
    const res = await request(withQuery(path, q), { signal: ctl.signal, raw: true });
    if (res.status === 410) return { gone: true };
    if (res.status === 405) return { unwatchable: true };
    if (!res.ok) throw new ApiError(res.status, await res.json().catch(() => null));
    hangUpWhenQuiet();
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (!line) continue;
        const ev = JSON.parse(line);
        if (ev.type === "ERROR") { gone = true; break; }
        const newRv = ev.object?.metadata?.resourceVersion;
        if (newRv) lastRv = newRv;
        if (ev.type !== "BOOKMARK") onEvent(ev.type, ev.object);
      }
      if (gone) { reader.cancel().catch(() => {}); break; }
      hangUpWhenQuiet();
    }
  } catch (err) {
    // Our own hang-up of a short watch is no error.
    if (!(ctl.signal.aborted && !signal.aborted)) throw err;
  } finally {
    clearTimeout(quiet);
    signal.removeEventListener("abort", abort);
    (long ? watchStats.streaming-- : watchStats.polling--);
  }
  // A held stream that ended within a second with no event.
  return { rv: lastRv, gone, quick: long && !lastRv && Date.now() - started < 1000 };
}

// Streams a text body (logs) to onText until done or aborted.
export async function streamText(path, { signal, onText }) {
  const res = await request(path, { signal, raw: true });
  if (!res.ok) {
    const body = await res.json().catch(() => null);
    throw new ApiError(res.status, body);
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    onText(decoder.decode(value, { stream: true }));
  }
}

export const mergePatch = (path, patch) =>
  request(path, { method: "PATCH", body: JSON.stringify(patch), contentType: "application/merge-patch+json" });
export const del = (path) => request(path, { method: "DELETE" });

// Discovery: the APIResourceList of a group version, cached.
const discoveryCache = new Map();
export function resourcesOf(apiVersion) {
  if (!discoveryCache.has(apiVersion)) {
    const path = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    discoveryCache.set(apiVersion, get(path).catch((e) => { discoveryCache.delete(apiVersion); throw e; }));
  }
  return discoveryCache.get(apiVersion);
}

// The collection path of a kind in a namespace, from discovery.
// A DNS-1123 subdomain: what a namespace or name must be, checked before
// it goes into a path (a "/", "#" or ".." would send the request elsewhere).
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export function checkedName(what, value) {
  if (!DNS_SUBDOMAIN.test(value) || value.length > 253) {
    throw new Error(`${what} ${JSON.stringify(value)} is not a valid name (lower-case letters, digits, '-' and '.')`);
  }
  return value;
}

export async function collectionPath(apiVersion, kind, namespace) {
  if (!/^([a-z0-9.-]+\/)?v[0-9a-z]+$/.test(apiVersion)) throw new Error(`apiVersion ${JSON.stringify(apiVersion)} is not one`);
  const list = await resourcesOf(apiVersion);
  const r = (list.resources || []).find((x) => x.kind === kind && !x.name.includes("/"));
  if (!r) throw new Error(`the server does not serve ${kind} in ${apiVersion}`);
  const base = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const ns = r.namespaced ? checkedName("namespace", namespace || "default") : "";
  return { path: r.namespaced ? `${base}/namespaces/${encodeURIComponent(ns)}/${r.name}` : `${base}/${r.name}`, namespaced: r.namespaced, plural: r.name };
}
