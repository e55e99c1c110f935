import { h, render } from "preact";
import htm from "htm";

const html = htm.bind(h);
render(html`<h1>trainyard</h1>`, document.getElementById("app"));
