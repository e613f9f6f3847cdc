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
		/* 132x1x1 reads as 132 */
		function dims(v) {
			if (!Array.isArray(v)) return C.num(v);
			var n = v.length;
			while (n > 1 && v[n - 1] === 1) n--;
			return v.slice(0, n).join('\u00d7');
		}
		el.appendChild(C.el('h2', {}, 'Kernels'));
		el.appendChild(C.table(k, [
			{ key: 'name', label: 'Kernel', name: 1 },
			{ key: 'total_ns', label: 'Total', num: 1, fmt: C.ns },
			{ key: 'time_pct', label: 'GPU share', num: 1, help: 'share of GPU kernel time', cell: function (x) {
				return C.el('div', { style: 'display:flex;gap:6px;align-items:center;justify-content:flex-end' },
					C.el('div', { cls: 'bar', style: 'width:60px' }, C.el('div', { style:
						'background:#2f9e44;width:' + Math.min(100, x.time_pct || 0) + '%' })),
					C.pct((x.time_pct || 0) / 100)); } },
			{ key: 'instances', label: 'Launches', num: 1, fmt: C.count },
			{ key: 'avg_ns', label: 'Average', num: 1, fmt: C.ns },
			{ key: 'med_ns', label: 'Median', num: 1, fmt: C.ns },
			{ key: 'dist', label: 'Durations', get: function (x) { return x.max_ns; },
			  help: 'min \u2500 median \u25c6 max, on one log scale for all kernels; the tooltip gives the figures',
			  cell: function (x) {
				var b = C.el('div', { style: 'position:relative;width:110px;height:12px',
					title: 'min ' + C.ns(x.min_ns) + ', median ' + C.ns(x.med_ns) + ', mean ' +
					C.ns(x.avg_ns) + ', max ' + C.ns(x.max_ns) + ', std. dev. ' + C.ns(x.stddev_ns) });
				b.appendChild(C.el('div', { style: 'position:absolute;top:5px;height:2px;background:#868e96;' +
					'left:' + pos(x.min_ns) + ';right:' + (100 - parseFloat(pos(x.max_ns))) + '%' }));
				b.appendChild(C.el('div', { style: 'position:absolute;top:1px;width:8px;height:10px;' +
					'background:#1c7ed6;margin-left:-4px;left:' + pos(x.med_ns) }));
				return b; } },
			{ key: 'est_occupancy', label: 'Occupancy', num: 1, fmt: C.pct, help: 'estimated achieved occupancy' },
			{ key: 'blocks_per_sm', label: 'Blocks / SM', num: 1, fmt: function (v) { return C.dec(v); } },
			{ key: 'registers', label: 'Registers', num: 1, fmt: C.count },
			{ key: 'grid', label: 'Grid / block', help: 'blocks in the grid / threads in a block',
			  get: function (x) { return dims(x.grid) + ' / ' + dims(x.block); } }
		], { sort: 'total_ns' }).el);
	}
});
