/*
 * view_60_waiting.js — #waiting: the "waiting" section (off-CPU, the figures
 * of the run's verdict): efficiency and the CPUs busy, what on-CPU time went
 * to and where threads waited as bars of colours told apart, then the
 * per-thread, site, lock and wall-function tables.
 */
'use strict';
CBN.view({
	id: 'waiting', title: 'Waiting',
	has: function (d) { return d.report && d.report.waiting; },
	render: function (el, d) {
		var C = CBN, w = d.report.waiting;
		el.appendChild(C.el('h2', {}, 'Waiting'));
		/* the report's one verdict is the overview's: this view gives its figures */
		el.appendChild(C.facts([
			{ label: 'Parallel efficiency', value: C.pct(w.efficiency), title: '(CPU - spin) over the ' +
				'wall times the busy threads at once, at most the CPUs' },
			{ label: 'CPUs busy', value: w.cores_used == null ? null : w.cpus ? w.cores_used.toFixed(2) +
				' of ' + C.count(w.cpus) : w.cores_used.toFixed(2), title: 'the run\'s CPU over its ' +
				'wall: CPUs in use on average' },
			{ label: 'Busy threads', value: C.count(w.busy_threads) + ' of ' + C.count(w.threads) +
				(w.busy_at_once ? ', up to ' + C.count(w.busy_at_once) + ' at once' : '') },
			{ label: 'On the CPU', value: C.ns(w.cpu_ns) },
			{ label: 'In the profiler', value: w.profiler_ns ? C.ns(w.profiler_ns) : null,
				title: 'on the CPU in cbottleneck\'s own code (allocation hooks, annotation ' +
				'writes, CUDA callbacks): in no table' },
			{ label: 'Off the CPU', value: w.offcpu ? C.ns(w.off_ns) : null },
			{ label: 'Blocked (est.)', value: C.ns(w.blocked_est_ns), title: 'threads\' time neither ' +
				'on the CPU nor runnable' },
			{ label: 'Threads\' wall time', value: C.ns(w.thread_ns) },
			{ label: 'Off-CPU sampling', value: w.offcpu ? C.count(w.rate_hz) + ' Hz' : 'off',
				title: w.offcpu ? '' : 'profile with --off-cpu to see where threads wait' }
		]));
		[['On-CPU time by activity', w.activities], ['Off-CPU time by cause', w.off_cpu]].forEach(function (p) {
			var o = p[1] || {}, tot = 0, bar = C.el('div', { cls: 'bar' }), lg = C.el('div', { cls: 'legend' });
			Object.keys(o).forEach(function (k) { tot += o[k] || 0; });
			if (!tot) return;
			el.appendChild(C.el('h3', {}, p[0]));
			Object.keys(o).forEach(function (k) {
				if (!o[k]) return;
				var col = WAIT_COLORS[k] || C.color(k);
				bar.appendChild(C.el('div', { style: 'background:' + col + ';width:' +
					(100 * o[k] / tot).toFixed(2) + '%', title: k + ' ' + C.ns(o[k]) }));
				lg.appendChild(C.el('span', {}, C.el('i', { style: 'background:' + col }),
					k + ' ' + C.ns(o[k]) + ' (' + C.pct(o[k] / tot) + ')'));
			});
			el.appendChild(bar);
			el.appendChild(lg);
		});
		if (w.critical) el.appendChild(C.el('p', {}, 'Critical thread: ' + w.critical.name + ' (thread ' +
			w.critical.tid + '), on the critical path ' + C.pct(w.critical.share) + ' of the time' +
			(w.critical.waiters ? ', ' + w.critical.waiters + ' threads waited for it' : '') + '.'));
		var recos = C.recos(w.recommendations, null);
		if (recos.count) el.appendChild(recos);
		function table(key, title, cols, sort) {
			var rows = waitRows(w, key);
			if (!rows.length) return;
			el.appendChild(C.el('h3', {}, title));
			var t = C.table(rows, cols, { sort: sort });
			t.el.setAttribute('data-table', key);
			el.appendChild(t.el);
			var left = (w[key] || []).length - rows.length;
			if (left) el.appendChild(C.el('p', { cls: 'muted' }, left + ' thread' + (left === 1 ? '' : 's') +
				' without a moment on or off the CPU left out (an image exec replaced at once)'));
		}
		var src = { key: 'file', label: 'Source', cell: function (x) { return C.srcLink(x.file, x.line); } };
		table('per_thread', 'Threads', [
			{ key: 'name', label: 'Thread', name: 1, get: function (x) { return x.name + ' (' + x.tid + ')'; } },
			{ key: 'wall_ns', label: 'Wall', num: 1, fmt: C.ns },
			{ key: 'cpu_ns', label: 'On CPU', num: 1, fmt: C.ns },
			{ key: 'spin_ns', label: 'Spinning', num: 1, fmt: C.ns },
			{ key: 'off_ns', label: 'Off CPU', num: 1, fmt: C.ns },
			{ key: 'lock_wait_ns', label: 'Lock wait', num: 1, fmt: C.ns },
			{ key: 'held_for_ns', label: 'Held locks others wanted', num: 1, fmt: C.ns },
			{ key: 'busy', label: 'Busy', num: 1, fmt: C.pct }
		], 'wall_ns');
		table('sites', 'Where threads waited', [
			{ key: 'function', label: 'Function', name: 1 },
			{ key: 'ns', label: 'Waiting', num: 1, fmt: C.ns },
			{ key: 'threads', label: 'Threads', num: 1, fmt: C.count },
			{ key: 'call', label: 'In call', name: 1 },
			{ key: 'kind', label: 'Kind' }, src
		], 'ns');
		table('locks', 'Contended locks', [
			{ key: 'function', label: 'Taken in', name: 1 },
			{ key: 'wait_ns', label: 'Wait', num: 1, fmt: C.ns },
			{ key: 'contended_ns', label: 'Contended', num: 1, fmt: C.ns },
			{ key: 'waiters', label: 'Waiters', num: 1, fmt: C.count },
			{ key: 'holder_name', label: 'Holder', get: function (x) { return x.holder_name ? x.holder_name +
				' (' + x.holder_tid + ')' : ''; } },
			{ key: 'holder_share', label: 'Holder share', num: 1, fmt: C.pct },
			{ key: 'addr', label: 'Address' }, src
		], 'wait_ns');
		table('wall_functions', 'Functions on and off the CPU', [
			{ key: 'function', label: 'Function', name: 1 },
			{ key: 'self_on_ns', label: 'Self on CPU', num: 1, fmt: C.ns },
			{ key: 'self_off_ns', label: 'Self off CPU', num: 1, fmt: C.ns },
			{ key: 'total_on_ns', label: 'Total on CPU', num: 1, fmt: C.ns },
			{ key: 'total_off_ns', label: 'Total off CPU', num: 1, fmt: C.ns }
		], 'total_off_ns');
	},
	selftests: {
		/* the verdict, and the lock and per-thread tables with a row per
		 * entry of the report (the first 500) */
		tables: function (sec, d) {
			var C = CBN, w = d.report.waiting, out = [];
			/* one verdict per page: the overview's */
			C.check(!sec.querySelector('.verdict'), 'a second verdict in Waiting');
			['per_thread', 'locks', 'sites'].forEach(function (k) {
				var t = sec.querySelector('[data-table="' + k + '"] tbody');
				var want = Math.min(500, waitRows(w, k).length);
				C.check(want ? t && t.children.length === want : !t, k + ': ' +
					(t ? t.children.length : 'no') + ' rows for ' + want);
				out.push(k + '=' + want);
			});
			/* every colour of a bar told apart from its neighbours */
			sec.querySelectorAll('.bar').forEach(function (bar) {
				var cols = Array.prototype.map.call(bar.children, function (x) {
					return x.style.background; });
				cols.forEach(function (c, i) {
					C.check(cols.indexOf(c) === i, 'the colour ' + c + ' twice in a bar'); });
			});
			return 'category=' + w.verdict + ' ' + out.join(' ');
		}
	}
});

/* The rows of a table of the waiting view: a thread of no moment on or off
 * the CPU (an image exec replaced at once) says nothing. */
function waitRows(w, key) {
	var rows = w[key] || [];
	return key !== 'per_thread' ? rows : rows.filter(function (x) {
		return x.wall_ns || x.cpu_ns || x.off_ns; });
}

/* The activities' and the wait kinds' colours: each told apart at a glance
 * (hash colours gave sleep and child the same blue). */
var WAIT_COLORS = {
	compute: '#2f9e44', spin: '#e03131', kernel: '#f08c00', allocator: '#7048e8',
	'memcpy/memset': '#1098ad', 'start-up': '#868e96',
	futex: '#c2255c', io: '#1c7ed6', poll: '#74c0fc', sleep: '#fab005', child: '#37b24d',
	fault: '#e8590c', other: '#adb5bd', runnable: '#9c36b5'
};
