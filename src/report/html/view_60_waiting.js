/*
 * view_60_waiting.js — #waiting: the "waiting" section (off-CPU and the CPU
 * verdict): efficiency, what on-CPU time went to and where threads waited as
 * bars, then the per-thread, site, lock and wall-function tables.
 */
'use strict';
CBN.view({
	id: 'waiting', title: 'Waiting',
	has: function (d) { return d.report && d.report.waiting; },
	render: function (el, d) {
		var C = CBN, w = d.report.waiting;
		el.appendChild(C.el('h2', {}, 'Waiting'));
		el.appendChild(C.el('div', { cls: 'verdict' }, C.el('b', {}, 'CPU side: '),
			w.verdict_text || w.verdict || 'no verdict'));
		el.appendChild(C.facts([
			{ label: 'Parallel efficiency', value: C.pct(w.efficiency), title: 'busy threads\' time on ' +
				'the CPU over their wall time' },
			{ label: 'Busy threads', value: C.count(w.busy_threads) + ' of ' + C.count(w.threads) },
			{ label: 'On the CPU', value: C.ns(w.cpu_ns) },
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
				var col = C.color(k);
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
			var rows = w[key] || [];
			if (!rows.length) return;
			el.appendChild(C.el('h3', {}, title));
			var t = C.table(rows, cols, { sort: sort });
			t.el.setAttribute('data-table', key);
			el.appendChild(t.el);
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
			C.check(sec.querySelector('.verdict').textContent.indexOf(w.verdict) >= 0, 'no verdict');
			['per_thread', 'locks', 'sites'].forEach(function (k) {
				var t = sec.querySelector('[data-table="' + k + '"] tbody');
				var want = Math.min(500, (w[k] || []).length);
				C.check(want ? t && t.children.length === want : !t, k + ': ' +
					(t ? t.children.length : 'no') + ' rows for ' + want);
				out.push(k + '=' + want);
			});
			return 'verdict=' + w.verdict + ' ' + out.join(' ');
		}
	}
});
