/*
 * view_50_memory.js — #memory: the "memory" section of the report (host and
 * GPU spaces, allocation sites with source links, leaks, recommendations),
 * shown when the run was profiled with --memory.
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
