// The submit page: paste or upload manifests, validate every document with
// a server-side dry run (errors shown at their field paths), then create.
import { useState } from "preact/hooks";
import { html, jobHref, experimentHref } from "../lib/util.js";
import { request, collectionPath, withQuery, ApiError } from "../lib/api.js";
import { splitDocuments } from "../lib/manifest.js";
import { JOB_KINDS } from "../lib/kinds.js";

async function post(doc, ns, dryRun) {
  if (doc.unsure) throw new Error(doc.unsure);
  const target = await collectionPath(doc.apiVersion, doc.kind, doc.namespace || ns);
  const path = withQuery(target.path, { dryRun: dryRun ? "All" : "", fieldValidation: "Strict" });
  const created = await request(path, { method: "POST", body: doc.text, contentType: doc.contentType });
  return { created, namespaced: target.namespaced };
}

function describeError(e) {
  if (e instanceof ApiError && e.body?.details?.causes?.length) {
    return { message: e.body.message, causes: e.body.details.causes };
  }
  return { message: e.message || String(e), causes: [] };
}

function linkOf(obj) {
  const { kind, metadata } = obj;
  if (JOB_KINDS.some((k) => k.kind === kind)) return jobHref(kind, metadata.namespace, metadata.name);
  if (kind === "Experiment") return experimentHref(metadata.namespace, metadata.name);
  if (kind === "Trial") return jobHref(kind, metadata.namespace, metadata.name);
  return "";
}

export function SubmitPage({ ns }) {
  const [text, setText] = useState("");
  const [results, setResults] = useState(null); // [{doc, ok, error?, created?}]
  const [validated, setValidated] = useState(null); // the text that passed
  const [busy, setBusy] = useState(false);
  const [phase, setPhase] = useState("");
  const namespace = ns || "default";

  const onFile = async (e) => {
    const f = e.target.files?.[0];
    if (!f) return;
    setText(await f.text());
    setResults(null); setValidated(null);
  };

  const run = async (dryRun) => {
    setBusy(true);
    setResults(null);
    setPhase(dryRun ? "validate" : "create");
    let docs;
    try { docs = splitDocuments(text); } catch (e) {
      setResults([{ doc: { kind: "?", name: "" }, ok: false, error: { message: `cannot read the manifest: ${e.message}`, causes: [] } }]);
      setBusy(false);
      return;
    }
    if (!docs.length) { setResults([{ doc: { kind: "?", name: "" }, ok: false, error: { message: "no documents", causes: [] } }]); setBusy(false); return; }
    const out = [];
    for (const doc of docs) {
      if (!doc.apiVersion || !doc.kind) {
        out.push({ doc, ok: false, error: { message: "apiVersion and kind are required", causes: [] } });
        continue;
      }
      try {
        const { created } = await post(doc, namespace, dryRun);
        out.push({ doc, ok: true, created });
      } catch (e) {
        out.push({ doc, ok: false, error: describeError(e) });
        if (!dryRun) break; // stop at the first failure when creating
      }
    }
    setResults(out);
    setValidated(dryRun && out.every((r) => r.ok) ? text : null);
    setBusy(false);
  };

  const valid = validated !== null && validated === text;
  return html`<section id="submit-page" data-testid="submit-page">
    <div class="toolbar"><h1>Submit</h1>
      <span class="muted">documents without a namespace go to <b>${namespace}</b></span></div>
    <div class="toolbar small">
      <input type="file" accept=".yaml,.yml,.json" data-testid="manifest-file" onChange=${onFile} />
    </div>
    <textarea class="manifest-input" id="manifest-input" data-testid="manifest-input" spellcheck="false"
      placeholder="apiVersion: kubeflow.org/v1&#10;kind: PyTorchJob&#10;…" value=${text}
      onInput=${(e) => { setText(e.target.value); setValidated(null); }}></textarea>
    <div class="toolbar">
      <button data-testid="validate-button" onClick=${() => run(true)} disabled=${busy || !text.trim()}>Validate</button>
      <button class="primary" data-testid="create-button" onClick=${() => run(false)} disabled=${busy || !valid}
        title=${valid ? "" : "validate first"}>Create</button>
      ${busy ? html`<span class="muted">working…</span>` : null}
      ${results && !busy ? html`<span data-testid="submit-summary" class=${results.every((r) => r.ok) ? "ok" : "warn"}>
        ${phase === "validate"
          ? (results.every((r) => r.ok) ? `${results.length} document(s) valid: nothing created yet` : `${results.filter((r) => !r.ok).length} of ${results.length} document(s) invalid: nothing created`)
          : (results.every((r) => r.ok) ? `${results.length} created` : "creation stopped at an error")}</span>` : null}
    </div>
    ${results ? html`<div data-testid="submit-results">${results.map((r, i) => html`
      <div class="doc-result" data-testid="doc-result" data-ok=${r.ok ? "true" : "false"} data-kind=${r.doc.kind} data-name=${r.doc.name}>
        <b>${i + 1}. ${r.doc.kind || "?"} ${r.doc.name}</b>
        ${r.ok
          ? (phase === "create" && r.created?.metadata
              ? html` <span class="ok">created</span> ${linkOf(r.created) ? html`<a data-testid="created-link" href=${linkOf(r.created)}>${r.created.metadata.namespace ? `${r.created.metadata.namespace}/` : ""}${r.created.metadata.name}</a>` : null}`
              : html` <span class="ok">valid</span>`)
          : html`<div class="error">${r.error.causes.length ? html`<ul data-testid="field-errors">${r.error.causes.map((c) => html`
              <li data-testid="field-error" data-field=${c.field || ""}>${c.field ? html`<code class="field">${c.field}</code>: ` : null}${c.message}${c.reason ? html` <span class="muted">(${c.reason})</span>` : null}</li>`)}</ul>`
              : html`<span data-testid="doc-error">${r.error.message}</span>`}</div>`}
      </div>`)}</div>` : null}
  </section>`;
}
