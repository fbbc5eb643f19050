// The part of a browser's DOM that a pmusim flame graph's script uses (profiler/
// flame_script.c), built under node from the SVG as profiler/flame.c writes it (one
// box or control per line), so that a test can click, search and read the result.
// Usage: node flame_dom.js FILE.svg ACTION...
//   click:NAME    click the box of function NAME (the first in the file)
//   click:#ID     click the control with that id (reset, search)
//   search:RE     the search dialog will answer RE; then click "search"
//   key:K         press key K (Escape; f with Ctrl)
// After each action it prints the action, one line per box "name x width display
// opacity fill label" ("-" for an absent attribute, "hit" for the search colour,
// "base" for the box's own), then the matched text and the reset control's display.
'use strict';
const fs = require('fs');

class Element {
	constructor(tag, attrs, text) {
		this.tagName = tag;
		this.attrs = attrs;
		this.children = [];
		this.parentNode = null;
		this.textContent = text || '';
	}
	append(c) { c.parentNode = this; this.children.push(c); return c; }
	getAttribute(n) { return n in this.attrs ? this.attrs[n] : null; }
	setAttribute(n, v) { this.attrs[n] = String(v); }
	removeAttribute(n) { delete this.attrs[n]; }
	getElementsByTagName(tag) {
		const out = [];
		const walk = (e) => e.children.forEach((c) => { if (c.tagName === tag) out.push(c); walk(c); });
		walk(this);
		return out;
	}
}

const unescape = (s) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&amp;/g, '&');
const attrsOf = (s) => {
	const a = {};
	for (const m of s.matchAll(/([\w-]+)="([^"]*)"/g)) a[m[1]] = unescape(m[2]);
	return a;
};

const svgText = fs.readFileSync(process.argv[2], 'utf8');
const script = svgText.match(/<!\[CDATA\[\n([\s\S]*)\]\]><\/script>/)[1];
const root = new Element('svg', {});
const boxes = [], byId = {};
for (const line of svgText.split('\n')) {
	let m = line.match(/^<g><title>(.*)<\/title><rect (.*)\/><text (.*)>(.*)<\/text><\/g>$/);
	if (m) {
		const g = root.append(new Element('g', {}));
		g.append(new Element('title', {}, unescape(m[1])));
		const r = g.append(new Element('rect', attrsOf(m[2])));
		g.append(new Element('text', attrsOf(m[3]), unescape(m[4])));
		boxes.push({g, r, base: r.getAttribute('fill'), name: unescape(m[1]).replace(/ \(.*$/, '')});
		continue;
	}
	m = line.match(/^<text id="(\w+)" (.*)>(.*)<\/text>$/);
	if (m) byId[m[1]] = root.append(new Element('text', Object.assign({id: m[1]}, attrsOf(m[2])), m[3]));
}

const listeners = {root: {}, doc: {}};
let answer = null;
const document = {
	documentElement: Object.assign(root, {addEventListener: (t, f) => { listeners.root[t] = f; }}),
	getElementsByTagName: (t) => root.getElementsByTagName(t),
	getElementById: (id) => byId[id] || null,
	addEventListener: (t, f) => { listeners.doc[t] = f; },
};
const window = {prompt: () => answer, alert: (msg) => console.log('alert: ' + msg)};
new Function('document', 'window', script)(document, window);

const dash = (v) => (v === null || v === '' ? '-' : v);
for (const action of process.argv.slice(3)) {
	const [kind, arg] = [action.slice(0, action.indexOf(':')), action.slice(action.indexOf(':') + 1)];
	if (kind === 'click') {
		const target = arg[0] === '#' ? byId[arg.slice(1)] : boxes.find((b) => b.name === arg).r;
		listeners.root.click({target});
	} else if (kind === 'search') {
		answer = arg;
		listeners.root.click({target: byId.search});
	} else if (kind === 'key') {
		listeners.doc.keydown({key: arg, ctrlKey: arg === 'f', metaKey: false, preventDefault() {}});
	}
	console.log(action);
	for (const b of boxes) {
		const fill = b.r.getAttribute('fill');
		console.log([b.name, b.r.getAttribute('x'), b.r.getAttribute('width'), dash(b.g.getAttribute('display')),
			dash(b.g.getAttribute('opacity')), fill === b.base ? 'base' : fill === 'rgb(230,0,230)' ? 'hit' : fill,
			dash(b.g.getElementsByTagName('text')[0].textContent)].join(' '));
	}
	console.log('matched: ' + dash(byId.matched.textContent) + '; reset: ' + dash(byId.reset.getAttribute('display')));
}
