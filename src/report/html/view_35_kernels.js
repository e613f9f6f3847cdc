/*
 * view_35_kernels.js — #kernels: the kernel table with its occupancy
 * columns, each kernel's share of GPU time as a bar, and its duration
 * distribution (min, median, mean, max) on one log scale.
 */
'use strict';
CBN.view({
	id: 'kernels', title: 'Kernels',
	has: function (d) { return d.report && d.report.cuda && (d.report.cuda.kernels || []).length; },
	render: function (el, d) {
		var C = CBN, k = d.report.cuda.kernels, lo = Infinity, hi = 1;
		k.forEach(function (x) {
			if (x.min_ns > 0 && x.min_ns < lo) lo = x.min_ns;
			if (x.max_ns > hi) hi = x.max_ns;
		});
		if (!(lo < hi)) lo = hi / 10;
		function pos(v) { return (100 * (Math.log(Math.max(v, lo)) - Math.log(lo)) /
			(Math.log(hi) - Math.log(lo) || 1)).toFixed(1) + '%'; }
		function dims(v) { return Array.isArray(v) ? v.join('\u00d7') : C.num(v); }
		el.appendChild(C.el('h2', {}, 'Kernels'));
		el.appendChild(C.table(k, [
			{ key: 'name', name: 1 }, { key: 'instances', num: 1 },
			{ key: 'total_ns', label: 'total', num: 1, fmt: C.ns },
			{ key: 'time_pct', label: 'share', num: 1, cell: function (x) {
				return C.el('div', { style: 'display:flex;gap:6px;align-items:center' },
					C.el('div', { cls: 'bar', style: 'width:80px' }, C.el('div', { style:
						'background:#2f9e44;width:' + Math.min(100, x.time_pct || 0) + '%' })),
					(x.time_pct || 0).toFixed(1) + '%'); } },
			{ key: 'avg_ns', label: 'avg', num: 1, fmt: C.ns },
			{ key: 'med_ns', label: 'median', num: 1, fmt: C.ns },
			{ key: 'dist', label: 'min \u2500 median \u25c6 max (log)', get: function (x) { return x.max_ns; },
			  cell: function (x) {
				var b = C.el('div', { style: 'position:relative;width:200px;height:12px',
					title: 'min ' + C.ns(x.min_ns) + ', median ' + C.ns(x.med_ns) + ', mean ' +
					C.ns(x.avg_ns) + ', max ' + C.ns(x.max_ns) + ', stddev ' + C.ns(x.stddev_ns) });
				b.appendChild(C.el('div', { style: 'position:absolute;top:5px;height:2px;background:#868e96;' +
					'left:' + pos(x.min_ns) + ';right:' + (100 - parseFloat(pos(x.max_ns))) + '%' }));
				b.appendChild(C.el('div', { style: 'position:absolute;top:1px;width:8px;height:10px;' +
					'background:#1c7ed6;margin-left:-4px;left:' + pos(x.med_ns) }));
				return b; } },
			{ key: 'grid', get: function (x) { return dims(x.grid); } },
			{ key: 'block', get: function (x) { return dims(x.block); } },
			{ key: 'registers', num: 1 },
			{ key: 'blocks_per_sm', num: 1 },
			{ key: 'est_occupancy', label: 'est. occupancy', num: 1, fmt: C.fmtFor('est_occupancy') }
		], { sort: 'total_ns' }).el);
	}
});
