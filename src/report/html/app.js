/*
 * app.js — the page shell of the HTML report: reads the embedded data
 * (gzip+base64 inflated with DecompressionStream), keeps the registry of
 * views (each view_*.js calls CBN.view), routes by URL fragment
 * (#VIEW&key=value...), and gives every view the same words and units:
 * the formatters (times, sizes, counts, shares), the labels of the report's
 * keys, links into the source view.  Tables, cards and charts are in
 * lib_table.js and lib_chart.js.
 * Errors are caught and written into #cbn-status, which the tests read;
 * "selftest=NAME" in the fragment runs a view's UI check in the page.
 */
'use strict';
var CBN = (function () {
	var C = { views: [], data: null, errors: [], results: [] };

	C.view = function (v) { C.views.push(v); };

	function status() {
		var s = document.getElementById('cbn-status');
		s.setAttribute('data-errors', String(C.errors.length));
		s.textContent = C.results.concat(C.errors.map(function (e) { return 'error ' + e; }))
			.join('\n');
	}
	C.note = function (line) { C.results.push(line); status(); };
	C.error = function (msg) { C.errors.push(String(msg)); status(); };
	window.addEventListener('error', function (e) {
		C.error((e.message || 'error') + (e.lineno ? ' (line ' + e.lineno + ')' : ''));
	});
	/* console.error too: chromium's log gives every console line the same
	 * level, so the tests count errors here */
	var cerr = console.error;
	console.error = function () {
		C.errors.push(Array.prototype.join.call(arguments, ' '));
		if (document.getElementById('cbn-status')) status();
		cerr.apply(console, arguments);
	};
	window.addEventListener('unhandledrejection', function (e) {
		C.error(e.reason && e.reason.stack ? e.reason.stack : e.reason);
	});

	/* ---- DOM ---- */
	C.el = function (tag, props) {
		var e = document.createElement(tag), k, i, c;
		for (k in props || {}) {
			if (k === 'text') e.textContent = props[k];
			else if (k === 'html') e.innerHTML = props[k];
			else if (k.slice(0, 2) === 'on') e.addEventListener(k.slice(2), props[k]);
			else if (k === 'cls') e.className = props[k];
			else e.setAttribute(k, props[k]);
		}
		for (i = 2; i < arguments.length; i++) {
			c = arguments[i];
			if (c == null) continue;
			e.appendChild(typeof c === 'string' || typeof c === 'number'
				? document.createTextNode(String(c)) : c);
		}
		return e;
	};
	C.byId = function (id) { return C.views.filter(function (v) { return v.id === id; })[0]; };

	/*
	 * ---- units ----
	 * The same units as the text report (src/util/util.c, the one home of
	 * how sizes and times are written): times in ns, us, ms or s chosen on
	 * the value as printed, sizes 1024-based with IEC names and two
	 * decimals.  A time keeps four significant digits ("2.020 ms",
	 * "25.19 ms", "216.3 ms"): a table column reads at a glance, and the
	 * exact nanoseconds are in the --json report.
	 */
	C.ns = function (v) {
		if (v == null || isNaN(v)) return '';
		var a = Math.abs(v), u, d;
		if (a < 999.5) return Math.round(v) + ' ns';
		if (a >= 1e9 - 5e5) { u = ' s'; d = 1e9; }
		else if (a >= 1e6 - 5e2) { u = ' ms'; d = 1e6; }
		else { u = ' us'; d = 1e3; }
		var x = v / d, ax = Math.abs(x);
		return x.toFixed(ax >= 999.95 ? 0 : ax >= 99.995 ? 1 : ax >= 9.9995 ? 2 : 3) + u;
	};
	C.bytes = function (b) {
		if (b == null || isNaN(b)) return '';
		var u = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'], i = -1, v = Math.abs(b);
		while (v >= 1024 && i + 1 < u.length) { v /= 1024; i++; }
		return i < 0 ? Math.round(b) + ' B' : (b < 0 ? '-' : '') + v.toFixed(2) + ' ' + u[i];
	};
	/* a share 0..1 as a percentage: one decimal, none from 100 up */
	C.pct = function (f) {
		if (f == null || isNaN(f)) return '';
		var p = 100 * f;
		return (Math.abs(p) >= 99.95 ? p.toFixed(0) : p.toFixed(1)) + '%';
	};
	/* a count: digits grouped by thousands */
	C.count = function (v) {
		if (v == null || isNaN(v)) return '';
		var s = String(Math.round(Math.abs(v))).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
		return (v < 0 ? '-' : '') + s;
	};
	/* a plain number with few digits: ratios, occupancy per SM */
	C.dec = function (v, d) {
		if (v == null || isNaN(v)) return '';
		return Number(v).toFixed(d == null ? (Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2) : d);
	};
	C.num = function (v) {
		if (v == null) return '';
		if (typeof v === 'number') return Number.isInteger(v) ? C.count(v) : C.dec(v);
		if (typeof v === 'boolean') return v ? 'yes' : 'no';
		return String(v);
	};
	/* seconds, as the memory timeline's t_s */
	C.secs = function (s) { return s == null ? '' : C.ns(s * 1e9); };

	/*
	 * ---- labels ----
	 * What a person reads over a value of the report: its key in words.
	 * Keys not listed here read as their words ("self_cpu_ns": "Self CPU"),
	 * the unit taken off (the value carries it).
	 */
	var LABELS = {
		wall_ns: 'Wall time', cpu_ns: 'CPU time', samples: 'Samples', processes: 'Processes',
		threads: 'Threads', frequency_hz: 'Sampling rate', exit_status: 'Exit status',
		gpu_utilization: 'GPU utilization', est_sm_efficiency: 'Est. SM efficiency',
		est_achieved_occupancy: 'Est. achieved occupancy', gpu_ns: 'GPU time',
		sync_blocked_ns: 'CPU blocked in sync', gpu_idle_gaps_ns: 'GPU idle (gaps)',
		largest_gap_ns: 'Largest GPU gap', window_ns: 'GPU window', launch_api_ns: 'Launch calls',
		kernels: 'Kernels', kernel_ns: 'Kernel time', memcpy: 'Copies', memcpy_ns: 'Copy time',
		memcpy_bytes: 'Bytes copied', memset: 'Sets', memset_ns: 'Set time', api_calls: 'API calls',
		api_ns: 'API time', sync_ns: 'Sync wait', gpu_busy_ns: 'GPU busy', verdict: 'Verdict',
		name: 'Name', short_name: 'Name', kind: 'Kind', calls: 'Calls', instances: 'Instances',
		total_ns: 'Total time', avg_ns: 'Average', med_ns: 'Median', min_ns: 'Min', max_ns: 'Max',
		stddev_ns: 'Std. dev.', time_pct: 'Share of time', count: 'Count', bytes: 'Bytes',
		self_cpu_ns: 'Self CPU', cpu_total_ns: 'CPU total', self_cuda_ns: 'Self CUDA',
		cuda_total_ns: 'CUDA total', cpu_mem: 'CPU memory', self_cpu_mem: 'Self CPU memory',
		cuda_mem: 'CUDA memory', self_cuda_mem: 'Self CUDA memory', pinned: 'Pinned',
		pageable: 'Pageable', pinned_ns: 'Pinned time', pageable_ns: 'Pageable time',
		pinned_bytes: 'Pinned bytes', pageable_bytes: 'Pageable bytes', 'function': 'Function',
		file: 'Source', line: 'Line', tid: 'Thread id', pid: 'Process id', off_ns: 'Off-CPU time',
		spin_ns: 'Spinning', lock_wait_ns: 'Lock wait', held_for_ns: 'Lock held', busy: 'Busy',
		call: 'Call', ns: 'Time', addr: 'Address', wait_ns: 'Wait', contended_ns: 'Contended',
		waiters: 'Waiters', holder_tid: 'Holder thread', holder_name: 'Holder',
		holder_share: 'Holder share', self_on_ns: 'Self on CPU', self_off_ns: 'Self off CPU',
		total_on_ns: 'Total on CPU', total_off_ns: 'Total off CPU', site: 'Site', blocks: 'Blocks',
		number: 'Step', start_ns: 'Start', duration_ns: 'Duration', copies: 'Copies',
		mem_peak: 'Peak host memory', ratio: 'Ratio', end_ns: 'End', open_cause: 'Opened by',
		close_cause: 'Closed by', first_step: 'First step', process: 'Process',
		median_ns: 'Median', p90_ns: 'p90', mean_ns: 'Mean', offcpu: 'Off-CPU sampling',
		rate_hz: 'Off-CPU rate', span_ns: 'Span', windowed: 'Windowed', thread_ns: 'Thread time',
		blocked_est_ns: 'Blocked (est.)', busy_threads: 'Busy threads', efficiency: 'Efficiency',
		world_size: 'World size', ranks_found: 'Ranks found', missing: 'Missing ranks',
		imbalance: 'Imbalance', app_ns: 'Application time', mpi_ns: 'MPI time', mpi_pct: 'MPI share',
		rate: 'Sampling interval', exact: 'Every allocation', sampled: 'Sampled allocations',
		lost: 'Lost', untracked: 'Untracked', no_stack: 'Without stack', peak_bytes: 'Peak',
		peak_s: 'Peak at', rss_peak_bytes: 'Peak RSS', reserved_peak_bytes: 'Peak reserved',
		address_reserved_peak_bytes: 'Peak address space reserved', total_bytes: 'Device memory',
		live_end_bytes: 'Live at exit', cached_end_bytes: 'Cached at exit', allocs: 'Allocations',
		frees: 'Frees', alloc_bytes: 'Allocated', max_live_bytes: 'Max live',
		median_life_ns: 'Median lifetime', short_lived: 'Short-lived', records: 'Records',
		live_end_blocks: 'Blocks at exit', registers: 'Registers', blocks_per_sm: 'Blocks per SM',
		est_occupancy: 'Est. occupancy', grid: 'Grid', block: 'Block', launches: 'Launches',
		device: 'Device', stream: 'Stream', peak_range: 'Range at peak', peak_exact: 'Exact peak',
		peak_in_windows: 'Peak in windows', wall_change_ns: 'Wall time change',
		cpu_change_ns: 'CPU time change', clock_uncertainty_ns: 'Clock uncertainty'
	};
	var WORDS = { cpu: 'CPU', gpu: 'GPU', cuda: 'CUDA', sm: 'SM', api: 'API', mpi: 'MPI',
		est: 'est.', avg: 'average', med: 'median', stddev: 'std. dev.', rss: 'RSS', pct: '%',
		tid: 'thread', pid: 'process', hz: 'Hz', io: 'I/O', nvtx: 'NVTX', mem: 'memory' };
	C.label = function (key) {
		if (LABELS[key]) return LABELS[key];
		var w = String(key).replace(/_(ns|bytes|s)$/, '').split(/[_\s]+/).filter(Boolean)
			.map(function (x) { return WORDS[x] || x; }).join(' ');
		return w.charAt(0).toUpperCase() + w.slice(1);
	};
	/* A value's formatter from its key: the unit suffix, then known keys. */
	C.fmtFor = function (key) {
		if (/_ns$/.test(key)) return C.ns;
		if (/bytes$|_mem$|^bytes|^mem_peak$|^rate$/.test(key)) return C.bytes;
		if (/_s$/.test(key)) return C.secs;
		if (/_pct$/.test(key)) return function (v) { return v == null ? '' : C.pct(v / 100); };
		if (/share|occupancy|efficiency|utilization|^busy$/.test(key)) return C.pct;
		if (/hz$/.test(key)) return function (v) { return v == null ? '' : C.count(v) + ' Hz'; };
		return C.num;
	};
	C.color = function (s) {
		var h = 0, i;
		for (i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
		return 'hsl(' + (20 + (Math.abs(h) % 40)) + ',' + (70 + Math.abs(h >> 8) % 25) + '%,' +
			(55 + Math.abs(h >> 16) % 15) + '%)';
	};

	/* ---- links ---- */
	C.href = function (view, params) {
		var s = '#' + view, k;
		for (k in params || {}) s += '&' + k + '=' + encodeURIComponent(params[k]);
		return s;
	};
	/* file:line: into the source view when the page holds the file, and to
	 * the editor (vscode://file/...) always. */
	C.srcLink = function (file, line) {
		if (!file) return document.createTextNode('');
		var span = C.el('span', { cls: 'src-link' }), base = file.split('/').pop() + (line ? ':' + line : '');
		var src = C.source(file);
		span.appendChild(src ? C.el('a', { href: C.href('source', { file: file, line: line || 0 }),
			title: file }, base) : C.el('span', { title: file }, base));
		if (file.charAt(0) === '/') {
			span.appendChild(document.createTextNode(' '));
			span.appendChild(C.el('a', { href: 'vscode://file' + ((src && src.path) || file) +
				(line ? ':' + line : ''), title: 'open in the editor', cls: 'muted' }, '\u270e'));
		}
		return span;
	};
	C.source = function (file) {
		var s = (C.data.html && C.data.html.sources) || [], i;
		for (i = 0; i < s.length; i++) if (s[i].file === file && s[i].lines) return s[i];
		return null;
	};

	/* ---- routing ---- */
	function parseHash() {
		var parts = (location.hash || '#overview').slice(1).split('&'), p = {}, i, kv;
		for (i = 1; i < parts.length; i++) {
			kv = parts[i].split('=');
			p[decodeURIComponent(kv[0])] = decodeURIComponent(kv.slice(1).join('=') || '');
		}
		return { id: parts[0] || 'overview', params: p };
	}
	C.route = function () {
		var h = parseHash(), main = document.getElementById('view'), tabs = document.getElementById('tabs');
		var avail = C.views.filter(function (v) { return !v.has || v.has(C.data); });
		tabs.textContent = '';
		avail.forEach(function (v) {
			if (!v.hidden) tabs.appendChild(C.el('a', { href: '#' + v.id,
				cls: h.id.split(',').indexOf(v.id) >= 0 ? 'on' : '' },
				v.title));
		});
		main.textContent = '';
		/* what each rendering says, errors included: a view's errors are
		 * not the next one's */
		C.results = [];
		C.errors = [];
		/* "#a,b": those views one after the other (one page load checks
		 * several in the tests) */
		var ids = h.id.split(','), several = h.id === 'all' || ids.length > 1;
		var list = h.id === 'all' ? avail : C.views.filter(function (v) { return ids.indexOf(v.id) >= 0; });
		if (!list.length) {
			main.appendChild(C.el('p', {}, 'No view named "' + h.id + '".'));
			list = [];
		}
		list.forEach(function (v) {
			var sec = C.el('section', { id: 'view-' + v.id, cls: several ? 'view-all' : '' });
			main.appendChild(sec);
			if (several) sec.appendChild(C.el('h2', { cls: 'view-title' }, v.title));
			try {
				if (v.has && !v.has(C.data))
					sec.appendChild(C.el('p', { cls: 'muted' }, v.empty ||
						'This run has no data for this view.'));
				else
					v.render(sec, C.data, h.params);
				C.note('render ' + v.id + ' ok');
			} catch (e) {
				C.error('render ' + v.id + ': ' + (e && e.stack ? e.stack : e));
			}
		});
		if (h.params.selftest) C.selftest(list, h.params.selftest);
		document.getElementById('cbn-status').setAttribute('data-view', h.id);
		document.getElementById('cbn-status').setAttribute('data-state', 'ready');
		status();
	};
	/* Run the named UI checks (or all) of the views shown; each writes one
	 * "selftest VIEW.NAME ok|FAIL detail" line into #cbn-status.  Checks
	 * every view has (C.common: the layout) run too. */
	C.common = {};
	C.selftest = function (list, which) {
		list.forEach(function (v) {
			var tests = {}, k;
			for (k in C.common) tests[k] = C.common[k];
			for (k in v.selftests || {}) tests[k] = v.selftests[k];
			Object.keys(tests).forEach(function (name) {
				if (which !== 'all' && which !== name) return;
				if (which === 'all' && ((v.manual || []).indexOf(name) >= 0 || C.common[name]))
					return;
				var sec = document.getElementById('view-' + v.id);
				try {
					C.note('selftest ' + v.id + '.' + name + ' ok ' + tests[name].call(v, sec, C.data));
				} catch (e) {
					C.note('selftest ' + v.id + '.' + name + ' FAIL ' + (e && e.message ? e.message : e));
				}
			});
		});
	};
	C.check = function (cond, msg) { if (!cond) throw new Error(msg); };

	/* ---- data ---- */
	function load() {
		var node = document.getElementById('cbn-data');
		if (node.getAttribute('data-encoding') !== 'gzip+base64')
			return Promise.resolve(JSON.parse(node.textContent));
		if (typeof DecompressionStream === 'undefined')
			return Promise.reject(new Error('this browser lacks DecompressionStream: ' +
				'open the report in a current Chrome, Firefox or Safari'));
		var bin = atob(node.textContent.trim()), bytes = new Uint8Array(bin.length), i;
		for (i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
		var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
		return new Response(stream).text().then(JSON.parse);
	}
	function start() {
		var t0 = performance.now();
		load().then(function (d) {
			C.data = d;
			var run = (d.report && d.report.run) || {};
			var cmd = document.getElementById('cmd');
			cmd.textContent = (run.command || []).join(' ');
			cmd.title = cmd.textContent;
			window.addEventListener('hashchange', C.route);
			C.route();
			document.getElementById('cbn-status').setAttribute('data-ms',
				String(Math.round(performance.now() - t0)));
		}).catch(function (e) {
			document.getElementById('view').textContent = 'Cannot read the report data: ' + e.message;
			C.error('load: ' + e.message);
		});
	}
	/* inline, the page is still loading; inflated by html.c's loader of
	 * compressed scripts, it has loaded */
	if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
	else start();
	return C;
})();
