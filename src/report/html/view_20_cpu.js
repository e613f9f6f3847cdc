/*
 * view_20_cpu.js — #cpu: the cProfile-style function table (sortable by every
 * column, filter box with inline marks; &q= presets the filter), the flame
 * graph / icicle of the merged call tree, and the callers and callees of the
 * function selected in either.
 */
'use strict';
CBN.view({
	id: 'cpu', title: 'CPU',
	has: function (d) { return d.report && d.report.functions && d.report.functions.length; },
	render: function (el, d, params) {
		var C = CBN, r = d.report, cpu = r.run.cpu_ns || 1, v = this;
		var rel = C.el('div', {});
		el.appendChild(C.el('h2', {}, 'Functions'));
		v.table = C.table(r.functions, [
			{ key: 'name', label: 'function', name: 1 },
			{ key: 'self_ns', label: 'self (tottime)', num: 1, fmt: C.ns },
			{ key: 'self_pct', label: 'self %', num: 1, fmt: C.pct,
			  get: function (x) { return x.self_ns / cpu; } },
			{ key: 'total_ns', label: 'total (cumtime)', num: 1, fmt: C.ns },
			{ key: 'total_pct', label: 'total %', num: 1, fmt: C.pct,
			  get: function (x) { return x.total_ns / cpu; } },
			{ key: 'self_samples', label: 'self samples', num: 1 },
			{ key: 'total_samples', label: 'total samples', num: 1 },
			{ key: 'file', label: 'file:line', cell: function (x) { return C.srcLink(x.file, x.line); } },
			{ key: 'module', label: 'module' }
		], { sort: 'self_ns', onrow: function (x) { select(x.name); } });
		el.appendChild(v.table.el);
		var lo = d.html && d.html.left_out;
		if (lo && lo.functions)
			el.appendChild(C.el('p', { cls: 'muted' }, lo.functions + ' lighter functions are left out ' +
				'of this page (the --json report has them all).'));
		if (params.q) v.table.filter(params.q);
		el.appendChild(C.el('h2', {}, 'Flame graph'));
		var h = d.html || {};
		if (!h.tree) {
			el.appendChild(C.el('p', { cls: 'muted' }, 'No call tree: a page of `compare` holds the ' +
				'two JSON reports only, which keep functions, not stacks.'));
			v.nodes = [];
			return;
		}
		v.nodes = C.flameTree(h.tree, h.names || []);
		var box = C.el('div', {});
		el.appendChild(box);
		v.flame = C.flame(box, v.nodes, { onselect: function (x) { select(x.fname); } });
		if (h.tree && h.tree.total_nodes > v.nodes.length)
			el.appendChild(C.el('p', { cls: 'muted' }, 'The ' + h.tree.total_nodes + '-node call tree ' +
				'is shown by its heaviest nodes; the rest is folded into "(other)".'));
		el.appendChild(rel);
		function select(name) {
			var cc = C.callersCallees(v.nodes, name), f = r.functions.filter(function (x) {
				return x.name === name; })[0];
			rel.textContent = '';
			rel.appendChild(C.el('h2', {}, name));
			if (f) rel.appendChild(C.el('p', {}, 'self ' + C.ns(f.self_ns) + ', total ' + C.ns(f.total_ns) +
				' \u2014 ', C.srcLink(f.file, f.line)));
			var sp = C.el('div', { cls: 'split' });
			[['callers', cc.callers], ['callees', cc.callees]].forEach(function (p) {
				var t = C.table(p[1], [{ key: 'name', name: 1 }, { key: 'ns', label: 'time', num: 1,
					fmt: C.ns }], { sort: 'ns', filter: false, onrow: function (x) { select(x.name); } });
				sp.appendChild(C.el('div', {}, C.el('h3', {}, p[0]), t.el));
			});
			rel.appendChild(sp);
			rel.appendChild(C.el('p', { cls: 'muted' }, 'From the call tree: a function that calls ' +
				'itself counts once per level.'));
		}
		v.select = select;
	},
	selftests: {
		/* click the "self" header twice and the "function" header: the rows
		 * must come out in that order */
		sort: function () {
			var C = CBN, t = this.table || CBN.views.filter(function (x) { return x.id === 'cpu'; })[0].table;
			function col(key) {
				var i = Array.prototype.findIndex.call(t.thead.children, function (th) {
					return th.getAttribute('data-key') === key; });
				return Array.prototype.map.call(t.tbody.children, function (tr) {
					return tr.children[i].getAttribute('data-v'); });
			}
			function click(key) {
				Array.prototype.filter.call(t.thead.children, function (th) {
					return th.getAttribute('data-key') === key; })[0].click();
			}
			click('total_ns');
			var a = col('total_ns').map(Number);
			C.check(a.every(function (x, i) { return !i || a[i - 1] >= x; }), 'total not descending');
			click('total_ns');
			a = col('total_ns').map(Number);
			C.check(a.every(function (x, i) { return !i || a[i - 1] <= x; }), 'total not ascending');
			click('name');
			var n = col('name');
			C.check(n.every(function (x, i) { return !i || n[i - 1] <= x; }), 'names not ascending');
			return 'rows=' + a.length + ' first=' + n[0];
		},
		/* type the hottest function's name in the filter box */
		filter: function (sec, d) {
			var C = CBN, t = CBN.views.filter(function (x) { return x.id === 'cpu'; })[0].table;
			var name = d.report.functions[0].name;
			t.input.value = name;
			t.input.dispatchEvent(new Event('input'));
			var rows = t.tbody.children.length, marks = t.tbody.querySelectorAll('mark').length;
			C.check(rows >= 1 && rows < d.report.functions.length, 'filter kept ' + rows + ' rows');
			C.check(marks >= 1, 'no inline mark');
			t.filter('');
			return 'q=' + name + ' rows=' + rows + ' marks=' + marks;
		},
		/* click the middle of the heaviest frame below the root: it must fill
		 * the width; then search for it */
		zoom: function () {
			var C = CBN, v = CBN.views.filter(function (x) { return x.id === 'cpu'; })[0], f = v.flame;
			if (!v.nodes.length) return 'skipped: no call tree in this page';
			var root = v.nodes[0], target = root.kids[0];
			while (target && target.kids.length && target.kids[0].total === target.total)
				target = target.kids[0];
			C.check(target, 'empty call tree');
			var r0 = f.rectOf(target), cr = f.canvas.getBoundingClientRect();
			C.check(r0, 'frame not drawn');
			/* drawn pixels to the page's: the canvas may be shown stretched
			 * (the page narrowed by a scrollbar since the last draw) */
			var w0 = r0.w, sx = cr.width / (f.width() || cr.width || 1);
			f.canvas.dispatchEvent(new MouseEvent('click', { clientX: cr.left + (r0.x + r0.w / 2) * sx,
				clientY: cr.top + r0.y + 5, bubbles: true }));
			var r1 = f.rectOf(target);
			C.check(f.zoomed() === target, 'click did not zoom');
			/* full width of the drawing it is in, whatever the page's width
			 * (the click fills the callers/callees: the page may grow a
			 * scrollbar after the draw, and the redraw follows) */
			C.check(r1 && r1.x === 0 && Math.abs(r1.w - f.width()) < 1,
				'zoomed frame is ' + (r1 && r1.w) + ' wide of ' + f.width());
			C.check(Math.abs(f.canvas.width / (window.devicePixelRatio || 1) - f.width()) < 1,
				'canvas of ' + f.canvas.width + ' px for a drawing ' + f.width() + ' wide');
			f.search(target.fname.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
			C.check(f.matched > 0, 'search matched nothing');
			f.zoomTo(root);
			return 'frame=' + target.fname + ' width ' + Math.round(w0) + '->' + Math.round(r1.w) +
				' matched=' + C.pct(f.matched);
		}
	}
});
