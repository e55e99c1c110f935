// A confirmation dialog: useConfirm() gives [dialog, ask]; ask({title,
// message, action, danger}) shows it and runs action() on OK, showing its
// error if it fails.
import { useState } from "preact/hooks";
import { html } from "./util.js";

export function useConfirm() {
  const [req, setReq] = useState(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const ask = (r) => { setError(""); setReq(r); };
  const ok = async () => {
    setBusy(true);
    try { await req.action(); setReq(null); } catch (e) { setError(e.message || String(e)); }
    setBusy(false);
  };
  const dialog = req ? html`<div class="modal-backdrop">
    <div class="modal" role="dialog" id="confirm-dialog" data-testid="confirm-dialog">
      <h2>${req.title}</h2>
      <p>${req.message}</p>
      ${error ? html`<div class="error" data-testid="confirm-error">${error}</div>` : null}
      <div class="actions">
        <button onClick=${() => setReq(null)} data-testid="confirm-cancel" disabled=${busy}>Cancel</button>
        <button class=${req.danger ? "danger" : "primary"} onClick=${ok} data-testid="confirm-ok" disabled=${busy}>${req.okLabel || "OK"}</button>
      </div>
    </div></div>` : null;
  return [dialog, ask];
}
