/*
 * view_10_overview.js — #overview: the answer at a glance.  The run's one
 * verdict, its headline figures in words and units, the step-time
 * breakdown (per step: GPU busy, data copy, sync wait, launch/CPU, idle,
 * from the report's steps[].breakdown; without steps the same over the run
 * from the page's html.breakdown), the top functions, operators and
 * kernels, every recommendation once with its evidence, and the data
 * quality notes.
 */
'use strict';
CBN.view({
	id: 'overview', title: 'Overview',
	render: function (el, d) {
		var C = CBN, r = d.report || {}, run = r.run || {}, cu = r.cuda || {}, w = r.waiting;
		var o = cu.overview, m = r.memory;
		el.appendChild(C.el('div', { cls: 'verdict run-verdict' }, C.el('b', {}, 'Verdict: '),
			(r.verdict && r.verdict.text) || 'no verdict: the run recorded too little to say'));
		el.appendChild(C.el('p', { cls: 'cmdline' }, C.el('code', { title: (run.command || []).join(' ') },
			(run.command || []).join(' '))));
		var facts = [
			{ label: 'Wall time', value: C.ns(run.wall_ns), title: 'from the start of the first process ' +
				'to the end of the last' },
			{ label: 'CPU time', value: C.ns(run.cpu_ns), title: 'sampled CPU time of the program\'s ' +
				'threads (the profiler\'s own is apart)' },
			{ label: 'Samples', value: C.count(run.samples), title: 'at ' + C.count(run.frequency_hz) +
				' Hz per thread' },
			{ label: run.processes > 1 ? 'Processes, threads' : 'Threads', value: run.processes > 1
				? C.count(run.processes) + ', ' + C.count(run.threads) : C.count(run.threads) },
			{ label: 'Exit status', value: run.exit_signal ? 'killed by signal ' + run.exit_signal
				: C.count(run.exit_status) }
		];
		if (o) facts.push(
			{ label: 'GPU utilization', value: C.pct(o.gpu_utilization), title: 'kernel time over ' +
				'the GPU window (first to last GPU activity)' },
			{ label: 'GPU kernel time', value: C.ns(cu.totals && cu.totals.kernel_ns) },
			{ label: 'CPU blocked in sync', value: C.ns(o.sync_blocked_ns) });
		/* each memory peak named by its process; the largest three */
		var pname = {}, peaks = (m && m.spaces || []).filter(function (s) { return s.peak_bytes; });
		(r.processes || []).forEach(function (p) { pname[p.pid] = (p.exe || '').split('/').pop(); });
		peaks.sort(function (a, b) { return b.peak_bytes - a.peak_bytes; });
		peaks.slice(0, 3).forEach(function (s) {
			facts.push({ label: s.kind === 'gpu' ? 'Peak on' : 'Peak heap of pid ' + s.pid, name:
				s.kind === 'gpu' ? s.name : pname[s.pid], value: C.bytes(s.peak_bytes), title:
				(s.peak_exact ? 'exact' : 'estimated from the samples') + ', at ' + C.secs(s.peak_s) });
		});
		if (peaks.length > 3)
			facts.push({ label: 'Peak heap, ' + (peaks.length - 3) + ' more processes', value:
				'at most ' + C.bytes(peaks[3].peak_bytes) });
		if (w && w.cores_used != null)
			facts.push({ label: 'CPUs busy', value: w.cpus ? w.cores_used.toFixed(2) + ' of ' +
				C.count(w.cpus) + ' (' + C.pct(w.cores_used / w.cpus) + ')' : w.cores_used.toFixed(2),
				title: 'the run\'s CPU over its wall: CPUs in use on average' });
		if (w && w.efficiency != null)
			facts.push({ label: 'Parallel efficiency', value: C.pct(w.efficiency), title: '(CPU - spin) ' +
				'over the wall times the busy threads at once, at most the CPUs' });
		el.appendChild(C.facts(facts.slice(0, 12)));

		overviewBreakdown(el, d);
		overviewTops(el, d);

		el.appendChild(C.el('h2', {}, 'Recommendations'));
		var recos = C.recoGroups([[cu.recommendations, 'cuda'], [m && m.recommendations, 'memory'],
			[r.steps && r.steps.recommendations, 'steps'], [w && w.recommendations, 'waiting'],
			[r.distributed && r.distributed.recommendations, 'distributed']]);
		el.appendChild(recos.count ? recos : C.el('p', { cls: 'muted' }, 'None: no rule fired on this run.'));
		var lost = lostLine(run.lost);
		if ((r.warnings || []).length || lost) {
			el.appendChild(C.el('h3', {}, 'Data quality'));
			if (lost) el.appendChild(C.el('div', { cls: 'warn' }, lost));
			(r.warnings || []).forEach(function (t) { el.appendChild(C.el('div', { cls: 'warn' }, t)); });
		}
	},
	selftests: {
		/* a CPU run's CPUs in use: a bar per bin of html.cores, each as
		 * high as the CPU its programs used in it, on an axis in CPUs */
		cores: function (sec, d) {
			var C = CBN, cr = d.html && d.html.cores, box = sec.querySelector('#cores');
			if (!box) return 'skipped: a GPU run or one with steps';
			var bars = box.querySelectorAll('g.sbar'), n = cr.bins.length / cr.series.length;
			C.check(bars.length === n, bars.length + ' bars for ' + n + ' bins');
			var ticks = Array.prototype.map.call(box.querySelectorAll('text.tick'), function (t) {
				return t.textContent; });
			C.check(ticks.some(function (t) { return /^[0-9.]+$/.test(t); }), 'no axis in CPUs');
			var most = 0;
			for (var i = 0; i < cr.bins.length; i += cr.series.length)
				most = Math.max(most, cr.bins.slice(i, i + cr.series.length).reduce(function (a, b) {
					return a + b; }, 0) / cr.bin_ns);
			return 'bars=' + bars.length + ' series=' + cr.series.join('|') + ' most=' +
				most.toFixed(2) + ' cpus=' + cr.cpus;
		},
		/* the step-time breakdown: a bar per step (or time bin), its parts
		 * adding up to the step, a y axis in time units, a legend that
		 * ends with Idle */
		breakdown: function (sec, d) {
			var C = CBN, st = d.report.steps, box = sec.querySelector('#breakdown');
			if (!box) return 'skipped: no breakdown in this run';
			var bars = box.querySelectorAll('g.sbar'), steps = st && st.steps && st.steps.length &&
				st.steps[0].breakdown ? st.steps.slice(0, 400) : null;
			if (steps) {
				C.check(bars.length === steps.length, bars.length + ' bars for ' + steps.length + ' steps');
				steps.forEach(function (x) {
					var sum = CBN_SPLIT.reduce(function (a, p) { return a + (x.breakdown[p.key] || 0); }, 0);
					C.check(Math.abs(sum - x.duration_ns) <= 1, 'step ' + x.number + ': parts ' + sum +
						' ns of ' + x.duration_ns);
				});
			} else C.check(bars.length === d.html.breakdown.bins.length / 5, bars.length + ' bars for ' +
				d.html.breakdown.bins.length / 5 + ' bins');
			var ticks = Array.prototype.map.call(box.querySelectorAll('text.tick'), function (t) {
				return t.textContent; }).filter(function (t) { return / (ns|us|ms|s)$/.test(t); });
			C.check(ticks.length >= 2, 'no time axis');
			var legend = Array.prototype.map.call(box.nextSibling.querySelectorAll('span'), function (x) {
				return x.textContent; });
			C.check(legend[legend.length - 1] === 'Idle', 'legend ' + legend.join('|'));
			return 'bars=' + bars.length + (steps ? ' per=step' : ' per=bin') + ' legend=' +
				legend.join('|') + ' axis=' + ticks[0] + '..' + ticks[ticks.length - 1];
		}
	}
});

