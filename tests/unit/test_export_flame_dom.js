// test_export_flame_dom.js — run by test_export_flame when node is installed:
// loads the script embedded in a --flamegraph SVG against a minimal fake DOM
// built from the SVG's frames, then clicks, zooms, resets and searches.
// Usage: node test_export_flame_dom.js FILE.svg   (exit 0 = all checks passed)
"use strict";
const fs = require("fs");
const vm = require("vm");

const svg = fs.readFileSync(process.argv[2], "utf8");
let failures = 0;
function check(cond, what) {
	if (!cond) {
		console.error("flame script check failed: " + what);
		failures++;
	}
}
function unxml(s) {
	return s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, "\"")
		.replace(/&apos;/g, "'").replace(/&amp;/g, "&");
}
function attrs(s) {
	const a = {};
	for (const m of s.matchAll(/([\w-]+)="([^"]*)"/g)) a[m[1]] = unxml(m[2]);
	return a;
}
class El {
	constructor(a, text) {
		this.attrs = a || {};
		this.style = { display: this.attrs.style === "display:none" ? "none" : "" };
		this.listeners = {};
		this.textContent = text || "";
		this.firstChild = { nodeValue: text || "" };
		this.kids = {};
	}
	getAttribute(k) { return k in this.attrs ? this.attrs[k] : null; }
	setAttribute(k, v) { this.attrs[k] = String(v); }
	removeAttribute(k) { delete this.attrs[k]; }
	addEventListener(t, f) { (this.listeners[t] = this.listeners[t] || []).push(f); }
	fire(t, ev) { (this.listeners[t] || []).forEach((f) => f(ev || { preventDefault() {} })); }
	querySelector(sel) { return this.kids[sel]; }
}

const root = new El(attrs(svg.match(/<svg ([^>]*)>/)[1]));
const ids = {};
for (const m of svg.matchAll(/<text id="(\w+)"([^>]*)>([^<]*)<\/text>/g))
	ids[m[1]] = new El(attrs(m[2]), unxml(m[3]));
const frames = [];
for (const m of svg.matchAll(/<g class="f"><title>([^<]*)<\/title><rect ([^>]*)\/><text ([^>]*)>([^<]*)<\/text><\/g>/g)) {
	const g = new El({ class: "f" });
	g.kids.title = new El({}, unxml(m[1]));
	g.kids.rect = new El(attrs(m[2]));
	g.kids.text = new El(attrs(m[3]), unxml(m[4]));
	g.name = g.kids.title.textContent.replace(/ \([^(]*\)$/, "");
	frames.push(g);
}
check(frames.length > 0, "frames found in the SVG");

let promptAnswer = "";
const win = new El();
win.prompt = () => promptAnswer;
win.alert = (m) => check(false, "alert: " + m);
const doc = {
	documentElement: root,
	getElementById: (id) => ids[id] || null,
	querySelectorAll: (sel) => (sel === "g.f" ? frames : []),
};
const script = svg.match(/<!\[CDATA\[([\s\S]*?)\]\]>/)[1];
vm.runInNewContext(script, { window: win, document: doc, console: console });
win.fire("load");

const full = +root.getAttribute("data-full"), pad = +root.getAttribute("data-pad");
const by = (name, nth) => frames.filter((f) => f.name === name)[nth || 0];
const W = (f) => +f.kids.rect.getAttribute("width");
const X = (f) => +f.kids.rect.getAttribute("x");
const shown = (f) => f.style.display !== "none";
const heavy = by("heavy"), light = by("light"), main = by("main");
const orig = frames.map((f) => [X(f), W(f)]);

// hover fills the details line
heavy.fire("mouseover");
check(ids.details.firstChild.nodeValue.startsWith("heavy ("), "hover shows details");
// zoom into heavy: it fills the width, ancestors span it dimmed, light hidden
heavy.fire("click");
check(Math.abs(W(heavy) - full) < 0.05 && Math.abs(X(heavy) - pad) < 0.05, "zoomed frame fills the width");
check(shown(main) && main.getAttribute("opacity") === "0.6" && Math.abs(W(main) - full) < 0.05, "ancestor spans, dimmed");
check(!shown(light), "frames outside the zoomed one are hidden");
check(ids.reset.style.display === "", "reset button shown");
const kids = frames.filter((f) => f.name === "spin" && shown(f));
// both "spin"s under heavy were merged into one frame as wide as heavy
check(kids.length === 1 && Math.abs(W(kids[0]) - full) < 0.5, "child scaled with its parent");
// reset restores every frame
ids.reset.fire("click");
check(frames.every((f, i) => shown(f) && Math.abs(X(f) - orig[i][0]) < 0.01 && Math.abs(W(f) - orig[i][1]) < 0.01), "reset restores the layout");
check(ids.reset.style.display === "none", "reset button hidden again");
// search through Ctrl-F: matches recoloured, matched share counted once
promptAnswer = "^spin$";
win.fire("keydown", { ctrlKey: true, key: "f", preventDefault() {} });
const m = ids.matched.firstChild.nodeValue;
const pct = (x) => "Matched: " + (100 * x / full).toFixed(1) + "%";
const spinW = frames.reduce((a, f, i) => a + (f.name === "spin" ? orig[i][1] : 0), 0);
check(m.startsWith(pct(spinW)), "matched share (got '" + m + "', expected " + pct(spinW) + ")");
check(frames.filter((f) => f.name === "spin").every((f) => f.kids.rect.getAttribute("fill") === "rgb(230,0,230)"), "matches highlighted");
check(ids.search.firstChild.nodeValue === "Reset Search", "search button turns into reset");
// a search for main and heavy (nested) still counts 100%, not more
promptAnswer = "main|heavy";
ids.search.fire("click");   // first click clears the previous search
ids.search.fire("click");
check(ids.matched.firstChild.nodeValue.startsWith(pct(orig[frames.indexOf(main)][1])),
	"nested matches counted once (got '" + ids.matched.firstChild.nodeValue + "')");
win.fire("keydown", { key: "Escape", preventDefault() {} });
check(ids.matched.firstChild.nodeValue === " " && heavy.kids.rect.getAttribute("fill") !== "rgb(230,0,230)", "Escape clears the search");
process.exit(failures ? 1 : 0);
