// Preact hooks over the API: live lists (list + watch), one live object,
// polling, and the current time for ages.
import { useEffect, useRef, useState } from "preact/hooks";
import { watchList, get } from "./api.js";
import { keyOf } from "./util.js";

// A live list of `path`, as a Map key -> object, re-rendered at most every
// `throttleMs` however fast the watch runs. `path` null: nothing.
export function useWatchedList(path, params = {}, throttleMs = 250) {
  const map = useRef(new Map());
  const [state, setState] = useState({ version: 0, synced: false, error: null });
  const paramsKey = JSON.stringify(params);
  useEffect(() => {
    map.current = new Map();
    setState({ version: 0, synced: false, error: null });
    if (!path) return undefined;
    const ctl = new AbortController();
    let pending = null;
    let synced = false;
    const bump = (error = null) => {
      if (pending) return;
      pending = setTimeout(() => {
        pending = null;
        if (!ctl.signal.aborted) setState((s) => ({ version: s.version + 1, synced, error }));
      }, throttleMs);
    };
    watchList(path, {
      params,
      signal: ctl.signal,
      onSync(items, partial) {
        const m = new Map();
        for (const it of items) m.set(keyOf(it), it);
        map.current = m;
        synced = !partial;
        bump();
      },
      onEvent(type, obj) {
        if (type === "DELETED") map.current.delete(keyOf(obj));
        else map.current.set(keyOf(obj), obj);
        bump();
      },
      onError(err) { bump(err); },
    });
    return () => { ctl.abort(); clearTimeout(pending); };
  }, [path, paramsKey]);
  return { items: map.current, ...state };
}

// One live object at `path` (".../NAME"): watches its collection with a
// metadata.name field selector.
export function useWatchedObject(collectionPath, name) {
  const r = useWatchedList(collectionPath, { fieldSelector: `metadata.name=${name}` }, 50);
  let obj = null;
  for (const o of r.items.values()) if (o.metadata.name === name) obj = o;
  return { obj, synced: r.synced, error: r.error, version: r.version };
}

// Calls fetcher every `ms` while `active`; returns its last value.
export function usePoll(path, ms, active, deps = []) {
  const [value, setValue] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    if (!path) return undefined;
    let stop = false;
    let timer = null;
    const tick = async () => {
      try {
        const v = await get(path);
        if (!stop) { setValue(v); setError(null); }
      } catch (e) { if (!stop) setError(e); }
      if (!stop && active) timer = setTimeout(tick, ms);
    };
    tick();
    return () => { stop = true; clearTimeout(timer); };
  }, [path, ms, active, ...deps]);
  return { value, error };
}

// The time now, refreshed every `ms`.
export function useNow(ms = 1000) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}
