/*
 * lib_table.js — the widgets that show the report's figures as text: the
 * sortable, filterable table (numbers right-aligned next to the name, long
 * names cut with the whole one on hover, wide tables scrolled inside their
 * box), the cards of a view's headline figures, and the recommendations,
 * each rule once with the evidence of every place it fired.
 */
'use strict';
(function (C) {
	/*
	 * A sortable, filterable table.  cols: [{key, label, fmt, num, get, cell,
	 * name, help}]: get(row) gives the sort value (default row[key]), cell(row)
	 * a node, fmt(value) the text; name marks the column of names (cut to the
	 * box, whole on hover), num a number (right-aligned; sorts descending
	 * first).  opt: {sort, dir, limit, filter: false, onrow(row), compact}.
	 * Returns {el, sort(key, dir), filter(text), shown()}.
	 */
	C.table = function (rows, cols, opt) {
		opt = opt || {};
		var wrap = C.el('div', { cls: 'tbl' }), tbody = C.el('tbody'), thead = C.el('tr'), st = {
			key: opt.sort || null, dir: opt.dir || -1, q: '' }, shown = [], input, info;
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
						if (c.name || typeof v === 'string') td.title = typeof v === 'string' ? v : t;
					}
					tr.appendChild(td);
				});
				tbody.appendChild(tr);
			});
			Array.prototype.forEach.call(thead.children, function (th, i) {
				th.className = (cols[i].num ? 'n ' : '') + (cols[i].key === st.key
					? (st.dir < 0 ? 'desc' : 'asc') : '');
			});
			if (info) info.textContent = C.count(shown.length) + ' of ' + C.count(rows.length) +
				' rows' + (shown.length > limit ? ' (first ' + C.count(limit) + ' shown)' : '');
		}
		function mark(td, t, q) {
			var i = t.toLowerCase().indexOf(q);
			if (i < 0) { td.textContent = t; return; }
			td.appendChild(document.createTextNode(t.slice(0, i)));
			td.appendChild(C.el('mark', {}, t.slice(i, i + q.length)));
			td.appendChild(document.createTextNode(t.slice(i + q.length)));
		}
		cols.forEach(function (c) {
			thead.appendChild(C.el('th', { 'data-key': c.key, title: c.help || 'sort by ' +
				(c.label || C.label(c.key)), onclick: function () {
				if (st.key === c.key) st.dir = -st.dir;
				else { st.key = c.key; st.dir = c.num ? -1 : 1; }
				render();
			} }, c.label || C.label(c.key)));
		});
		input = C.el('input', { type: 'search', placeholder: 'filter rows\u2026', oninput: function () {
			st.q = input.value; render(); } });
		if (!opt.compact) {
			info = C.el('span', { cls: 'muted' });
			if (opt.filter !== false) wrap.appendChild(C.el('div', { cls: 'tools' }, input, info));
			else wrap.appendChild(C.el('div', { cls: 'tools' }, info));
		}
		wrap.appendChild(C.el('div', { cls: 'tbl-box' },
			C.el('table', { cls: 't' + (opt.compact ? ' compact' : '') }, C.el('thead', {}, thead), tbody)));
		render();
		return {
			el: wrap, input: input, thead: thead, tbody: tbody,
			sort: function (key, dir) { st.key = key; st.dir = dir; render(); },
			filter: function (q) { input.value = q; st.q = q; render(); },
			shown: function () { return shown; }
		};
	};

	/* Columns for the keys of a row, in words and units: names first,
	 * numbers next, other text last (so the numbers stay in view). */
	C.columns = function (row, skip) {
		var keys = Object.keys(row).filter(function (k) {
			return (skip || []).indexOf(k) < 0 && (row[k] === null || typeof row[k] !== 'object');
		});
		function rank(k) {
			if (k === 'name' || k === 'function') return 0;
			return typeof row[k] === 'number' ? 1 : 2;
		}
		keys.sort(function (a, b) { return rank(a) - rank(b); });
		return keys.filter(function (k) {
			return !(k === 'short_name' && keys.indexOf('name') >= 0);
		}).map(function (k) {
			return { key: k, num: typeof row[k] === 'number', name: k === 'name' || k === 'function',
				fmt: C.fmtFor(k) };
		});
	};
	/* Every array of objects in obj as a table with a title: the sections a
	 * view has no table of its own for still show in words. */
	C.tables = function (el, obj, skip) {
		Object.keys(obj || {}).forEach(function (k) {
			var v = obj[k];
			if ((skip || []).indexOf(k) >= 0 || !Array.isArray(v) || !v.length ||
			    typeof v[0] !== 'object' || v[0] === null || Array.isArray(v[0])) return;
			el.appendChild(C.el('h3', {}, C.label(k)));
			var t = C.table(v, C.columns(v[0]));
			t.el.setAttribute('data-table', k);
			el.appendChild(t.el);
		});
	};

	/* Headline figures: [{label, value (text), title}] as cards. */
	C.facts = function (list) {
		var d = C.el('div', { cls: 'cards' });
		list.forEach(function (x) {
			if (!x || x.value == null || x.value === '') return;
			/* x.name: a program's or a device's name after the label, as a name */
			d.appendChild(C.el('div', { cls: 'card' + (x.cls ? ' ' + x.cls : ''), title: x.title || '' },
				C.el('b', {}, String(x.value)), C.el('span', {}, x.label, x.name ? ' ' : null,
					x.name ? C.el('span', { cls: 'name' }, x.name) : null)));
		});
		return d;
	};
	/* The scalar members of obj as cards, each in words and its unit;
	 * sentences go under them as text. */
	C.cards = function (obj, skip) {
		var list = [], notes = [];
		Object.keys(obj || {}).forEach(function (k) {
			var v = obj[k];
			if ((skip || []).indexOf(k) >= 0 || v === null || typeof v === 'object' || v === '') return;
			if (typeof v === 'string' && v.length > 40) {
				notes.push(C.el('p', { cls: 'muted' }, C.label(k) + ': ' + v));
				return;
			}
			list.push({ label: C.label(k), value: typeof v === 'string' ? v : C.fmtFor(k)(v) });
		});
		var d = C.facts(list);
		if (!notes.length) return d;
		var w = C.el('div', {}, d);
		notes.forEach(function (n) { w.appendChild(n); });
		return w;
	};

	/* Recommendations: [[list, view], ...], each rule (id and message) once
	 * with the evidence of every place it fired, and a link to its view. */
	C.recoGroups = function (lists) {
		var groups = [], by = {};
		lists.forEach(function (p) {
			(p[0] || []).forEach(function (r) {
				var k = (r.id || '') + '\u0001' + (r.message || ''), g = by[k];
				if (!g) groups.push(g = by[k] = { id: r.id, message: r.message, view: p[1], ev: [] });
				if (r.evidence) g.ev.push(typeof r.evidence === 'string' ? r.evidence
					: JSON.stringify(r.evidence));
			});
		});
		var d = C.el('div', { cls: 'recos' });
		groups.forEach(function (g) {
			var ev = C.el('ul', { cls: 'ev' });
			g.ev.slice(0, 8).forEach(function (e) { ev.appendChild(C.el('li', {}, e)); });
			if (g.ev.length > 8) ev.appendChild(C.el('li', {}, (g.ev.length - 8) + ' more places'));
			d.appendChild(C.el('div', { cls: 'reco', 'data-id': g.id || '' },
				C.el('b', {}, (g.id || '').replace(/-/g, ' ')), ' \u2014 ', g.message || '',
				g.view ? C.el('a', { href: C.href(g.view), cls: 'go' }, ' see ' +
					(C.byId(g.view) ? C.byId(g.view).title : g.view) + ' \u2192') : null,
				g.ev.length ? ev : null));
		});
		d.count = groups.length;
		return d;
	};
	C.recos = function (list, view) { return C.recoGroups([[list, view]]); };
})(CBN);
