/*
 * view_80_compare.js — #compare (pages of `compare --html`): the gate's table
 * as printed, the differential flame graph of the two reports' call trees
 * ("call_tree": widths are the new run's, red grew, blue shrank, the
 * deeper the colour the larger the change against the frame's size), then
 * the difference per function (self time) as bars.  Reports written before
 * "call_tree" existed get the bars only (docs/html.md).
 */
'use strict';
CBN.view({
	id: 'compare', title: 'Compare',
	has: function (d) { return d.kind === 'compare'; },
	render: function (el, d) {
		var C = CBN, b = d.base, n = d.report, g = d.gate || {};
		var word = ['pass', 'regression', 'bad baseline or expression', 'could not measure'][g.status] || '?';
		el.appendChild(C.el('h2', {}, 'Regression gate: ' + word));
		el.appendChild(C.el('p', { cls: 'muted' }, 'base ' + d.base_file + ' \u2192 new ' + d.new_file));
		el.appendChild(C.el('pre', { cls: 'gate' }, g.table || ''));
		/* each change with its sign and its share of the base */
		function change(label, x, y, title) {
			var dlt = (y || 0) - (x || 0);
			return { label: label, value: (dlt > 0 ? '+' : dlt < 0 ? '\u2212' : '\u00b1') +
				C.ns(Math.abs(dlt)) + (x ? ' (' + (dlt > 0 ? '+' : dlt < 0 ? '\u2212' : '') +
				C.pct(Math.abs(dlt) / x) + ')' : ''), title: title + ': ' + C.ns(x || 0) + ' \u2192 ' +
				C.ns(y || 0) };
		}
		el.appendChild(C.facts([change('Wall time change', b.run.wall_ns, n.run.wall_ns, 'base to new'),
			change('CPU time change', b.run.cpu_ns, n.run.cpu_ns, 'sampled CPU, base to new')]));
		var by = {}, rows;
		(b.functions || []).forEach(function (f) { by[f.name] = { name: f.name, base: f.self_ns, cur: 0 }; });
		(n.functions || []).forEach(function (f) {
			(by[f.name] = by[f.name] || { name: f.name, base: 0, cur: 0 }).cur = f.self_ns;
		});
		rows = Object.keys(by).map(function (k) { var r = by[k]; r.delta = r.cur - r.base; return r; })
			.filter(function (r) { return r.delta !== 0; })
			.sort(function (x, y) { return Math.abs(y.delta) - Math.abs(x.delta); });
		var max = Math.max(1, Math.abs((rows[0] || {}).delta || 0));
		var slot = C.el('div', { id: 'diffflame' });
		el.appendChild(slot);
		el.appendChild(C.el('h2', {}, 'Self time per function: new \u2212 base'));
		var chart = C.el('div', { id: 'diffbars' });
		rows.slice(0, 40).forEach(function (r) {
			var wpct = (50 * Math.abs(r.delta) / max).toFixed(1);
			chart.appendChild(C.el('div', { style: 'display:flex;align-items:center;gap:8px;font-size:12px' },
				C.el('span', { style: 'width:34ch;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;' +
					'font-family:ui-monospace,monospace', title: r.name }, r.name),
				C.el('div', { style: 'position:relative;width:50%;height:12px;background:#f1f3f5' },
					C.el('div', { cls: r.delta > 0 ? 'grew' : 'shrank', style: 'position:absolute;top:0;' +
						'height:12px;' + (r.delta > 0 ? 'left:50%;background:#e03131;'
						: 'right:50%;background:#1c7ed6;') + 'width:' + wpct + '%' })),
				C.el('span', {}, (r.delta > 0 ? '+' : '') + C.ns(r.delta) + '  (' + C.ns(r.base) + ' \u2192 ' +
					C.ns(r.cur) + ')')));
		});
		el.appendChild(chart);
		cmpDiffFlame(slot, b, n, this);
	},
	selftests: {
		/* the change cards: each with its sign and its share of the base */
		cards: function (sec) {
			var C = CBN, cards = sec.querySelectorAll('.cards .card b');
			C.check(cards.length >= 2, cards.length + ' change cards');
			Array.prototype.forEach.call(cards, function (b) {
				C.check(/^[+\u2212\u00b1]/.test(b.textContent), 'a change without a sign: ' + b.textContent);
				C.check(/%\)$/.test(b.textContent) || /^\u00b1/.test(b.textContent),
					'a change without its share: ' + b.textContent);
			});
			return 'cards=' + Array.prototype.map.call(cards, function (b) { return b.textContent; }).join('|');
		},
		/* the differential flame graph: frames coloured by their change,
		 * a frame's text gives base, new and delta; a path on one side
		 * only is drawn (new only: all red) or listed (base only) */
		flame: function (sec) {
			var C = CBN, v = CBN.views.filter(function (x) { return x.id === 'compare'; })[0];
			if (!v.diff) return 'skipped: a report without call_tree';
			var grew = 0, shrank = 0, onlyNew = 0, drawn = 0, f = v.diff.flame, red = null;
			v.diff.nodes.forEach(function (x) {
				if (x.parent < 0) return;
				if (f.rectOf(x)) drawn++;
				if (x.delta > 0) grew++;
				if (x.delta < 0) shrank++;
				if (!x.base && x.total) { onlyNew++; red = red || x; }
			});
			C.check(drawn > 0, 'no frame drawn');
			C.check(grew + shrank > 0, 'no frame changed');
			var t = f.describe(v.diff.nodes[1] || v.diff.nodes[0]);
			C.check(/base .* new .* delta /.test(t), 'the frame text lacks base/new/delta: ' + t);
			if (red) {
				var col = f.colorOf(red);
				C.check(/^hsl\(0,/.test(col), 'a frame of the new run only is ' + col);
			}
			return 'frames=' + drawn + ' grew=' + grew + ' shrank=' + shrank + ' only_new=' + onlyNew +
				' only_base=' + v.diff.gone.length;
		},
		bars: function (sec) {
			var g = sec.querySelectorAll('#diffbars .grew').length, s = sec.querySelectorAll('#diffbars .shrank').length;
			CBN.check(g + s > 0, 'no bars');
			return 'grew=' + g + ' shrank=' + s;
		}
	}
});