/* The five parts of the step-time breakdown, in the analysis's order
 * (src/analysis/step_split.h). */
var CBN_SPLIT = [
	{ key: 'kernel_ns', name: 'GPU busy', color: '#2f9e44', help: 'a kernel ran on a GPU' },
	{ key: 'copy_ns', name: 'Data copy', color: '#1c7ed6', help: 'a copy or set ran, no kernel' },
	{ key: 'sync_wait_ns', name: 'Sync wait', color: '#f08c00', help: 'the host waited in a ' +
		'synchronizing CUDA call while the GPU was idle' },
	{ key: 'host_ns', name: 'Launch / CPU', color: '#7048e8', help: 'a thread was on the CPU or in ' +
		'another CUDA call, the GPU idle' },
	{ key: 'idle_ns', name: 'Idle', color: '#ced4da', help: 'none of these: sleeping, waiting ' +
		'off the CPU outside CUDA' }
];

/* The breakdown chart: per step when the run has steps, else over the run
 * in bins (html.breakdown). */
function overviewBreakdown(el, d) {
	var C = CBN, st = d.report.steps, bd = d.html && d.html.breakdown, bars = [], title, xl;
	var gpu = !!d.report.cuda, steps = st && st.steps && st.steps.length && st.steps[0].breakdown;
	/* a CPU run without steps: how many CPUs it kept busy, by program (the
	 * wall-time split would cap a build of 2 busy CPUs at one) */
	if (!gpu && !steps && d.html && d.html.cores && d.html.cores.bins) {
		overviewCores(el, d);
		return;
	}
	if (steps) {
		st.steps.slice(0, 400).forEach(function (s) {
			bars.push({ label: String(s.number), parts: CBN_SPLIT.map(function (p) {
				return s.breakdown[p.key] || 0; }), title: 'step ' + s.number + ': ' + C.ns(s.duration_ns) +
				' \u2014 ' + CBN_SPLIT.map(function (p) {
					return p.name + ' ' + C.ns(s.breakdown[p.key] || 0); }).join(', ') });
		});
		title = 'Step-time breakdown';
		xl = 'step (' + st.what + ')';
	} else if (bd && bd.bins && bd.bins.length) {
		var fmt = C.tickText('ns', bd.bin_ns * bd.bins.length / 5, bd.bin_ns);
		for (var i = 0; i + 4 < bd.bins.length; i += 5) {
			var k = i / 5, parts = bd.bins.slice(i, i + 5);
			bars.push({ label: fmt(k * bd.bin_ns), parts: parts, title: fmt(k * bd.bin_ns) + ' to ' +
				fmt((k + 1) * bd.bin_ns) + ': ' + CBN_SPLIT.map(function (p, j) {
					return p.name + ' ' + C.ns(parts[j]); }).join(', ') });
		}
		title = 'Where the time went, over the run';
		xl = 'time since the start (bins of ' + C.ns(bd.bin_ns) + ')';
	} else return;
	/* the parts the run has at all (a CPU run has no GPU parts) */
	var used = CBN_SPLIT.map(function (p, k) {
		return bars.some(function (b) { return b.parts[k] > 0; }) || k === 4; });
	var series = CBN_SPLIT.filter(function (p, k) { return used[k]; }).map(function (p) {
		return { name: !gpu && p.key === 'host_ns' ? 'On CPU' : p.name, color: p.color, help: p.help };
	});
	bars.forEach(function (b) { b.parts = b.parts.filter(function (v, k) { return used[k]; }); });
	el.appendChild(C.el('h2', {}, title));
	var box = C.el('div', { id: 'breakdown' });
	el.appendChild(box);
	C.stackedBars(box, { bars: bars, series: series, kind: 'ns', ylabel: st ? 'step time' : 'time',
		xlabel: xl, height: 230, onbar: st ? function () { location.hash = '#steps'; } : null });
	var tot = CBN_SPLIT.map(function () { return 0; }), all = 0;
	bars.forEach(function (b) { b.parts.forEach(function (v, k) { tot[k] += v; all += v; }); });
	el.appendChild(C.el('p', { cls: 'muted' }, 'Each instant counts once, for the first of these going ' +
		'on then, in the order of the legend' + (st ? '; over all steps: ' : ': ') +
		series.map(function (s, k) { return s.name + ' ' + C.pct(all ? tot[k] / all : 0); }).join(', ') +
		(st ? '. Median step ' + C.ns(st.median_ns) + ', slowest ' + C.ns(st.max_ns) + '.' : '.')));
}

