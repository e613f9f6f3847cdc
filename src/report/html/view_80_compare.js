/*
 * view_80_compare.js — #compare (pages of `compare --html`): the gate's table
 * as printed, then the difference per function between the two reports (self
 * time, red = grew, blue = shrank).  The JSON reports hold no call tree, so
 * the differential is per function, not per stack (docs/html.md).
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
		el.appendChild(C.cards({ wall_change_ns: (n.run.wall_ns || 0) - (b.run.wall_ns || 0),
			cpu_change_ns: (n.run.cpu_ns || 0) - (b.run.cpu_ns || 0) }));
		var by = {}, rows;
		(b.functions || []).forEach(function (f) { by[f.name] = { name: f.name, base: f.self_ns, cur: 0 }; });
		(n.functions || []).forEach(function (f) {
			(by[f.name] = by[f.name] || { name: f.name, base: 0, cur: 0 }).cur = f.self_ns;
		});
		rows = Object.keys(by).map(function (k) { var r = by[k]; r.delta = r.cur - r.base; return r; })
			.filter(function (r) { return r.delta !== 0; })
			.sort(function (x, y) { return Math.abs(y.delta) - Math.abs(x.delta); });
		var max = Math.max(1, Math.abs((rows[0] || {}).delta || 0));
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
		el.appendChild(C.el('p', { cls: 'muted' }, 'The JSON reports keep functions, not stacks: ' +
			'the differences are per function, not a differential flame graph.'));
	},
	selftests: {
		bars: function (sec) {
			var g = sec.querySelectorAll('#diffbars .grew').length, s = sec.querySelectorAll('#diffbars .shrank').length;
			CBN.check(g + s > 0, 'no bars');
			return 'grew=' + g + ' shrank=' + s;
		}
	}
});
