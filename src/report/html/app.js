/*
 * app.js — the page shell of the HTML report: reads the embedded data
 * (gzip+base64 inflated with DecompressionStream), keeps the registry of
 * views (each view_*.js calls CBN.view), routes by URL fragment
 * (#VIEW&key=value...), and offers the widgets every view shares: formatting,
 * the sortable and filterable table, links into the source view.
 * Errors are caught and written into #cbn-status, which the tests read;
 * "selftest=NAME" in the fragment runs a view's UI check in the page.
 */
'use strict';
var CBN = (function () {
	var C = { views: [], data: null, errors: [], results: [] };

	C.view = function (v) { C.views.push(v); };

	function status() {
		var s = document.getElementById('cbn-status');
		s.setAttribute('data-errors', String(C.errors.length));
		s.textContent = C.results.concat(C.errors.map(function (e) { return 'error ' + e; }))
			.join('\n');
	}
	C.note = function (line) { C.results.push(line); status(); };
	C.error = function (msg) { C.errors.push(String(msg)); status(); };
	window.addEventListener('error', function (e) {
		C.error((e.message || 'error') + (e.lineno ? ' (line ' + e.lineno + ')' : ''));
	});
	/* console.error too: chromium's log gives every console line the same
	 * level, so the tests count errors here */
	var cerr = console.error;
	console.error = function () {
		C.errors.push(Array.prototype.join.call(arguments, ' '));
		if (document.getElementById('cbn-status')) status();
		cerr.apply(console, arguments);
	};
	window.addEventListener('unhandledrejection', function (e) {
		C.error(e.reason && e.reason.stack ? e.reason.stack : e.reason);
	});

	/* ---- DOM and formatting ---- */
	C.el = function (tag, props) {
		var e = document.createElement(tag), k, i, c;
		for (k in props || {}) {
			if (k === 'text') e.textContent = props[k];
			else if (k === 'html') e.innerHTML = props[k];
			else if (k.slice(0, 2) === 'on') e.addEventListener(k.slice(2), props[k]);
			else if (k === 'cls') e.className = props[k];
			else e.setAttribute(k, props[k]);
		}
		for (i = 2; i < arguments.length; i++) {
			c = arguments[i];
			if (c == null) continue;
			e.appendChild(typeof c === 'string' || typeof c === 'number'
				? document.createTextNode(String(c)) : c);
		}
		return e;
	};
	C.ns = function (v) {
		if (v == null || isNaN(v)) return '';
		var a = Math.abs(v);
		if (a >= 1e9) return (v / 1e9).toFixed(a >= 1e11 ? 0 : 3) + ' s';
		if (a >= 1e6) return (v / 1e6).toFixed(a >= 1e8 ? 0 : 2) + ' ms';
		if (a >= 1e3) return (v / 1e3).toFixed(1) + ' us';
		return Math.round(v) + ' ns';
	};
	C.pct = function (f) { return f == null || isNaN(f) ? '' : (100 * f).toFixed(1) + '%'; };
	C.bytes = function (b) {
		if (b == null) return '';
		var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
		while (Math.abs(b) >= 1024 && i < u.length - 1) { b /= 1024; i++; }
		return (i ? b.toFixed(1) : b) + ' ' + u[i];
	};
	C.num = function (v) { return v == null ? '' : String(v); };
	/* A column's formatter from its key's unit suffix. */
	C.fmtFor = function (key) {
		if (/_ns$/.test(key)) return C.ns;
		if (/bytes$|_mem$/.test(key)) return C.bytes;
		if (/_pct$|share|occupancy|efficiency|utilization|ratio/.test(key))
			return function (v) { return typeof v === 'number' ? (v <= 1.5 && !/_pct$/.test(key)
				? C.pct(v) : v.toFixed(1) + '%') : C.num(v); };
		return C.num;
	};
	C.color = function (s) {
		var h = 0, i;
		for (i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
		return 'hsl(' + (20 + (Math.abs(h) % 40)) + ',' + (70 + Math.abs(h >> 8) % 25) + '%,' +
			(55 + Math.abs(h >> 16) % 15) + '%)';
	};

	/* ---- links ---- */
	C.href = function (view, params) {
		var s = '#' + view, k;
		for (k in params || {}) s += '&' + k + '=' + encodeURIComponent(params[k]);
		return s;
	};
	/* file:line: into the source view when the page holds the file, and to
	 * the editor (vscode://file/...) always. */
	C.srcLink = function (file, line) {
		if (!file) return document.createTextNode('');
		var span = C.el('span', {}), base = file.split('/').pop() + (line ? ':' + line : '');
		var src = C.source(file);
		span.appendChild(src ? C.el('a', { href: C.href('source', { file: file, line: line || 0 }),
			title: file }, base) : C.el('span', { title: file }, base));
		span.appendChild(document.createTextNode(' '));
		span.appendChild(C.el('a', { href: 'vscode://file' + ((src && src.path) || file) +
			(line ? ':' + line : ''), title: 'open in the editor', cls: 'muted' }, '\u270e'));
		return span;
	};
	C.source = function (file) {
		var s = (C.data.html && C.data.html.sources) || [], i;
		for (i = 0; i < s.length; i++) if (s[i].file === file && s[i].lines) return s[i];
		return null;
	};

	/*
	 * A sortable, filterable table.  cols: [{key, label, fmt, num, get, cell}].
	 * get(row) gives the sort value (default row[key]); cell(row) a node.
	 * Returns {el, sort(key, dir), filter(text), shown()}.
	 */
	C.table = function (rows, cols, opt) {
		opt = opt || {};
		var wrap = C.el('div', {}), tbody = C.el('tbody'), thead = C.el('tr'), st = {
			key: opt.sort || null, dir: -1, q: '' }, shown = [], input, info;
		var limit = opt.limit || 500;
		function val(c, r) { return c.get ? c.get(r) : r[c.key]; }
		function render() {
			var q = st.q.toLowerCase(), col = cols.filter(function (c) { return c.key === st.key; })[0];
			shown = rows.filter(function (r) {
				if (!q) return true;
				return cols.some(function (c) {
					var v = val(c, r);
					return typeof v === 'string' && v.toLowerCase().indexOf(q) >= 0;
				});
			});
			if (col) shown.sort(function (a, b) {
				var x = val(col, a), y = val(col, b);
				if (x == null) x = typeof y === 'string' ? '' : -Infinity;
				if (y == null) y = typeof x === 'string' ? '' : -Infinity;
				return (x < y ? -1 : x > y ? 1 : 0) * st.dir;
			});
			tbody.textContent = '';
			shown.slice(0, limit).forEach(function (r) {
				var tr = C.el('tr');
				if (opt.onrow) tr.addEventListener('click', function () {
					Array.prototype.forEach.call(tbody.children, function (x) { x.classList.remove('sel'); });
					tr.classList.add('sel');
					opt.onrow(r);
				});
				cols.forEach(function (c) {
					var v = val(c, r), td = C.el('td', { cls: c.num ? 'n' : (c.name ? 'name' : '') });
					td.setAttribute('data-v', v == null ? '' : String(v));
					if (c.cell) td.appendChild(c.cell(r));
					else {
						/* a name column shows the short name when the row has
						 * one (C++ without parameters); the title keeps the
						 * whole signature */
						var t = (c.fmt || C.num)(c.name && c.key === 'name' && r.short_name
							? r.short_name : v);
						if (q && typeof v === 'string' && !c.num) mark(td, t, q);
						else td.textContent = t;
						if (typeof v === 'string') td.title = v;
					}
					tr.appendChild(td);
				});
				tbody.appendChild(tr);
			});
			Array.prototype.forEach.call(thead.children, function (th, i) {
				th.className = (cols[i].num ? 'n ' : '') + (cols[i].key === st.key
					? (st.dir < 0 ? 'desc' : 'asc') : '');
			});
			info.textContent = shown.length + ' of ' + rows.length + ' rows' +
				(shown.length > limit ? ' (first ' + limit + ' shown)' : '');
		}
		function mark(td, t, q) {
			var i = t.toLowerCase().indexOf(q);
			if (i < 0) { td.textContent = t; return; }
			td.appendChild(document.createTextNode(t.slice(0, i)));
			td.appendChild(C.el('mark', {}, t.slice(i, i + q.length)));
			td.appendChild(document.createTextNode(t.slice(i + q.length)));
		}
		cols.forEach(function (c) {
			thead.appendChild(C.el('th', { 'data-key': c.key, onclick: function () {
				if (st.key === c.key) st.dir = -st.dir;
				else { st.key = c.key; st.dir = c.num ? -1 : 1; }
				render();
			} }, c.label || c.key));
		});
		input = C.el('input', { type: 'search', placeholder: 'filter rows\u2026', oninput: function () {
			st.q = input.value; render(); } });
		info = C.el('span', { cls: 'muted' });
		if (opt.filter !== false) wrap.appendChild(C.el('div', { cls: 'tools' }, input, info));
		else wrap.appendChild(info);
		wrap.appendChild(C.el('table', { cls: 't' }, C.el('thead', {}, thead), tbody));
		render();
		return {
			el: wrap, input: input, thead: thead, tbody: tbody,
			sort: function (key, dir) { st.key = key; st.dir = dir; render(); },
			filter: function (q) { input.value = q; st.q = q; render(); },
			shown: function () { return shown; }
		};
	};

	/* Every array of objects in obj as a table: the sections other issues
	 * add (memory, steps, waiting) show without a view of their own. */
	C.tables = function (el, obj, skip) {
		Object.keys(obj || {}).forEach(function (k) {
			var v = obj[k];
			if ((skip || []).indexOf(k) >= 0 || !Array.isArray(v) || !v.length ||
			    typeof v[0] !== 'object' || v[0] === null || Array.isArray(v[0])) return;
			var keys = Object.keys(v[0]).filter(function (c) {
				return v[0][c] === null || typeof v[0][c] !== 'object';
			});
			el.appendChild(C.el('h3', {}, k.replace(/_/g, ' ')));
			var t = C.table(v, keys.map(function (c) {
				return { key: c, num: typeof v[0][c] === 'number', fmt: C.fmtFor(c) };
			}));
			t.el.setAttribute('data-table', k);
			el.appendChild(t.el);
		});
	};
	/* The scalar members of obj as cards. */
	C.cards = function (obj, skip) {
		var d = C.el('div', { cls: 'cards' }), notes = [];
		Object.keys(obj || {}).forEach(function (k) {
			var v = obj[k];
			if ((skip || []).indexOf(k) >= 0 || v === null || typeof v === 'object') return;
			/* a sentence is no card: under them, as text */
			if (typeof v === 'string' && v.length > 40) {
				notes.push(C.el('p', { cls: 'muted' }, k.replace(/_/g, ' ') + ': ' + v));
				return;
			}
			d.appendChild(C.el('div', { cls: 'card' }, C.el('b', {}, typeof v === 'number'
				? C.fmtFor(k)(v) : String(v)), C.el('span', {}, k.replace(/_/g, ' '))));
		});
		if (!notes.length) return d;
		var w = C.el('div', {}, d);
		notes.forEach(function (n) { w.appendChild(n); });
		return w;
	};
	C.recos = function (list, view) {
		var d = C.el('div', {});
		(list || []).forEach(function (r) {
			d.appendChild(C.el('div', { cls: 'reco' }, C.el('b', {}, r.id || ''), ' ',
				r.message || '', view ? C.el('a', { href: C.href(view) }, ' \u2192 ' + view) : null,
				r.evidence ? C.el('div', { cls: 'ev' }, typeof r.evidence === 'string'
					? r.evidence : JSON.stringify(r.evidence)) : null));
		});
		return d;
	};

	/* ---- routing ---- */
	function parseHash() {
		var parts = (location.hash || '#overview').slice(1).split('&'), p = {}, i, kv;
		for (i = 1; i < parts.length; i++) {
			kv = parts[i].split('=');
			p[decodeURIComponent(kv[0])] = decodeURIComponent(kv.slice(1).join('=') || '');
		}
		return { id: parts[0] || 'overview', params: p };
	}
	C.route = function () {
		var h = parseHash(), main = document.getElementById('view'), tabs = document.getElementById('tabs');
		var avail = C.views.filter(function (v) { return !v.has || v.has(C.data); });
		tabs.textContent = '';
		avail.forEach(function (v) {
			if (!v.hidden) tabs.appendChild(C.el('a', { href: '#' + v.id,
				cls: h.id.split(',').indexOf(v.id) >= 0 ? 'on' : '' },
				v.title));
		});
		main.textContent = '';
		C.results = [];
		/* "#a,b": those views one after the other (one page load checks
		 * several in the tests) */
		var ids = h.id.split(','), several = h.id === 'all' || ids.length > 1;
		var list = h.id === 'all' ? avail : C.views.filter(function (v) { return ids.indexOf(v.id) >= 0; });
		if (!list.length) {
			main.appendChild(C.el('p', {}, 'No view named "' + h.id + '".'));
			list = [];
		}
		list.forEach(function (v) {
			var sec = C.el('section', { id: 'view-' + v.id, cls: several ? 'view-all' : '' });
			main.appendChild(sec);
			if (several) sec.appendChild(C.el('h2', {}, v.title));
			try {
				if (v.has && !v.has(C.data))
					sec.appendChild(C.el('p', { cls: 'muted' }, v.empty ||
						'This run has no data for this view.'));
				else
					v.render(sec, C.data, h.params);
				C.note('render ' + v.id + ' ok');
			} catch (e) {
				C.error('render ' + v.id + ': ' + (e && e.stack ? e.stack : e));
			}
		});
		if (h.params.selftest) C.selftest(list, h.params.selftest);
		document.getElementById('cbn-status').setAttribute('data-view', h.id);
		document.getElementById('cbn-status').setAttribute('data-state', 'ready');
		status();
	};
	/* Run the named UI checks (or all) of the views shown; each writes one
	 * "selftest VIEW.NAME ok|FAIL detail" line into #cbn-status. */
	C.selftest = function (list, which) {
		list.forEach(function (v) {
			Object.keys(v.selftests || {}).forEach(function (name) {
				if (which !== 'all' && which !== name) return;
				if (which === 'all' && (v.manual || []).indexOf(name) >= 0) return;
				var sec = document.getElementById('view-' + v.id);
				try {
					C.note('selftest ' + v.id + '.' + name + ' ok ' + v.selftests[name](sec, C.data));
				} catch (e) {
					C.note('selftest ' + v.id + '.' + name + ' FAIL ' + (e && e.message ? e.message : e));
				}
			});
		});
	};
	C.check = function (cond, msg) { if (!cond) throw new Error(msg); };

	/* ---- data ---- */
	function load() {
		var node = document.getElementById('cbn-data');
		if (node.getAttribute('data-encoding') !== 'gzip+base64')
			return Promise.resolve(JSON.parse(node.textContent));
		if (typeof DecompressionStream === 'undefined')
			return Promise.reject(new Error('this browser lacks DecompressionStream: ' +
				'open the report in a current Chrome, Firefox or Safari'));
		var bin = atob(node.textContent.trim()), bytes = new Uint8Array(bin.length), i;
		for (i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
		var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
		return new Response(stream).text().then(JSON.parse);
	}
	function start() {
		var t0 = performance.now();
		load().then(function (d) {
			C.data = d;
			var run = (d.report && d.report.run) || {};
			document.getElementById('cmd').textContent = (run.command || []).join(' ');
			window.addEventListener('hashchange', C.route);
			C.route();
			document.getElementById('cbn-status').setAttribute('data-ms',
				String(Math.round(performance.now() - t0)));
		}).catch(function (e) {
			document.getElementById('view').textContent = 'Cannot read the report data: ' + e.message;
			C.error('load: ' + e.message);
		});
	}
	document.addEventListener('DOMContentLoaded', start);
	return C;
})();