/* The CPUs in use over the run, stacked by program (html.cores: sampled
 * CPU ns per bin, the four programs of most CPU and the rest), in CPUs. */
var CBN_PROG_COLORS = ['#1c7ed6', '#f08c00', '#2f9e44', '#ae3ec9', '#adb5bd'];
function overviewCores(el, d) {
	var C = CBN, cr = d.html.cores, ns = cr.series.length, bars = [];
	var fmt = C.tickText('ns', cr.start_ns + cr.bin_ns * cr.bins.length / ns, cr.bin_ns);
	for (var i = 0; i + ns <= cr.bins.length; i += ns) {
		var k = i / ns, t = cr.start_ns + k * cr.bin_ns, parts = cr.bins.slice(i, i + ns).map(function (v) {
			return v / cr.bin_ns; });
		bars.push({ label: fmt(t), parts: parts, title: fmt(t) + ' to ' + fmt(t + cr.bin_ns) + ': ' +
			cr.series.map(function (n, j) { return n + ' ' + parts[j].toFixed(2) + ' CPUs'; }).join(', ') });
	}
	el.appendChild(C.el('h2', {}, 'CPUs in use over the run' + (ns > 1 ? ', by program' : '')));
	var box = C.el('div', { id: 'cores' });
	el.appendChild(box);
	C.stackedBars(box, { bars: bars, series: cr.series.map(function (n, j) {
		return { name: n, isName: n !== 'other programs', color: CBN_PROG_COLORS[j %
			CBN_PROG_COLORS.length], help: 'the sampled CPU ' +
			'of ' + n + ' in each bin, over the bin\'s length' }; }), kind: 'cpus', max: cr.cpus,
		ylabel: 'CPUs in use', xlabel: 'time since the start (bins of ' + C.ns(cr.bin_ns) + ')' +
		(cr.cpus ? '; the machine has ' + cr.cpus + ' CPU' + (cr.cpus === 1 ? '' : 's') : ''),
		height: 230 });
}

