// The shell: hash routing, the header with its nav and namespace filter,
// and the token form the API's 401 asks for.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { html } from "./lib/util.js";
import { get, onAuthRequired, setToken, token } from "./lib/api.js";
import { JobsPage } from "./pages/jobs.js";
import { JobPage } from "./pages/job.js";
import { ExperimentPage } from "./pages/experiment.js";
import { OptimizationPage } from "./pages/optimization.js";
import { SubmitPage } from "./pages/submit.js";
import { ComparePage } from "./pages/compare.js";
import { QueuesPage } from "./pages/queues.js";

// "#/jobs/PyTorchJob/default/x?a=b" -> {parts: ["jobs", "PyTorchJob", "default", "x"], query}
function parseHash() {
  const raw = location.hash.replace(/^#\/?/, "");
  const [p, q = ""] = raw.split("?");
  const parts = p.split("/").filter(Boolean).map(decodeURIComponent);
  return { parts: parts.length ? parts : ["jobs"], query: new URLSearchParams(q) };
}

function useRoute() {
  const [route, setRoute] = useState(parseHash());
  useEffect(() => {
    const on = () => setRoute(parseHash());
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}

function TokenForm() {
  const [value, setValue] = useState("");
  const submit = (e) => {
    e.preventDefault();
    setToken(value.trim());
    location.reload();
  };
  return html`<div class="modal-backdrop"><form class="modal" id="token-form" data-testid="token-form" onSubmit=${submit}>
    <h2>Sign in</h2>
    <p>The server needs a bearer token (<code>trainyard server --token-file</code>).${token() ? " The saved token was refused." : ""}</p>
    <input id="token-input" data-testid="token-input" type="password" autocomplete="off" placeholder="token"
      value=${value} onInput=${(e) => setValue(e.target.value)} autofocus />
    <div class="actions"><button type="submit" class="primary" data-testid="token-save">Save</button></div>
  </form></div>`;
}

function NamespaceFilter({ ns, setNs }) {
  const [names, setNames] = useState([]);
  useEffect(() => {
    get("/api/v1/namespaces").then((l) => setNames((l.items || []).map((n) => n.metadata.name))).catch(() => {});
  }, []);
  const all = ns && !names.includes(ns) ? [...names, ns] : names;
  return html`<label class="ns-filter">namespace
    <select id="ns-filter" data-testid="ns-filter" value=${ns} onChange=${(e) => setNs(e.target.value)}>
      <option value="">all</option>
      ${all.map((n) => html`<option value=${n}>${n}</option>`)}
    </select></label>`;
}

const NAV = [["jobs", "Jobs"], ["submit", "Submit"], ["compare", "Compare"], ["queues", "Queues & nodes"]];

function App() {
  const route = useRoute();
  const [needToken, setNeedToken] = useState(false);
  const [ns, setNsState] = useState(() => localStorage.getItem("trainyard.ns") || "");
  const setNs = (v) => { localStorage.setItem("trainyard.ns", v); setNsState(v); };
  useEffect(() => onAuthRequired(() => setNeedToken(true)), []);

  const [page, ...rest] = route.parts;
  let body;
  if (page === "jobs" && rest.length >= 3) body = html`<${JobPage} kind=${rest[0]} ns=${rest[1]} name=${rest[2]} key=${rest.join("/")} />`;
  else if (page === "experiments" && rest.length >= 2) body = html`<${ExperimentPage} ns=${rest[0]} name=${rest[1]} key=${rest.join("/")} />`;
  else if (page === "optimizationjobs" && rest.length >= 2) body = html`<${OptimizationPage} ns=${rest[0]} name=${rest[1]} key=${rest.join("/")} />`;
  else if (page === "submit") body = html`<${SubmitPage} ns=${ns} />`;
  else if (page === "compare") body = html`<${ComparePage} ns=${ns} query=${route.query} />`;
  else if (page === "queues") body = html`<${QueuesPage} ns=${ns} />`;
  else body = html`<${JobsPage} ns=${ns} />`;
  const active = page === "experiments" || page === "optimizationjobs" ? "jobs" : page;

  return html`
    <header class="topbar">
      <a class="brand" href="#/jobs">trainyard</a>
      <nav>${NAV.map(([id, label]) => html`<a href=${`#/${id}`} id=${`nav-${id}`} data-testid=${`nav-${id}`} class=${active === id ? "active" : ""}>${label}</a>`)}</nav>
      <span class="spacer"></span>
      <${NamespaceFilter} ns=${ns} setNs=${setNs} />
      ${token() ? html`<button class="link" title="forget the saved token" onClick=${() => { setToken(""); location.reload(); }}>sign out</button>` : null}
    </header>
    <main id="page" data-page=${page}>${body}</main>
    ${needToken ? html`<${TokenForm} />` : null}`;
}

// A URL that carries its token (`trainyard run --ui` prints one:
// "#/jobs?token=..."): kept as a typed one would be, and taken out of the
// address bar, so that it is not shared with a copied link.
function takeTokenFromUrl() {
  const { parts, query } = parseHash();
  const given = query.get("token");
  if (!given) return;
  // A link must not sign anyone in behind their back (as another identity,
  // or in place of their own): it asks first.
  if (token() === given ||
      confirm(token() ? "This link signs you in with a token of its own, in place of the one saved. Use it?"
                      : "This link signs you in with the token it carries (trainyard run --ui prints such links). Use it?")) {
    setToken(given);
  }
  query.delete("token");
  const rest = query.toString();
  history.replaceState(null, "", `#/${parts.join("/")}${rest ? `?${rest}` : ""}`);
}

takeTokenFromUrl();
render(html`<${App} />`, document.getElementById("app"));
