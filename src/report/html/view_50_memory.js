/*
 * view_50_memory.js — #memory: the "memory" section of the report (host and
 * GPU spaces with their live and resident bytes over time, allocation sites
 * with source links, leaks, recommendations), shown when the run was profiled
 * with --memory.
 */
'use strict';
CBN.view({
	id: 'memory', title: 'Memory',
	has: function (d) { return d.report && d.report.memory; },
	render: function (el, d) {
		var C = CBN, m = d.report.memory;
		el.appendChild(C.el('h2', {}, 'Memory'));
		el.appendChild(C.cards(m));
		el.appendChild(C.recos(m.recommendations));
		(m.spaces || []).forEach(function (s) {
			el.appendChild(C.el('h3', {}, (s.name || s.kind) + (s.pid ? ' (pid ' + s.pid + ')' : '')));
			el.appendChild(C.cards(s));
			if (s.timeline && (s.timeline.t_s || []).length > 1) el.appendChild(memoryChart(s.timeline));
		});
		if ((m.sites || []).length) {
			el.appendChild(C.el('h3', {}, 'allocation sites'));
			el.appendChild(C.table(m.sites.map(function (s, i) { s.site = i; return s; }), [
				{ key: 'function', name: 1 }, { key: 'kind' },
				{ key: 'bytes', num: 1, fmt: C.bytes }, { key: 'allocs', num: 1 },
				{ key: 'live_end_bytes', label: 'live at end', num: 1, fmt: C.bytes },
				{ key: 'max_live_bytes', label: 'max live', num: 1, fmt: C.bytes },
				{ key: 'median_life_ns', label: 'median life', num: 1, fmt: C.ns },
				{ key: 'file', label: 'file:line', cell: function (x) { return C.srcLink(x.file, x.line); } }
			], { sort: 'bytes' }).el);
		}
		C.tables(el, { leaks: m.leaks });
	}
});

/* Live (and resident, when recorded) bytes over the run as an SVG chart. */
function memoryChart(tl) {
	var C = CBN, W = 900, H = 140, t = tl.t_s, tmax = t[t.length - 1] || 1, max = 1, ns = 'http://www.w3.org/2000/svg';
	var series = [['live_bytes', '#1c7ed6'], ['resident_bytes', '#adb5bd']].filter(function (x) {
		return Array.isArray(tl[x[0]]) && tl[x[0]].length === t.length; });
	series.forEach(function (x) { tl[x[0]].forEach(function (v) { if (v > max) max = v; }); });
	var svg = document.createElementNS(ns, 'svg');
	svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
	svg.setAttribute('style', 'width:100%;max-width:' + W + 'px;height:auto;background:#f8f9fa');
	series.forEach(function (x) {
		var pl = document.createElementNS(ns, 'polyline');
		pl.setAttribute('fill', 'none');
		pl.setAttribute('stroke', x[1]);
		pl.setAttribute('points', t.map(function (ts, i) {
			return (W * ts / tmax).toFixed(1) + ',' + (H - 4 - (H - 8) * tl[x[0]][i] / max).toFixed(1);
		}).join(' '));
		svg.appendChild(pl);
	});
	var lg = C.el('div', { cls: 'legend' });
	series.forEach(function (x) { lg.appendChild(C.el('span', {}, C.el('i', { style: 'background:' + x[1] }),
		x[0].replace('_', ' '))); });
	lg.appendChild(C.el('span', { cls: 'muted' }, 'max ' + C.bytes(max) + ' over ' + tmax.toFixed(2) + ' s'));
	return C.el('div', {}, svg, lg);
}
