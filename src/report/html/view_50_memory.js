/*
 * view_50_memory.js — #memory (--memory): per memory space (a process's
 * heap, a GPU, pinned host memory) its allocated and reserved bytes over
 * the run (RSS for a process) with the steps marked and the peak pointed
 * at, the sites live at the peak, then every allocation site, the leaks
 * and the memory recommendations.
 */
'use strict';
CBN.view({
	id: 'memory', title: 'Memory',
	has: function (d) { return d.report && d.report.memory; },
	render: function (el, d) {
		var C = CBN, m = d.report.memory, sites = m.sites || [], steps = d.report.steps;
		el.appendChild(C.el('h2', {}, 'Memory'));
		el.appendChild(C.el('p', { cls: 'muted' }, m.exact ? 'Every host allocation was recorded.'
			: 'Host allocations sampled about every ' + C.bytes(m.rate) + ' allocated (' +
			C.count(m.sampled) + (m.sampled === 1 ? ' sample' : ' samples') + '), each weighed up to an ' +
			'estimate of what it stands for; GPU allocations are exact.' + (m.lost ? ' ' + C.count(m.lost) + ' records were lost.' : '')));
		var recos = C.recos(m.recommendations, null);
		if (recos.count) el.appendChild(recos);
		(m.spaces || []).forEach(function (s) {
			var gpu = s.kind === 'gpu', title = gpu ? (s.name || 'GPU ' + s.device)
				: 'Host memory of process ' + s.pid;
			title = title.charAt(0).toUpperCase() + title.slice(1);
			el.appendChild(C.el('h3', {}, title));
			el.appendChild(C.facts([
				{ label: 'Peak allocated', value: C.bytes(s.peak_bytes), title: s.peak_exact ? 'exact'
					: 'estimated from the samples' },
				{ label: s.peak_range ? 'Peak at, in range \u201c' + s.peak_range + '\u201d' : 'Peak at',
					value: C.secs(s.peak_s) },
				gpu ? { label: 'Peak reserved', value: C.bytes(s.reserved_peak_bytes), title: 'pools ' +
					'plus allocations outside pools' }
					: { label: 'Peak RSS', value: C.bytes(s.rss_peak_bytes), title: 'resident memory, ' +
						'the profiler\'s own included' },
				{ label: 'Live at exit', value: C.bytes(s.live_end_bytes) },
				{ label: 'Allocations', value: C.count(s.allocs) },
				{ label: 'Frees', value: C.count(s.frees) },
				s.total_bytes ? { label: 'Device memory', value: C.bytes(s.total_bytes) } : null
			]));
			var tl = s.timeline || {};
			if ((tl.t_s || []).length > 1) {
				var box = C.el('div', { cls: 'mem-chart', 'data-space': title });
				el.appendChild(box);
				var t = tl.t_s.map(function (x) { return x * 1e9; }), series = [
					{ name: gpu ? 'Allocated' : 'Allocated (live)', color: '#1c7ed6', t: t, v: tl.live_bytes }];
				if (Array.isArray(tl.resident_bytes) && tl.resident_bytes.length === t.length &&
				    tl.resident_bytes.some(function (x) { return x > 0; }))
					series.push({ name: gpu ? 'Reserved (pools and other allocations)' : 'Resident (RSS)',
						color: '#e8590c', dash: 1, t: t, v: tl.resident_bytes });
				var bands = (steps && steps.steps || []).filter(function (st) {
					return gpu || !s.pid || st.process === s.pid; }).map(function (st) {
					return { t0: st.start_ns, t1: st.start_ns + st.duration_ns, label: 'step ' + st.number +
						': ' + C.ns(st.duration_ns), short: String(st.number) };
				});
				var t1 = Math.max(t[t.length - 1], (d.report.run.wall_ns || 0));
				C.lineChart(box, { series: series, kind: 'bytes', t0: 0, t1: t1, bands: bands.slice(0, 400),
					marks: s.peak_bytes ? [{ t: s.peak_s * 1e9, v: s.peak_bytes, label: 'peak ' +
						C.bytes(s.peak_bytes) }] : [], ylabel: 'bytes', xlabel: 'time since the start' +
						(bands.length ? ' (shaded: steps)' : ''), height: 220 });
			}
			var at = (s.at_peak || []).filter(function (x) { return sites[x.site]; });
			if (at.length) {
				el.appendChild(C.el('h3', { cls: 'sub' }, 'Live at the peak'));
				el.appendChild(C.table(at.map(function (x) {
					var site = sites[x.site];
					return { name: site['function'] || '[no stack]', bytes: x.bytes, share: x.bytes / s.peak_bytes,
						file: site.file, line: site.line };
				}), [
					{ key: 'name', label: 'Allocation site', name: 1 },
					{ key: 'bytes', label: 'Live then', num: 1, fmt: C.bytes },
					{ key: 'share', label: 'Share of the peak', num: 1, fmt: C.pct },
					{ key: 'file', label: 'Source', cell: function (x) { return C.srcLink(x.file, x.line); } }
				], { sort: 'bytes', filter: false, compact: true }).el);
			}
		});
		if (sites.length) {
			el.appendChild(C.el('h3', {}, 'Allocation sites'));
			el.appendChild(C.table(sites.map(function (s) {
				s.name = s['function'] || '[no stack]'; return s; }), [
				{ key: 'name', label: 'Function', name: 1 },
				{ key: 'bytes', label: 'Allocated', num: 1, fmt: C.bytes },
				{ key: 'allocs', label: 'Allocations', num: 1, fmt: C.count },
				{ key: 'live_end_bytes', label: 'Live at exit', num: 1, fmt: C.bytes },
				{ key: 'max_live_bytes', label: 'Max live', num: 1, fmt: C.bytes },
				{ key: 'median_life_ns', label: 'Median lifetime', num: 1, fmt: C.ns },
				{ key: 'kind', label: 'Where', get: function (x) { return x.kind === 'gpu' ? (x.device ===
					4294967295 ? 'pinned host' : 'GPU ' + x.device) : 'host'; } },
				{ key: 'file', label: 'Source', cell: function (x) { return C.srcLink(x.file, x.line); } }
			], { sort: 'bytes' }).el);
		}
		if ((m.leaks || []).length) {
			el.appendChild(C.el('h3', {}, 'Never freed'));
			el.appendChild(C.table(m.leaks.map(function (l) {
				var s = sites[l.site] || {};
				return { name: s['function'] || '[no stack]', bytes: l.bytes, blocks: l.blocks, file: s.file,
					line: s.line };
			}), [
				{ key: 'name', label: 'Allocation site', name: 1 },
				{ key: 'bytes', label: 'Live at exit', num: 1, fmt: C.bytes },
				{ key: 'blocks', label: 'Blocks', num: 1, fmt: C.count },
				{ key: 'file', label: 'Source', cell: function (x) { return C.srcLink(x.file, x.line); } }
			], { sort: 'bytes', filter: false }).el);
		}
	},
	selftests: {
		/* a chart per space with a timeline: its curves drawn, the peak
		 * marked; the sites at the peak listed */
		chart: function (sec, d) {
			var C = CBN, sp = (d.report.memory.spaces || []).filter(function (s) {
				return s.timeline && s.timeline.t_s && s.timeline.t_s.length > 1; });
			var charts = sec.querySelectorAll('.mem-chart');
			C.check(charts.length === sp.length, charts.length + ' charts for ' + sp.length + ' spaces');
			var lines = sec.querySelectorAll('.mem-chart polyline').length;
			var marks = sec.querySelectorAll('.mem-chart circle').length;
			C.check(lines >= sp.length, lines + ' curves');
			return 'charts=' + charts.length + ' curves=' + lines + ' peaks=' + marks + ' bands=' +
				sec.querySelectorAll('.mem-chart .band').length;
		}
	}
});
