/*
 * view_30_cuda.js — #cuda: the operator table (framework operators from
 * native frames: sampled CPU, exact CUDA, launches; the entry function's
 * signature on hover), the GPU side's totals and overview, the
 * autograd-style table (key_averages), CUDA API calls, copies and sets, and
 * the launch sites (line -> operator -> kernel) linked to the source view.
 */
'use strict';
CBN.view({
	id: 'cuda', title: 'Operators / CUDA',
	has: function (d) { return d.report && (d.report.cuda || d.report.operators); },
	render: function (el, d) {
		var C = CBN, cu = d.report.cuda || {}, ops = d.report.operators;
		if (ops && (ops.rows || []).length) {
			el.appendChild(C.el('h2', {}, 'Operators'));
			el.appendChild(C.el('p', { cls: 'muted' }, 'CPU: sampled on-CPU time of the samples ' +
				'whose stack holds the operator (innermost: self); CUDA: exact GPU time of what its ' +
				'launches started; launches: API calls that launched GPU work inside it.'));
			el.appendChild(C.table(ops.rows, [
				{ key: 'name', name: 1, cell: function (x) {
					return C.el('span', { title: x.entry || x.name }, x.name); } },
				{ key: 'self_cpu_ns', label: 'sampled self CPU', num: 1, fmt: C.ns },
				{ key: 'cpu_total_ns', label: 'sampled CPU total', num: 1, fmt: C.ns },
				{ key: 'self_cuda_ns', label: 'self CUDA', num: 1, fmt: C.ns },
				{ key: 'cuda_total_ns', label: 'CUDA total', num: 1, fmt: C.ns },
				{ key: 'launches', num: 1 },
				{ key: 'parents', label: 'inside', get: function (x) { return (x.parents || []).join(', '); } },
				{ key: 'framework' }
			], { sort: ops.sort === 'cpu_time_total' ? 'cpu_total_ns' : 'cuda_total_ns' }).el);
		}
		if (!d.report.cuda) return;
		(cu.status || []).forEach(function (s) {
			if (s.state !== 'finished') el.appendChild(C.el('div', { cls: 'warn' },
				'pid ' + s.pid + ': ' + s.state + ' ' + (s.message || '')));
		});
		el.appendChild(C.el('h2', {}, 'Totals'));
		el.appendChild(C.cards(cu.totals));
		if (cu.overview) el.appendChild(C.cards(cu.overview));
		el.appendChild(C.recos(cu.recommendations));
		C.tables(el, { operators: cu.ops, api: cu.api, copies_and_sets: cu.memops });
		if ((cu.launch_sites || []).length) {
			el.appendChild(C.el('h3', {}, 'launch sites'));
			el.appendChild(C.table(cu.launch_sites, [
				{ key: 'function', name: 1, cell: function (x) {
					return C.el('span', { title: x['function'] }, x.short_name || x['function']); } },
				{ key: 'launches', num: 1 },
				{ key: 'gpu_ns', label: 'GPU time', num: 1, fmt: C.ns },
				{ key: 'file', label: 'file:line', cell: function (x) { return C.srcLink(x.file, x.line); } },
				{ key: 'op', label: 'operator' },
				{ key: 'kernel', label: 'kernel (most GPU time)', cell: function (x) {
					return C.el('span', { title: x.kernel || '' }, x.kernel_short_name || x.kernel || ''); } }
			], { sort: 'gpu_ns' }).el);
		}
	}
});