/* The differential flame graph of base and new's call trees, into el. */
function cmpDiffFlame(el, b, n, view) {
	var C = CBN;
	view.diff = null;
	el.appendChild(C.el('h2', {}, 'Differential flame graph'));
	if (!b.call_tree || !n.call_tree) {
		el.appendChild(C.el('p', { cls: 'muted' }, 'One of the reports has no call tree (written ' +
			'before --json kept "call_tree"): the differences are per function only, below.'));
		return;
	}
	/* direct recursion folded in both, as the CPU view's graph: a deep
	 * recursion would otherwise stack a full-width row per level */
	var bn = C.collapseRecursion(C.flameFromCallTree(b.call_tree)).nodes;
	var nn = C.collapseRecursion(C.flameFromCallTree(n.call_tree)).nodes;
	var gone = C.diffTrees(bn, nn);
	el.appendChild(C.el('p', { cls: 'muted' }, 'Widths are the new run\'s time; red grew, blue ' +
		'shrank against the base run, the deeper the colour the larger the change against the ' +
		'frame\'s own size (a frame of the new run only is full red). Point at a frame for its ' +
		'base, new and delta; click zooms.'));
	var box = C.el('div', {});
	el.appendChild(box);
	var fl = C.flame(box, nn, {
		diff: function (x) {
			var m = Math.max(x.total, x.base);
			return m ? x.delta / m : null;
		},
		describe: function (x) {
			return 'base ' + C.ns(x.base) + '  new ' + C.ns(x.total) + '  delta ' +
				(x.delta > 0 ? '+' : '') + C.ns(x.delta) + (x.base ? '' : ' (new run only)');
		}
	});
	if (gone.length) {
		el.appendChild(C.el('h3', {}, 'Only in the base run (not drawn: no width in the new run)'));
		el.appendChild(C.table(gone.slice(0, 50).map(function (x) {
			return { path: x.path.split('\u0001').slice(1).join(' \u2192 '), base_ns: x.total };
		}), [{ key: 'path', label: 'Call path', name: 1 },
			{ key: 'base_ns', label: 'Base total', num: 1, fmt: C.ns }],
		{ sort: 'base_ns', filter: false }).el);
	}
	view.diff = { nodes: nn, flame: fl, gone: gone };
}
