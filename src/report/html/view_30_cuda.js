/*
 * view_30_cuda.js — #cuda: the GPU side's totals and overview, the
 * autograd-style operator table (key_averages), CUDA API calls, copies and
 * sets, and the launch sites linked to the source view.
 */
'use strict';
CBN.view({
	id: 'cuda', title: 'Operators / CUDA',
	has: function (d) { return d.report && d.report.cuda; },
	render: function (el, d) {
		var C = CBN, cu = d.report.cuda;
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
				{ key: 'function', name: 1 }, { key: 'launches', num: 1 },
				{ key: 'gpu_ns', label: 'GPU time', num: 1, fmt: C.ns },
				{ key: 'file', label: 'file:line', cell: function (x) { return C.srcLink(x.file, x.line); } }
			], { sort: 'gpu_ns' }).el);
		}
	}
});
