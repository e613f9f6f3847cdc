/*
 * view_70_distributed.js — #distributed: the ranks of a distributed run, from
 * the report's "distributed" section (docs/distributed.md gives its shape):
 * the straggler sentence, the per-rank table, one stacked bar per rank of
 * the four-way split (computation, overlap, communication, other), the MPI
 * call sites with links to the source, the collectives, and the section's
 * recommendations.  Hidden when the report has no such section.
 */
'use strict';
CBN.view({
	id: 'distributed', title: 'Distributed',
	empty: 'This run has no distributed data (no ranks were recorded).',
	has: function (d) { return d.report && d.report.distributed; },
	render: function (el, d) {
		var C = CBN, x = d.report.distributed, ranks = x.ranks || [], v = this;
		var parts = [['computation_ns', 'computation', '#2f9e44'], ['overlap_ns', 'overlap', '#74b816'],
			['communication_ns', 'communication', '#e8590c'], ['other_ns', 'other', '#adb5bd']];
		el.appendChild(C.el('h2', {}, 'Distributed: ' + ranks.length + ' of ' + (x.world_size || '?') +
			' ranks'));
		el.appendChild(C.el('div', { cls: 'verdict', id: 'dist-straggler' }, straggler(x)));
		el.appendChild(C.cards({ world_size: x.world_size, ranks_found: x.ranks_found,
			missing: x.missing, imbalance: x.imbalance, app_ns: x.app_ns, mpi_ns: x.mpi_ns,
			mpi_pct: x.mpi_pct, clock_uncertainty_ns: x.clock && x.clock.uncertainty_ns }));
		if (x.mpi) el.appendChild(C.el('p', { cls: 'muted' }, 'MPI: ' + x.mpi));
		el.appendChild(C.recos(x.recommendations));

		/* the four-way split, one bar per rank, all on one scale (the
		 * longest rank fills the width) */
		el.appendChild(C.el('h3', {}, 'Computation and communication per rank'));
		var max = 0, bars = C.el('div', { id: 'dist-split' });
		ranks.forEach(function (r) {
			var s = r.split || {}, t = 0;
			parts.forEach(function (p) { t += s[p[0]] || 0; });
			r._split = t;
			if (t > max) max = t;
		});
		ranks.forEach(function (r) {
			var s = r.split || {}, bar = C.el('div', { cls: 'bar', style: 'width:' +
				(max ? (100 * r._split / max).toFixed(1) : 0) + '%' });
			parts.forEach(function (p) {
				if (!s[p[0]] || !r._split) return;
				bar.appendChild(C.el('div', { cls: 'seg-' + p[1], title: p[1] + ' ' + C.ns(s[p[0]]) +
					' (' + C.pct(s[p[0]] / r._split) + ')', style: 'background:' + p[2] + ';width:' +
					(100 * s[p[0]] / r._split).toFixed(2) + '%' }));
			});
			bars.appendChild(C.el('div', { cls: 'rank-row', style: 'display:flex;align-items:center;' +
				'gap:8px;margin:3px 0' }, C.el('span', { style: 'width:16ch;font-size:12px' },
				'rank ' + r.rank + (r.host ? ' @' + r.host : '')),
				C.el('div', { style: 'flex:1' }, bar),
				C.el('span', { cls: 'muted', style: 'width:12ch;font-size:12px' },
					(r.split && r.split.source) || '')));
		});
		el.appendChild(bars);
		var lg = C.el('div', { cls: 'legend' });
		parts.forEach(function (p) {
			lg.appendChild(C.el('span', {}, C.el('i', { style: 'background:' + p[2] }), p[1]));
		});
		el.appendChild(lg);

		el.appendChild(C.el('h3', {}, 'Ranks'));
		v.ranks = C.table(ranks, [
			{ key: 'rank', num: 1 }, { key: 'host' }, { key: 'pid', num: 1 },
			{ key: 'wall_ns', label: 'wall', num: 1, fmt: C.ns },
			{ key: 'cpu_ns', label: 'CPU', num: 1, fmt: C.ns },
			{ key: 'gpu_ns', label: 'GPU', num: 1, fmt: C.ns },
			{ key: 'compute_ns', label: 'compute', num: 1, fmt: C.ns },
			{ key: 'mpi_ns', label: 'MPI', num: 1, fmt: C.ns },
			{ key: 'mpi_wait_ns', label: 'MPI wait', num: 1, fmt: C.ns },
			{ key: 'bytes_sent', label: 'sent', num: 1, fmt: C.bytes },
			{ key: 'bytes_recv', label: 'received', num: 1, fmt: C.bytes },
			{ key: 'steps', num: 1 },
			{ key: 'step_mean_ns', label: 'step mean', num: 1, fmt: C.ns },
			{ key: 'compute_per_step_ns', label: 'compute/step', num: 1, fmt: C.ns },
			{ key: 'clock', label: 'clock', get: function (r) { return r.clock ? r.clock.source +
				(r.clock.offset_ns ? ' ' + C.ns(r.clock.offset_ns) : '') : ''; } },
			{ key: 'crashed', get: function (r) { return r.crashed ? 'crashed' : ''; } }
		], { sort: 'rank', filter: false });
		v.ranks.sort('rank', 1);
		el.appendChild(v.ranks.el);

		el.appendChild(C.el('h3', {}, 'MPI call sites'));
		v.sites = C.table(x.sites || [], [
			{ key: 'call', name: 1 }, { key: 'function', name: 1 },
			{ key: 'file', label: 'file:line', cell: function (s) { return C.srcLink(s.file, s.line); } },
			{ key: 'calls', num: 1 }, { key: 'time_ns', label: 'time', num: 1, fmt: C.ns },
			{ key: 'max_ns', label: 'max', num: 1, fmt: C.ns },
			{ key: 'wait_ns', label: 'wait', num: 1, fmt: C.ns },
			{ key: 'bytes', num: 1, fmt: C.bytes },
			{ key: 'app_pct', label: 'app %', num: 1, fmt: pct },
			{ key: 'mpi_pct', label: 'MPI %', num: 1, fmt: pct },
			{ key: 'cov', label: 'COV', num: 1, fmt: function (c) { return c == null ? '' : c.toFixed(2); } }
		], { sort: 'time_ns' });
		el.appendChild(v.sites.el);

		el.appendChild(C.el('h3', {}, 'Collectives'));
		v.coll = C.table(x.collectives || [], [
			{ key: 'call', name: 1 }, { key: 'instances', num: 1 }, { key: 'unmatched', num: 1 },
			{ key: 'time_ns', label: 'time', num: 1, fmt: C.ns },
			{ key: 'wait_ns', label: 'wait (late arrival)', num: 1, fmt: C.ns },
			{ key: 'transfer_ns', label: 'transfer', num: 1, fmt: C.ns },
			{ key: 'bytes', num: 1, fmt: C.bytes },
			{ key: 'latest_rank', label: 'last to arrive', num: 1,
			  get: function (c) { return c.latest_rank; } },
			{ key: 'latest_count', label: 'times last', num: 1 }
		], { sort: 'time_ns', filter: false });
		el.appendChild(v.coll.el);
		(x.histograms || []).forEach(function (h) {
			var bins = h.bins || [], tot = 0;
			bins.forEach(function (b) { tot += b.count || 0; });
			if (!tot) return;
			el.appendChild(C.el('p', { cls: 'muted' }, h.call + ' message sizes: ' + bins.filter(function (b) {
				return b.count; }).map(function (b) { return '\u2264 ' + C.bytes(b.le) + ': ' + b.count; })
				.join(', ')));
		});

		function pct(p) { return p == null ? '' : Number(p).toFixed(1) + '%'; }
		function straggler(x) {
			var s = x.straggler;
			if (!s) return 'The ranks are balanced' + (x.imbalance ? ' (imbalance ' +
				Number(x.imbalance).toFixed(2) + ', under 1.10)' : '') + '.';
			return 'Rank ' + s.rank + ' is the straggler: ' + Number(s.ratio).toFixed(2) +
				'\u00d7 the mean compute per step' + (s.call ? '; the other ranks wait for it in ' +
				s.call + (s.wait_pct != null ? ' (' + Number(s.wait_pct).toFixed(1) +
				'% of their MPI time)' : '') : '') + '.';
		}
	},
	selftests: {
		/* a row and a split bar per rank, the straggler sentence, the sites
		 * and collectives tables filled as the section says */
		ranks: function (sec, d) {
			var C = CBN, x = d.report.distributed, n = (x.ranks || []).length;
			var rows = sec.querySelector('#dist-split') ? sec.querySelectorAll('.rank-row').length : 0;
			var segs = sec.querySelectorAll('#dist-split .bar > div').length;
			var v = CBN.views.filter(function (y) { return y.id === 'distributed'; })[0];
			var text = sec.querySelector('#dist-straggler').textContent;
			C.check(rows === n, rows + ' split bars for ' + n + ' ranks');
			C.check(v.ranks.tbody.children.length === n, 'the rank table has ' +
				v.ranks.tbody.children.length + ' rows for ' + n + ' ranks');
			C.check(v.sites.tbody.children.length === (x.sites || []).length, 'sites rows');
			C.check(v.coll.tbody.children.length === (x.collectives || []).length, 'collectives rows');
			C.check(x.straggler ? text.indexOf('Rank ' + x.straggler.rank + ' is the straggler') === 0
				: /balanced/.test(text), 'straggler sentence: ' + text);
			return 'ranks=' + n + ' segments=' + segs + ' sites=' + v.sites.tbody.children.length +
				' collectives=' + v.coll.tbody.children.length + ' straggler=' +
				(x.straggler ? x.straggler.rank : 'none');
		}
	}
});
