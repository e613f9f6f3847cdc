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
		var C = CBN, cu = d.report.cuda || {}, ops = d.report.operators, t = cu.totals || {}, o = cu.overview;
		if (ops && (ops.rows || []).length) {
			el.appendChild(C.el('h2', {}, 'Operators'));
			el.appendChild(C.el('p', { cls: 'muted' }, 'CPU: sampled on-CPU time of the samples ' +
				'whose stack holds the operator (innermost: self); CUDA: exact GPU time of what its ' +
				'launches started; launches: API calls that launched GPU work inside it.'));
			el.appendChild(C.table(ops.rows, [
				{ key: 'name', label: 'Operator', name: 1, get: function (x) { return x.name; },
				  cell: function (x) { return C.el('span', { title: x.entry || x.name }, x.name); } },
				{ key: 'self_cpu_ns', label: 'Self CPU', num: 1, fmt: C.ns },
				{ key: 'cpu_total_ns', label: 'CPU total', num: 1, fmt: C.ns },
				{ key: 'self_cuda_ns', label: 'Self CUDA', num: 1, fmt: C.ns },
				{ key: 'cuda_total_ns', label: 'CUDA total', num: 1, fmt: C.ns },
				{ key: 'launches', label: 'Launches', num: 1, fmt: C.count },
				{ key: 'parents', label: 'Inside', name: 1, get: function (x) { return (x.parents || []).join(', '); } },
				{ key: 'framework', label: 'Framework' }
			], { sort: ops.sort === 'cpu_time_total' ? 'cpu_total_ns' : 'cuda_total_ns' }).el);
		}
		if (!d.report.cuda) return;
		(cu.status || []).forEach(function (s) {
			if (s.state !== 'finished') el.appendChild(C.el('div', { cls: 'warn' },
				'process ' + s.pid + ': CUDA tracing ' + s.state + (s.message ? ': ' + s.message : '')));
		});
		el.appendChild(C.el('h2', {}, 'GPU'));
		(cu.gpus || []).forEach(function (g) {
			el.appendChild(C.el('p', { cls: 'muted' }, 'GPU ' + g.device + ': ' + g.name + ', ' +
				C.bytes(g.memory_bytes) + ', ' + g.sm_count + ' SMs, compute capability ' +
				(typeof g.compute_capability === 'number' ? g.compute_capability.toFixed(1)
					: g.compute_capability)));
		});
		el.appendChild(C.facts([
			o ? { label: 'GPU utilization', value: C.pct(o.gpu_utilization), title: 'kernel time over ' +
				'the GPU window' } : null,
			o ? { label: 'Est. SM efficiency', value: C.pct(o.est_sm_efficiency), title: 'kernel ' +
				'time weighted by the SMs its blocks could fill' } : null,
			o ? { label: 'Est. achieved occupancy', value: C.pct(o.est_achieved_occupancy),
				title: 'resident warps over the most an SM holds, weighted by kernel time' } : null,
			{ label: 'Kernels', value: C.count(t.kernels) + ' in ' + C.ns(t.kernel_ns) },
			{ label: 'Copies', value: C.count(t.memcpy) + ' in ' + C.ns(t.memcpy_ns) + ', ' +
				C.bytes(t.memcpy_bytes) },
			t.memset ? { label: 'Sets', value: C.count(t.memset) + ' in ' + C.ns(t.memset_ns) } : null,
			{ label: 'GPU busy', value: C.ns(t.gpu_busy_ns), title: 'union of kernels per device' },
			{ label: 'API calls', value: C.count(t.api_calls) + ' in ' + C.ns(t.api_ns) },
			{ label: 'CPU blocked in sync', value: C.ns(t.sync_ns) },
			o ? { label: 'GPU idle (gaps)', value: C.ns(o.gpu_idle_gaps_ns), title: 'largest ' +
				C.ns(o.largest_gap_ns) + ' of a ' + C.ns(o.window_ns) + ' window' } : null
		]));
		var recos = C.recos(cu.recommendations, null);
		if (recos.count) el.appendChild(recos);
		function table(title, rows, cols, sort) {
			if (!(rows || []).length) return;
			el.appendChild(C.el('h3', {}, title));
			el.appendChild(C.table(rows, cols, { sort: sort }).el);
		}
		var stats = [
			{ key: 'calls', label: 'Calls', num: 1, fmt: C.count },
			{ key: 'total_ns', label: 'Total', num: 1, fmt: C.ns },
			{ key: 'time_pct', label: 'Share', num: 1, fmt: C.fmtFor('time_pct') },
			{ key: 'avg_ns', label: 'Average', num: 1, fmt: C.ns },
			{ key: 'med_ns', label: 'Median', num: 1, fmt: C.ns },
			{ key: 'min_ns', label: 'Min', num: 1, fmt: C.ns },
			{ key: 'max_ns', label: 'Max', num: 1, fmt: C.ns },
			{ key: 'stddev_ns', label: 'Std. dev.', num: 1, fmt: C.ns }
		];
		table('Autograd-style: by API call, kernel, copy and range', cu.ops, [
			{ key: 'name', label: 'Name', name: 1 },
			{ key: 'self_cpu_ns', label: 'Self CPU', num: 1, fmt: C.ns },
			{ key: 'cpu_total_ns', label: 'CPU total', num: 1, fmt: C.ns },
			{ key: 'self_cuda_ns', label: 'Self CUDA', num: 1, fmt: C.ns },
			{ key: 'cuda_total_ns', label: 'CUDA total', num: 1, fmt: C.ns },
			{ key: 'calls', label: 'Calls', num: 1, fmt: C.count },
			{ key: 'cuda_mem', label: 'CUDA memory', num: 1, fmt: C.bytes },
			{ key: 'cpu_mem', label: 'CPU memory', num: 1, fmt: C.bytes },
			{ key: 'kind', label: 'Kind' }
		], 'cuda_total_ns');
		table('CUDA API calls', cu.api, [{ key: 'name', label: 'Call', name: 1 }].concat(stats), 'total_ns');
		table('Copies and sets', cu.memops, [
			{ key: 'name', label: 'Operation', name: 1 },
			{ key: 'count', label: 'Count', num: 1, fmt: C.count },
			{ key: 'total_ns', label: 'Total', num: 1, fmt: C.ns },
			{ key: 'bytes', label: 'Bytes', num: 1, fmt: C.bytes },
			{ key: 'rate', label: 'Throughput', num: 1, get: function (x) {
				return x.total_ns ? x.bytes / (x.total_ns / 1e9) : null; },
			  fmt: function (v) { return v == null ? '' : C.bytes(v) + '/s'; } },
			{ key: 'avg_ns', label: 'Average', num: 1, fmt: C.ns },
			{ key: 'pageable', label: 'From pageable', num: 1, fmt: C.count },
			{ key: 'pinned', label: 'From pinned', num: 1, fmt: C.count }
		], 'total_ns');
		table('Launch sites', cu.launch_sites, [
			{ key: 'function', label: 'Function', name: 1, cell: function (x) {
				return C.el('span', { title: x['function'] }, x.short_name || x['function']); } },
			{ key: 'gpu_ns', label: 'GPU time', num: 1, fmt: C.ns },
			{ key: 'launches', label: 'Launches', num: 1, fmt: C.count },
			{ key: 'kernel', label: 'Kernel (most GPU time)', name: 1, cell: function (x) {
				return C.el('span', { title: x.kernel || '' }, x.kernel_short_name || x.kernel || ''); } },
			{ key: 'op', label: 'Operator', name: 1 },
			{ key: 'file', label: 'Source', cell: function (x) { return C.srcLink(x.file, x.line); } }
		], 'gpu_ns');
	}
});
