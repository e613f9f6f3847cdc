/*
 * view_55_steps.js — #steps: where the steps came from, their durations'
 * distribution, the step-time breakdown per step, the slowest steps with
 * what grew in them, every step in a table, and the capture windows.
 */
'use strict';
CBN.view({
	id: 'steps', title: 'Steps',
	has: function (d) { return d.report && d.report.steps; },
	render: function (el, d) {
		var C = CBN, s = d.report.steps, list = s.steps || [];
		el.appendChild(C.el('h2', {}, C.count(s.count) + ' steps: ' + (s.what || '')));
		if (s.precision) el.appendChild(C.el('p', { cls: 'muted' }, 'Edges: ' + s.precision + '.'));
		el.appendChild(C.facts([
			{ label: 'Median step', value: C.ns(s.median_ns) },
			{ label: 'p90', value: C.ns(s.p90_ns) },
			{ label: 'Fastest', value: C.ns(s.min_ns) },
			{ label: 'Slowest', value: C.ns(s.max_ns) },
			{ label: 'Mean', value: C.ns(s.mean_ns) },
			{ label: 'All steps', value: C.ns(s.total_ns) },
			s.cold && s.cold.found ? { label: 'First step / median', value: C.dec(s.cold.ratio) + '\u00d7',
				title: 'the first step (start-up) against the median of the others' } : null
		]));
		var recos = C.recos(s.recommendations, null);
		if (recos.count) el.appendChild(recos);
		if (list.length && list[0].breakdown) {
			el.appendChild(C.el('h3', {}, 'Step-time breakdown'));
			var box = C.el('div', { id: 'steps-breakdown' });
			el.appendChild(box);
			C.stackedBars(box, { bars: list.slice(0, 400).map(function (st) {
				return { label: String(st.number), parts: CBN_SPLIT.map(function (p) {
					return st.breakdown[p.key] || 0; }) };
			}), series: CBN_SPLIT, kind: 'ns', ylabel: 'step time', xlabel: 'step', height: 220 });
		}
		(s.slowest || []).forEach(function (sl) {
			el.appendChild(C.el('div', { cls: 'warn' }, 'Step ' + sl.number + ' took ' + C.dec(sl.ratio) +
				'\u00d7 the median' + ((sl.grew || []).length ? '; what grew: ' + sl.grew.map(function (g) {
					return g.name + (g.gpu ? ' (kernel)' : '') + ' ' + C.ns(g.step_ns) + ' (median ' +
						C.ns(g.median_ns) + ')'; }).join(', ') : '') + '.'));
		});
		el.appendChild(C.el('h3', {}, 'Every step'));
		var host = list.some(function (x) { return x.mem_peak != null; });
		var cols = [
			{ key: 'number', label: 'Step', num: 1, fmt: C.count },
			{ key: 'start_ns', label: 'Start', num: 1, fmt: C.ns },
			{ key: 'duration_ns', label: 'Duration', num: 1, fmt: C.ns },
			{ key: 'cpu_ns', label: 'CPU', num: 1, fmt: C.ns },
			{ key: 'gpu_busy_ns', label: 'GPU busy', num: 1, fmt: C.ns },
			{ key: 'sync_ns', label: 'In sync calls', num: 1, fmt: C.ns },
			{ key: 'kernels', label: 'Kernels', num: 1, fmt: C.count },
			{ key: 'copies', label: 'Copies', num: 1, fmt: C.count }
		];
		/* the host's live bytes are read now and then (the memory counter
		 * records): a short step may hold no reading */
		if (host) cols.push({ key: 'mem_peak', label: 'Peak host memory', num: 1, help: 'the most ' +
			'host memory live in the step; \u2014: no reading of host memory fell in it', fmt: function (v) {
			return v == null ? '\u2014' : C.bytes(v); } });
		if (d.report.run.processes > 1) cols.push({ key: 'process', label: 'Process', num: 1, fmt: String });
		el.appendChild(C.table(list, cols, { sort: 'number', dir: 1, filter: false }).el);
		var w = (s.capture || {}).windows || [];
		if (s.capture && s.capture.controlled && w.length) {
			el.appendChild(C.el('h3', {}, 'Capture windows'));
			el.appendChild(C.table(w, [
				{ key: 'start_ns', label: 'From', num: 1, fmt: C.ns },
				{ key: 'end_ns', label: 'To', num: 1, fmt: C.ns },
				{ key: 'len', label: 'Length', num: 1, fmt: C.ns, get: function (x) { return x.end_ns - x.start_ns; } },
				{ key: 'open_cause', label: 'Opened by' },
				{ key: 'close_cause', label: 'Closed by' },
				{ key: 'first_step', label: 'First step', num: 1, fmt: C.count },
				{ key: 'process', label: 'Process', num: 1, fmt: String }
			], { sort: 'start_ns', dir: 1, filter: false }).el);
		}
	}
});
