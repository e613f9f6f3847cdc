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
		el.appendChild(C.el('div', { cls: 'verdict' }, C.el('b', {}, 'Verdict: ' + (w.verdict || '?')),
			' ', w.verdict_text || ''));
		el.appendChild(C.cards(w));
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
					k + ' ' + C.ns(o[k])));
			});
			el.appendChild(bar);
			el.appendChild(lg);
		});
		if (w.critical) el.appendChild(C.el('p', {}, 'Critical thread: ' + w.critical.name + ' (tid ' +
			w.critical.tid + '), ' + C.pct(w.critical.share)));
		el.appendChild(C.recos(w.recommendations));
		C.tables(el, w, ['recommendations']);
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
