// A job's artifacts: what its replicas wrote to $TRAINYARD_OUTPUT_DIR,
// listed (polled while it runs) and downloaded with the signed-in token
// (a plain link could not carry it).
import { useState } from "preact/hooks";
import { html, formatTime } from "./util.js";
import { usePoll } from "./hooks.js";
import { request, withQuery } from "./api.js";

export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  return `${v.toFixed(1)} ${units[u]}`;
}

async function download(listPath, file) {
  const res = await request(withQuery(listPath, { path: file }), { raw: true });
  if (!res.ok) {
    let message = `HTTP ${res.status}`;
    try { message = (await res.json()).message || message; } catch { /* not JSON */ }
    throw new Error(message);
  }
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement("a");
  a.href = url;
  a.download = file.split("/").pop();
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function Artifacts({ path, finished }) {
  const listPath = `${path}/artifacts`;
  const { value, error } = usePoll(listPath, 3000, !finished, [finished]);
  const [failed, setFailed] = useState(null);
  if (error && !value) return html`<p class="muted" data-testid="no-artifacts">Artifacts unavailable: ${error.message}</p>`;
  if (!value) return html`<p class="muted">loading…</p>`;
  const items = value.items || [];
  if (!items.length) {
    return html`<p class="muted" data-testid="no-artifacts">None yet: files its replicas write to <code>$TRAINYARD_OUTPUT_DIR</code> (or log with <code>mlflow.log_artifact</code>) show here.</p>`;
  }
  const fetchFile = (file) => download(listPath, file).then(() => setFailed(null), (e) => setFailed(`${file}: ${e.message}`));
  return html`<div>
    ${failed ? html`<div class="error">${failed}</div>` : null}
    <table class="grid" data-testid="artifacts-table">
      <thead><tr><th>Path</th><th>Size</th><th>Modified</th><th></th></tr></thead>
      <tbody>${items.map((a) => html`<tr key=${a.path} data-testid="artifact-row" data-path=${a.path}>
        <td><code>${a.path}</code></td><td class="num">${formatBytes(a.size)}</td><td>${formatTime(a.modified)}</td>
        <td><button class="small" data-testid="artifact-download" onClick=${() => fetchFile(a.path)}>Download</button></td>
      </tr>`)}</tbody>
    </table>
    ${value.truncated ? html`<p class="muted">The first ${items.length} alone: there are more.</p>` : null}
  </div>`;
}
