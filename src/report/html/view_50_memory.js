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
		var pname = {};
		(d.report.processes || []).forEach(function (p) { pname[p.pid] = (p.exe || '').split('/').pop(); });
		/* a host figure from sampled records is an estimate: "~", as in the text */
		function est(kind) { return !m.exact && kind !== 'gpu'; }
		function bytesOf(kind) { return function (v) { return v == null ? '-' : (est(kind) && v > 0 ? '~' : '') +
			C.bytes(v); }; }
		el.appendChild(C.el('h2', {}, 'Memory'));
		el.appendChild(C.el('p', { cls: 'muted' }, m.exact ? 'Every host allocation was recorded.'
			: 'Host allocations sampled about every ' + C.bytes(m.rate) + ' allocated (' +
			C.count(m.sampled) + (m.sampled === 1 ? ' sample' : ' samples') + '), each weighed up to an ' +
			'estimate of what it stands for; GPU allocations are exact.' + (m.lost ? ' ' + C.count(m.lost) + ' records were lost.' : '')));
		var recos = C.recos(m.recommendations, null);
		if (recos.count) el.appendChild(recos);
		(m.spaces || []).forEach(function (s) {
			var gpu = s.kind === 'gpu', title = gpu ? (s.name || 'GPU ' + s.device)
				: 'Host memory of ' + (pname[s.pid] ? pname[s.pid] + ', ' : '') + 'process ' + s.pid;
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
				/* the process's own life, not the whole run's: a short one is
				 * a curve, not a spike at the edge */
				var t0 = t[0], t1 = t[t.length - 1] + Math.max(1, (t[t.length - 1] - t[0]) * 0.02);
				C.lineChart(box, { series: series, kind: 'bytes', t0: t0, t1: t1, bands: bands.slice(0, 400),
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
					{ key: 'bytes', label: 'Live then', num: 1, fmt: bytesOf(s.kind) },
					{ key: 'share', label: 'Share of the peak', num: 1, fmt: C.pct },
					{ key: 'file', label: 'Source', cell: function (x) { return C.srcLink(x.file, x.line); } }
				], { sort: 'bytes', filter: false, compact: true }).el);
			}
			/* what the rows leave out, as the text says it */
			if (s.at_peak_other_sites)
				el.appendChild(C.el('p', { cls: 'muted' }, s.at_peak_other_sites + ' site' +
					(s.at_peak_other_sites === 1 ? '' : 's') + ' of one or two samples each held ' +
					bytesOf(s.kind)(s.at_peak_other_bytes) + ' together (' + C.pct(s.at_peak_other_bytes /
					s.peak_bytes) + ' of the peak): one sample\'s weight is no figure per site.'));
			if (s.at_peak_rest_sites)
				el.appendChild(C.el('p', { cls: 'muted' }, s.at_peak_rest_sites + ' more sites held ' +
					bytesOf(s.kind)(s.at_peak_rest_bytes) + '.'));
		});
		if (sites.length) {
			el.appendChild(C.el('h3', {}, 'Allocation sites'));
			el.appendChild(C.table(sites.map(function (s) {
				s.name = (s['function'] || '[no stack]') + (s.via ? ' via ' + s.via.split('(')[0] : '');
				return s; }), [
				{ key: 'name', label: 'Function', name: 1 },
				{ key: 'bytes', label: 'Allocated', num: 1, cell: function (x) {
					return document.createTextNode(bytesOf(x.kind)(x.bytes)); } },
				{ key: 'allocs', label: 'Allocations', num: 1, cell: function (x) {
					return document.createTextNode((est(x.kind) ? '~' : '') + C.count(Math.round(x.allocs))); } },
				{ key: 'live_end_bytes', label: 'Live at exit', num: 1, cell: function (x) {
					return document.createTextNode(x.arena ? 'kept by ' + x.arena.split('(')[0]
						: bytesOf(x.kind)(x.live_end_bytes)); } },
				/* one sample's weight is no site's peak; a block never freed
				 * has no lifetime */
				{ key: 'max_live_bytes', label: 'Max live', num: 1, get: function (x) {
					return x.max_live_known === false ? null : x.max_live_bytes; }, cell: function (x) {
					return document.createTextNode(x.max_live_known === false ? '-'
						: bytesOf(x.kind)(x.max_live_bytes)); } },
				{ key: 'median_life_ns', label: 'Median lifetime', num: 1, cell: function (x) {
					var t = document.createElement('span');
					t.textContent = x.median_life_ns == null ? '-' : C.ns(x.median_life_ns);
					if (x.median_life_ns == null) t.title = 'no sampled block of it was freed';
					return t; } },
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
				{ key: 'bytes', label: 'Live at exit', num: 1, fmt: bytesOf('host') },
				{ key: 'blocks', label: 'Blocks', num: 1, fmt: function (v) { return (est('host') ? '~' : '') +
					C.count(Math.round(v)); } },
				{ key: 'file', label: 'Source', cell: function (x) { return C.srcLink(x.file, x.line); } }
			], { sort: 'bytes', filter: false }).el);
		}
	},
	selftests: {
		/* a chart per space with a timeline: its curves drawn, the peak
		 * marked; the sites at the peak listed */
		chart: function (sec, d) {
			var C = CBN, m = d.report.memory, sp = (m.spaces || []).filter(function (s) {
				return s.timeline && s.timeline.t_s && s.timeline.t_s.length > 1; });
			/* sampled estimates keep their "~" as in the text */
			if (!m.exact && (m.sites || []).some(function (x) { return x.kind === 'host' && x.bytes > 0; }))
				C.check(/~/.test(sec.textContent), 'sampled host figures without a ~');
			C.check(!/Median lifetime[\s\S]*\b0 ns\b/.test(sec.textContent) || (m.sites || []).some(function (x) {
				return x.median_life_ns === 0; }), 'a lifetime of 0 ns for blocks never freed');
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
