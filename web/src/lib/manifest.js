// Reading just enough of a YAML (or JSON) manifest to know where each
// document goes: a careful line scan of its top-level apiVersion, kind and
// metadata.name/namespace. The server parses the text itself.

export function splitDocuments(text) {
  const trimmed = text.trim();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    const v = JSON.parse(trimmed);
    const docs = Array.isArray(v) ? v : v.kind?.endsWith("List") && Array.isArray(v.items) ? v.items : [v];
    return docs.map((d) => ({ text: JSON.stringify(d), contentType: "application/json", ...headerOfObject(d) }));
  }
  const docs = [];
  let cur = [];
  for (const line of text.split(/\r?\n/)) {
    if (/^---(\s|$)/.test(line)) { docs.push(cur.join("\n")); cur = []; continue; }
    if (/^\.\.\.\s*$/.test(line)) continue;
    cur.push(line);
  }
  docs.push(cur.join("\n"));
  return docs
    .filter((d) => d.split("\n").some((l) => l.trim() && !l.trim().startsWith("#")))
    .map((d) => ({ text: d, contentType: "application/yaml", ...headerOfYaml(d) }));
}

function headerOfObject(d) {
  return { apiVersion: d?.apiVersion || "", kind: d?.kind || "", name: d?.metadata?.name || d?.metadata?.generateName || "", namespace: d?.metadata?.namespace || "" };
}

// "a: 1, b: 'x, y'" -> ["a: 1", " b: 'x, y'"]; null when a quote is left open.
function splitOutsideQuotes(text) {
  const parts = [];
  let cur = "";
  let quote = "";
  for (const c of text) {
    if (quote) { if (c === quote) quote = ""; cur += c; continue; }
    if (c === '"' || c === "'") { quote = c; cur += c; continue; }
    if (c === ",") { parts.push(cur); cur = ""; continue; }
    cur += c;
  }
  if (quote) return null;
  parts.push(cur);
  return parts;
}

function unquote(v) {
  v = v.replace(/\s+#.*$/, "").trim();
  if ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'"))) return v.slice(1, -1);
  return v;
}

function headerOfYaml(text) {
  const out = { apiVersion: "", kind: "", name: "", namespace: "" };
  let inMeta = false;
  let metaIndent = -1;
  for (const line of text.split("\n")) {
    if (!line.trim() || line.trim().startsWith("#")) continue;
    const indent = line.length - line.trimStart().length;
    if (indent === 0) {
      inMeta = false;
      const m = line.match(/^([A-Za-z]+):\s*(.*)$/);
      if (!m) continue;
      if (m[1] === "apiVersion") out.apiVersion = unquote(m[2]);
      else if (m[1] === "kind") out.kind = unquote(m[2]);
      else if (m[1] === "metadata") {
        inMeta = true; metaIndent = -1;
        const flow = m[2].replace(/\s+#.*$/, "").match(/^\{(.*)\}$/);
        if (flow) {
          // A flow mapping may nest ({annotations: {a: "x, namespace: y"}}):
          // read only a flat one, its commas outside quotes, and say so
          // otherwise.
          const parts = splitOutsideQuotes(flow[1]);
          if (/[{}[\]]/.test(flow[1].replace(/"[^"]*"|'[^']*'/g, "")) || !parts) {
            out.unsure = "write metadata as a block (one field a line) for the page to route it";
          } else {
            for (const part of parts) {
              const [k, ...v] = part.split(":");
              if (k.trim() === "name" || k.trim() === "namespace" || k.trim() === "generateName") out[k.trim() === "generateName" ? "name" : k.trim()] ||= unquote(v.join(":"));
            }
          }
          inMeta = false;
        }
      }
      continue;
    }
    if (inMeta) {
      if (metaIndent < 0) metaIndent = indent;
      if (indent !== metaIndent) continue;
      const m = line.trim().match(/^(name|namespace|generateName):\s*(.*)$/);
      if (m) {
        if (m[1] === "namespace") out.namespace = unquote(m[2]);
        else if (m[1] === "name" || !out.name) out.name = unquote(m[2]);
      }
    }
  }
  return out;
}
