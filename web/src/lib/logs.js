// A pod container's log: fetched once or followed, the previous run on
// request, filtered by a search box. Keeps the last MAX_LINES lines.
import { useEffect, useRef, useState } from "preact/hooks";
import { html } from "./util.js";
import { streamText, withQuery } from "./api.js";

const MAX_LINES = 5000;

export function LogViewer({ ns, pod, container, running, restartCount, phase }) {
  const [follow, setFollow] = useState(true);
  const [previous, setPrevious] = useState(false);
  const [search, setSearch] = useState("");
  const [text, setText] = useState("");
  const [status, setStatus] = useState("");
  const pre = useRef(null);
  const stick = useRef(true);

  useEffect(() => {
    if (!pod) return undefined;
    const ctl = new AbortController();
    let buf = "";
    let timer = null;
    const flush = () => { timer = null; setText(buf); };
    const following = follow && !previous && running;
    setText("");
    setStatus(following ? "following" : "loading");
    const path = withQuery(`/api/v1/namespaces/${encodeURIComponent(ns)}/pods/${encodeURIComponent(pod)}/log`, {
      container, follow: following ? "true" : "", previous: previous ? "true" : "", tailLines: MAX_LINES,
    });
    streamText(path, {
      signal: ctl.signal,
      onText(chunk) {
        buf += chunk;
        if (buf.length > 2_000_000) {
          const lines = buf.split("\n");
          buf = lines.slice(-MAX_LINES).join("\n");
        }
        if (!timer) timer = setTimeout(flush, 100);
      },
    }).then(() => {
      clearTimeout(timer); flush();
      setStatus(following ? "stream ended" : "");
    }).catch((e) => {
      if (ctl.signal.aborted) return;
      clearTimeout(timer); flush();
      setStatus(`error: ${e.message}`);
    });
    return () => { ctl.abort(); clearTimeout(timer); };
  }, [ns, pod, container, follow, previous, running, restartCount, phase]);

  // Keep the view at the bottom while following, unless scrolled up.
  useEffect(() => {
    const el = pre.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [text]);
  const onScroll = () => {
    const el = pre.current;
    stick.current = el.scrollTop + el.clientHeight >= el.scrollHeight - 20;
  };

  const q = search.trim().toLowerCase();
  let lines = text.split("\n");
  if (lines.length && lines[lines.length - 1] === "") lines.pop();
  const total = lines.length;
  if (q) lines = lines.filter((l) => l.toLowerCase().includes(q));
  return html`<div class="logs" data-testid="logs">
    <div class="toolbar small">
      <label class="check"><input type="checkbox" data-testid="log-follow" checked=${follow} onChange=${(e) => setFollow(e.target.checked)} /> follow</label>
      <label class="check"><input type="checkbox" data-testid="log-previous" checked=${previous} onChange=${(e) => setPrevious(e.target.checked)} /> previous run</label>
      <input type="search" data-testid="log-search" placeholder="search…" value=${search} onInput=${(e) => setSearch(e.target.value)} />
      <span class="muted" data-testid="log-status">${q ? `${lines.length} of ${total} lines` : `${total} lines`}${status ? ` · ${status}` : ""}</span>
    </div>
    <pre ref=${pre} onScroll=${onScroll} data-testid="log-text">${q ? lines.map((l) => html`${highlight(l, q)}\n`) : text}</pre>
  </div>`;
}

function highlight(line, q) {
  const i = line.toLowerCase().indexOf(q);
  if (i < 0) return line;
  return html`${line.slice(0, i)}<mark>${line.slice(i, i + q.length)}</mark>${line.slice(i + q.length)}`;
}