/* The heaviest functions, operators and kernels, five each. */
function overviewTops(el, d) {
	var C = CBN, r = d.report, grid = C.el('div', { cls: 'tops' }), cpu = r.run.cpu_ns || 1;
	function top(title, href, rows, cols) {
		if (!rows || !rows.length) return;
		grid.appendChild(C.el('div', {}, C.el('h3', {}, C.el('a', { href: href }, title)),
			C.table(rows.slice(0, 5), cols, { compact: true }).el));
	}
	/* a run of several programs: the programs first (perf report --sort comm) */
	var progs = (r.programs || []).filter(function (g) { return g.cpu_ns > 0; });
	if (progs.length > 1)
		top('Programs (CPU)', '#cpu', progs, [
			{ key: 'name', name: 1, label: 'Program', cell: function (x) {
				return C.el('span', { title: x.exe }, x.name); } },
			{ key: 'cpu_ns', label: 'CPU', num: 1, fmt: C.ns },
			{ key: 'share', label: 'Share', num: 1, get: function (x) { return x.cpu_ns / cpu; }, fmt: C.pct },
			{ key: 'processes', label: 'Processes', num: 1, fmt: C.count }
		]);
	top('Top functions (self CPU)', '#cpu', (r.functions || []).filter(function (f) {
		return f.self_ns > 0; }).sort(function (a, b) { return b.self_ns - a.self_ns; }), [
		{ key: 'name', name: 1, label: 'Function', cell: function (x) {
			return C.el('a', { href: C.href('cpu', { q: x.name }), title: x.name }, x.short_name || x.name); } },
		{ key: 'self_ns', label: 'Self', num: 1, fmt: C.ns },
		{ key: 'share', label: 'Share', num: 1, get: function (x) { return x.self_ns / cpu; }, fmt: C.pct }
	]);
	var ops = r.operators && r.operators.rows;
	if (ops && ops.length) {
		var gpu = ops.some(function (x) { return x.cuda_total_ns > 0; }), k = gpu ? 'cuda_total_ns' : 'cpu_total_ns';
		top('Top operators', '#cuda', ops.slice().sort(function (a, b) { return b[k] - a[k]; }), [
			{ key: 'name', name: 1, label: 'Operator' },
			{ key: k, label: gpu ? 'CUDA total' : 'CPU total', num: 1, fmt: C.ns },
			{ key: 'launches', label: 'Launches', num: 1, fmt: C.count }
		]);
	}
	var ks = r.cuda && r.cuda.kernels;
	top('Top kernels', '#kernels', (ks || []).slice().sort(function (a, b) { return b.total_ns - a.total_ns; }), [
		{ key: 'name', name: 1, label: 'Kernel' },
		{ key: 'total_ns', label: 'Total', num: 1, fmt: C.ns },
		{ key: 'time_pct', label: 'Share', num: 1, fmt: function (v) { return C.pct(v / 100); } }
	]);
	if (grid.children.length) el.appendChild(grid);
}

/* The text report's Lost line in words (docs/reading-the-report.md): the
 * samples the timer asked for that the agent could not record, by reason;
 * the lost-samples warning points at it.  '' when none were lost. */
function lostLine(lost) {
	var why = { reentrant: 'arrived while the thread was inside the agent',
		buffer_full: 'the session file was full (--buffer-mb)',
		no_thread: 'a thread without agent state', foreign_pid: 'a child forked without the ' +
		'fork handlers', disabled: 'the agent had turned itself off', sandboxed: 'the program ' +
		'was sandboxed', sigqueue: 'the signal queue was full' }, parts = [], n = 0;
	Object.keys(lost || {}).forEach(function (k) {
		if (!lost[k]) return;
		n += lost[k];
		parts.push(CBN.count(lost[k]) + ' ' + (why[k] || k.replace(/_/g, ' ')));
	});
	return n ? 'Lost: ' + CBN.count(n) + ' sample' + (n === 1 ? '' : 's') + ' not recorded (' +
		parts.join('; ') + ')' : '';
}
