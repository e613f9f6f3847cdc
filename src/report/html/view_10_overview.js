/*
 * view_10_overview.js — #overview: the run header, the run's verdict, then
 * the verdicts of its areas (CUDA's and the "waiting" section's), GPU
 * utilization and estimates, the time breakdown
 * per step (else per second of the timeline) and every recommendation with
 * its evidence and a link to the view it comes from.
 */
'use strict';
CBN.view({
	id: 'overview', title: 'Overview',
	render: function (el, d) {
		var C = CBN, r = d.report || {}, run = r.run || {}, cu = r.cuda || {}, w = r.waiting;
		el.appendChild(C.el('h2', {}, 'Run'));
		/* the run's one verdict first; the CPU and GPU ones below detail it */
		if (r.verdict && r.verdict.text)
			el.appendChild(C.el('div', { cls: 'verdict run-verdict' }, C.el('b', {}, 'Verdict: '),
				r.verdict.text));
		el.appendChild(C.el('p', {}, C.el('code', {}, (run.command || []).join(' '))));
		el.appendChild(C.cards({ wall_ns: run.wall_ns, cpu_ns: run.cpu_ns, samples: run.samples,
			processes: run.processes, threads: run.threads, frequency_hz: run.frequency_hz,
			exit_status: run.exit_status }));
		if (w && w.verdict)
			el.appendChild(C.el('div', { cls: 'verdict' }, C.el('b', {}, 'CPU verdict: ' + w.verdict),
				' ', w.verdict_text || '', w.efficiency != null ? ' (efficiency ' +
				C.pct(w.efficiency) + ')' : '', ' ', C.el('a', { href: '#waiting' }, '\u2192 waiting')));
		if (cu.overview) {
			var o = cu.overview;
			el.appendChild(C.el('div', { cls: 'verdict' }, C.el('b', {}, 'GPU verdict: ' +
				(o.verdict || '?')), ' ', C.el('a', { href: '#cuda' }, '\u2192 CUDA')));
			el.appendChild(C.cards({ gpu_utilization: o.gpu_utilization,
				est_sm_efficiency: o.est_sm_efficiency, est_achieved_occupancy: o.est_achieved_occupancy,
				gpu_ns: o.gpu_ns, sync_blocked_ns: o.sync_blocked_ns, gpu_idle_gaps_ns: o.gpu_idle_gaps_ns }));
		}
		overviewBreakdown(el, d);
		el.appendChild(C.el('h2', {}, 'Recommendations'));
		var n = 0;
		[['cuda', cu.recommendations], ['memory', r.memory && r.memory.recommendations],
		 ['steps', r.steps && r.steps.recommendations], ['waiting', w && w.recommendations]]
			.forEach(function (p) {
				if (p[1] && p[1].length) { el.appendChild(C.recos(p[1], p[0])); n += p[1].length; }
			});
		if (!n) el.appendChild(C.el('p', { cls: 'muted' }, 'None: no rule fired on this run.'));
		if ((r.warnings || []).length) {
			el.appendChild(C.el('h3', {}, 'Data quality'));
			r.warnings.forEach(function (t) { el.appendChild(C.el('div', { cls: 'warn' }, t)); });
		}
		var f = (r.functions || []).slice(0, 5);
		if (f.length) {
			el.appendChild(C.el('h3', {}, 'Hottest functions'));
			f.forEach(function (x) {
				el.appendChild(C.el('div', {}, C.el('a', { href: C.href('cpu', { q: x.name }) }, x.name),
					' ' + C.ns(x.self_ns) + ' self, ', C.srcLink(x.file, x.line)));
			});
		}
	}
});

/* Stacked bars: per step when steps exist (GPU busy, sync wait, CPU, other,
 * from the steps table), else per second of the timeline (CPU lanes' and GPU
 * lanes' busy time). */
function overviewBreakdown(el, d) {
	var C = CBN, st = d.report.steps, bars = [], keys, colors = ['#2f9e44', '#f08c00', '#1c7ed6', '#adb5bd'];
	if (st && st.steps && st.steps.length) {
		keys = ['GPU busy', 'sync wait', 'CPU', 'other'];
		st.steps.slice(0, 200).forEach(function (s) {
			var dur = s.duration_ns || 1, g = s.gpu_busy_ns || 0, sy = s.sync_ns || 0;
			var cpu = Math.max(0, Math.min(s.cpu_ns || 0, dur) - sy);
			bars.push({ label: 'step ' + s.number, total: dur,
				parts: [g, sy, cpu, Math.max(0, dur - g - sy - cpu)] });
		});
		el.appendChild(C.el('h2', {}, 'Time per step'));
	} else {
		var tl = d.html && d.html.timeline;
		if (!tl || !tl.lanes || !tl.lanes.length) return;
		var secs = Math.max(1, Math.ceil(tl.span_ns / 1e9)), i;
		for (i = 0; i < secs && i < 120; i++) bars.push({ label: i + ' s', total: 0, parts: [0, 0] });
		keys = ['CPU (all threads)', 'GPU (all streams)'];
		tl.lanes.forEach(function (l) {
			var k = l.kind === 'gpu' ? 1 : 0, s = l.slices, j;
			for (j = 0; j + 2 < s.length; j += 3) {
				var b = bars[Math.floor(s[j] / 1e9)];
				if (b) b.parts[k] += s[j + 1];
			}
		});
		bars.forEach(function (b) { b.total = Math.max(1e9, b.parts[0] + b.parts[1]); });
		el.appendChild(C.el('h2', {}, 'Busy time per second'));
	}
	var max = Math.max.apply(null, bars.map(function (b) { return b.total; }));
	var lg = C.el('div', { cls: 'legend' });
	keys.forEach(function (k, i) {
		lg.appendChild(C.el('span', {}, C.el('i', { style: 'background:' + colors[i] }), k));
	});
	el.appendChild(lg);
	bars.forEach(function (b) {
		var bar = C.el('div', { cls: 'bar', style: 'width:' + (100 * b.total / max).toFixed(1) + '%',
			title: b.label + ': ' + b.parts.map(function (p, i) { return keys[i] + ' ' + C.ns(p); }).join(', ') });
		b.parts.forEach(function (p, i) {
			if (p > 0) bar.appendChild(C.el('div', { style: 'background:' + colors[i] + ';width:' +
				(100 * p / b.total).toFixed(2) + '%' }));
		});
		el.appendChild(C.el('div', { style: 'display:flex;gap:8px;align-items:center;margin:2px 0' },
			C.el('span', { style: 'width:70px;font-size:12px' }, b.label), bar));
	});
}
