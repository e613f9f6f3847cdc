/*
 * view_20_cpu.js — #cpu: the flame graph first, in speedscope's three
 * views (left heavy: the merged call tree, callees heaviest first; time
 * order: a thread's stacks over the run; sandwich: one function's callers
 * above it and callees below), direct recursion folded by default, then
 * the cProfile-style function table (sortable by every column, filter box
 * with inline marks; &q= presets the filter; a click on a row opens its
 * sandwich).  &mode=time|sandwich&fn=NAME open a view of the graph.
 */
'use strict';
CBN.view({
	id: 'cpu', title: 'CPU',
	has: function (d) { return d.report && d.report.functions && d.report.functions.length; },
	render: function (el, d, params) {
		var C = CBN, r = d.report, cpu = r.run.cpu_ns || 1, v = this, h = d.html || {};
		var graph = C.el('div', { id: 'flame' }), note = C.el('p', { cls: 'muted' });
		v.nodes = [];
		v.flame = null;
		el.appendChild(C.el('h2', {}, 'Flame graph'));
		if (!h.tree) {
			el.appendChild(C.el('p', { cls: 'muted' }, 'No call tree: a page of `compare` holds the ' +
				'two JSON reports only, which keep functions, not stacks.'));
		} else {
			v.orig = C.flameTree(h.tree, h.names || []);
			var folded = C.collapseRecursion(v.orig), lanes = ((h.timeline || {}).lanes || [])
				.filter(function (l) { return l.kind === 'cpu' && l.nodes; });
			var st = { mode: params.mode || 'left', fold: true, lane: 0, fn: params.fn || null };
			var modes = C.el('span', { cls: 'seg' }), fold = C.el('input', { type: 'checkbox', checked: '' });
			var thread = C.el('select', { title: 'the thread whose stacks are drawn over time' });
			lanes.forEach(function (l, i) { thread.appendChild(C.el('option', { value: i }, l.name)); });
			[['left', 'Left heavy', 'the merged call tree: each function\'s callees side by side, ' +
				'heaviest first'], ['time', 'Time order', 'one thread\'s stacks over the run, as ' +
				'sampled'], ['sandwich', 'Sandwich', 'one function: its callers above it, its callees ' +
				'below']].forEach(function (m) {
				if (m[0] === 'time' && !lanes.length) return;
				modes.appendChild(C.el('button', { 'data-mode': m[0], title: m[2], onclick: function () {
					st.mode = m[0]; show(); } }, m[1]));
			});
			var tools = C.el('div', { cls: 'tools' }, modes, C.el('label', { title: 'a function calling ' +
				'itself drawn as one frame' }, fold, ' fold recursion'), thread);
			fold.addEventListener('change', function () { st.fold = fold.checked; show(); });
			thread.addEventListener('change', function () { st.lane = +thread.value; show(); });
			el.appendChild(tools);
			el.appendChild(graph);
			el.appendChild(note);
			if (h.tree.total_nodes > v.orig.length)
				note.textContent = 'The ' + C.count(h.tree.total_nodes) + '-frame call tree is shown by ' +
					'its ' + C.count(v.orig.length) + ' heaviest frames; the rest is folded into ' +
					'"(other)".';
		}
		function show() {
			var nodes = st.fold ? folded.nodes : v.orig, map = st.fold ? folded.map : null;
			Array.prototype.forEach.call(modes.children, function (b) {
				b.className = b.getAttribute('data-mode') === st.mode ? 'on' : ''; });
			thread.style.display = st.mode === 'time' ? '' : 'none';
			graph.textContent = '';
			v.nodes = nodes;
			v.mode = st.mode;
			if (st.mode === 'sandwich') return sandwich(nodes);
			var opts = { onselect: function (x) { if (x.parent >= 0) v.table.filter(x.fname); },
				maxHeight: '72vh' };
			if (st.mode === 'time') {
				var l = lanes[st.lane] || lanes[0];
				opts.boxes = C.timeOrder(l, nodes, map, (h.timeline.span_ns || 1));
				opts.icicle = true;
				graph.appendChild(C.el('p', { cls: 'muted' }, l.name + ': the stack most samples of each ' +
					C.ns(h.timeline.bin_ns) + ' were in, left to right over the run; gaps: the thread ' +
					'was off the CPU for longer than ' + C.ns(4 * h.timeline.bin_ns) + ' (shorter ' +
					'stretches, a preemption, are drawn as running).'));
			}
			v.flame = C.flame(graph, nodes, opts);
		}
		/* one function: callers above (root at the bottom), callees below */
		function sandwich(nodes) {
			var fn = st.fn || (r.functions.slice().sort(function (a, b) { return b.self_ns - a.self_ns; })[0]
				|| {}).name, sw = fn && C.sandwich(nodes, fn);
			v.sandwiched = null;
			if (!sw) {
				graph.appendChild(C.el('p', { cls: 'muted' }, 'Pick a function in the table below.'));
				return;
			}
			graph.appendChild(C.el('p', {}, C.el('b', {}, fn), C.el('span', { cls: 'muted' },
				' \u2014 total ' + C.ns(sw.callees[0].total) + ' (' + C.pct(sw.callees[0].total / cpu) +
				' of the CPU time); pick another in the table below')));
			var up = C.el('div', { cls: 'sandwich-callers' }), down = C.el('div', { cls: 'sandwich-callees' });
			graph.appendChild(C.el('h3', {}, 'Callers (who called it, up to main)'));
			graph.appendChild(up);
			graph.appendChild(C.el('h3', {}, 'Callees (what it spent its time in)'));
			graph.appendChild(down);
			v.sandwiched = { fn: fn, callers: C.flame(up, sw.callers, { maxHeight: '40vh' }),
				callees: C.flame(down, sw.callees, { icicle: true, maxHeight: '40vh' }), trees: sw };
			v.flame = v.sandwiched.callees;
		}
		v.select = function (name) { st.fn = name; st.mode = 'sandwich'; if (h.tree) show(); };

		/* a run of several programs: them first, as perf report --sort comm,dso */
		cpuPrograms(el, r, cpu);
		el.appendChild(C.el('h2', {}, 'Functions'));
		/* --calls: exact calls of Python functions, cProfile's ncalls and percall */
		var counted = r.functions.some(function (x) { return x.calls != null; });
		var calls = !counted ? [] : [
			{ key: 'calls', label: 'Calls', num: 1,
			  get: function (x) { return x.calls == null ? null : x.calls; },
			  fmt: function (n) { return n == null ? '-' : C.count(n); },
			  help: 'exact calls (--calls; cProfile\'s ncalls); - where the function was not counted' },
			{ key: 'primitive_calls', label: 'Primitive calls', num: 1,
			  fmt: function (n) { return n == null ? '-' : C.count(n); },
			  help: 'calls not made while another call of it ran on the thread' },
			{ key: 'self_percall', label: 'Self per call', num: 1,
			  get: function (x) { return x.calls ? x.self_ns / x.calls : null; },
			  fmt: function (n) { return n == null ? '-' : C.ns(n); },
			  help: 'self time / calls (cProfile\'s first percall)' },
			{ key: 'total_percall', label: 'Total per primitive call', num: 1,
			  get: function (x) { return x.primitive_calls ? x.total_ns / x.primitive_calls : null; },
			  fmt: function (n) { return n == null ? '-' : C.ns(n); },
			  help: 'total time / primitive calls (cProfile\'s second percall)' }
		];
		v.table = C.table(r.functions, [
			{ key: 'name', label: 'Function', name: 1 },
			{ key: 'self_ns', label: 'Self time', num: 1, fmt: C.ns,
			  help: 'time with the function as the innermost frame (cProfile\'s tottime)' },
			{ key: 'self_pct', label: 'Self %', num: 1, fmt: C.pct,
			  get: function (x) { return x.self_ns / cpu; } },
			{ key: 'total_ns', label: 'Total time', num: 1, fmt: C.ns,
			  help: 'time with the function anywhere on the stack, once per sample (cumtime)' },
			{ key: 'total_pct', label: 'Total %', num: 1, fmt: C.pct,
			  get: function (x) { return x.total_ns / cpu; } },
		].concat(calls, [
			{ key: 'self_samples', label: 'Self samples', num: 1, fmt: C.count },
			{ key: 'total_samples', label: 'Total samples', num: 1, fmt: C.count },
			{ key: 'file', label: 'Source', cell: function (x) { return C.srcLink(x.file, x.line); } },
			{ key: 'module', label: 'Module', name: 1 }
		]), { sort: 'self_ns', onrow: function (x) {
			v.select(x.name);
			graph.scrollIntoView({ block: 'nearest' });
		} });
		el.appendChild(v.table.el);
		var lo = h.left_out;
		if (lo && lo.functions)
			el.appendChild(C.el('p', { cls: 'muted' }, C.count(lo.functions) + ' lighter functions ' +
				'are left out of this page (the --json report has them all).'));
		if (params.q) v.table.filter(params.q);
		if (h.tree) show();
	},
	selftests: {
		/* click the "self" header twice and the "function" header: the rows
		 * must come out in that order */
		sort: function () {
			var C = CBN, t = this.table;
			function col(key) {
				var i = Array.prototype.findIndex.call(t.thead.children, function (th) {
					return th.getAttribute('data-key') === key; });
				return Array.prototype.map.call(t.tbody.children, function (tr) {
					return tr.children[i].getAttribute('data-v'); });
			}
			function click(key) {
				Array.prototype.filter.call(t.thead.children, function (th) {
					return th.getAttribute('data-key') === key; })[0].click();
			}
			click('total_ns');
			var a = col('total_ns').map(Number);
			C.check(a.every(function (x, i) { return !i || a[i - 1] >= x; }), 'total not descending');
			click('total_ns');
			a = col('total_ns').map(Number);
			C.check(a.every(function (x, i) { return !i || a[i - 1] <= x; }), 'total not ascending');
			click('name');
			var n = col('name');
			C.check(n.every(function (x, i) { return !i || n[i - 1] <= x; }), 'names not ascending');
			click('self_ns');
			return 'rows=' + a.length + ' first=' + n[0];
		},
		/* type the hottest function's name in the filter box, as the
		 * table shows it (a C++ name without its parameters: the full
		 * name keeps the row but marks nothing in its short form) */
		filter: function (sec, d) {
			var C = CBN, t = this.table, f0 = d.report.functions[0];
			var name = f0.short_name || f0.name;
			t.input.value = name;
			t.input.dispatchEvent(new Event('input'));
			var rows = t.tbody.children.length, marks = t.tbody.querySelectorAll('mark').length;
			C.check(rows >= 1 && rows < d.report.functions.length, 'filter kept ' + rows + ' rows');
			C.check(marks >= 1, 'no inline mark');
			t.filter('');
			return 'q=' + name + ' rows=' + rows + ' marks=' + marks;
		},
		/* click the middle of the heaviest frame below the root: it must fill
		 * the width; then search for it */
		zoom: function () {
			var C = CBN, v = this, f = v.flame;
			if (!v.nodes.length || v.mode !== 'left') return 'skipped: no left-heavy graph in this page';
			var root = v.nodes[0], target = root.kids[0];
			while (target && target.kids.length && target.kids[0].total === target.total)
				target = target.kids[0];
			C.check(target, 'empty call tree');
			var r0 = f.rectOf(target), cr = f.canvas.getBoundingClientRect();
			C.check(r0, 'frame not drawn');
			/* drawn pixels to the page's: the canvas may be shown stretched
			 * (the page narrowed by a scrollbar since the last draw) */
			var w0 = r0.w, sx = cr.width / (f.width() || cr.width || 1);
			f.canvas.dispatchEvent(new MouseEvent('click', { clientX: cr.left + (r0.x + r0.w / 2) * sx,
				clientY: cr.top + r0.y + 5, bubbles: true }));
			var r1 = f.rectOf(target);
			C.check(f.zoomed() === target, 'click did not zoom');
			/* full width of the drawing it is in, whatever the page's width */
			C.check(r1 && r1.x === 0 && Math.abs(r1.w - f.width()) < 1,
				'zoomed frame is ' + (r1 && r1.w) + ' wide of ' + f.width());
			C.check(Math.abs(f.canvas.width / (window.devicePixelRatio || 1) - f.width()) < 1,
				'canvas of ' + f.canvas.width + ' px for a drawing ' + f.width() + ' wide');
			f.search(target.fname.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
			C.check(f.matched > 0, 'search matched nothing');
			f.zoomTo(root);
			f.search('');
			v.table.filter('');
			return 'frame=' + target.fname + ' width ' + Math.round(w0) + '->' + Math.round(r1.w) +
				' matched=' + C.pct(f.matched);
		},
		/*
		 * The three views: left heavy as tall as its frames a pixel wide or
		 * more (a thin deep recursion adds no rows), time order with frames
		 * over the thread's time, each on its caller, the sandwich of the hottest function with
		 * its callees at full width under it; back to left heavy.
		 */
		views: function (sec, d) {
			var C = CBN, v = this, out = [], deep = 0;
			if (!v.nodes.length) return 'skipped: no call tree in this page';
			var tools = sec.querySelectorAll('.seg button');
			function click(mode) {
				Array.prototype.filter.call(tools, function (b) {
					return b.getAttribute('data-mode') === mode; })[0].click();
			}
			var f = v.flame, W = f.width(), tot = v.nodes[0].total;
			v.nodes.forEach(function (x) { if (x.total / tot * W >= 3 && x.depth > deep) deep = x.depth; });
			C.check(f.rows === deep + 1, 'left heavy: ' + f.rows + ' rows for frames ' + (deep + 1) +
				' deep at 3 pixels or more');
			out.push('left_rows=' + f.rows);
			if (Array.prototype.some.call(tools, function (b) { return b.getAttribute('data-mode') === 'time'; })) {
				click('time');
				var tb = v.flame.boxes();
				C.check(v.mode === 'time' && tb.length > 0, 'time order drew nothing');
				/* each frame stands on its caller, over the caller's time */
				tb.forEach(function (b) {
					if (!b.d) return;
					var up = v.nodes[b.node.parent];
					C.check(tb.some(function (a) { return a.d === b.d - 1 && a.node === up &&
						a.start <= b.start && a.end >= b.end; }), 'time order: ' + b.node.name +
						' not on its caller ' + (up && up.name));
				});
				out.push('time_boxes=' + v.flame.boxes().length + ' time_rows=' + v.flame.rows);
			}
			click('sandwich');
			var sw = v.sandwiched;
			C.check(sw, 'no sandwich');
			var r0 = sw.callees.rectOf(sw.trees.callees[0]);
			C.check(r0 && r0.x === 0 && Math.abs(r0.w - sw.callees.width()) < 1, 'sandwich root not full width');
			out.push('sandwich=' + sw.fn + ' callers=' + sw.trees.callers.length + ' callees=' +
				sw.trees.callees.length);
			click('left');
			return out.join(' ');
		}
	}
});

/* A run of several programs: the CPU by program and by the module its time
 * was in, as perf report --sort comm,dso (the text report's Programs). */
function cpuPrograms(el, r, cpu) {
	var C = CBN, rows = [];
	var progs = (r.programs || []).filter(function (g) { return g.cpu_ns > 0; });
	if (progs.length < 2) return;
	progs.forEach(function (g) {
		rows.push({ name: g.name, cpu_ns: g.cpu_ns, processes: g.processes, wall_ns: g.wall_ns,
			module: '', title: g.exe });
		(g.modules || []).slice(0, 4).forEach(function (m) {
			rows.push({ name: g.name, module: m.name, cpu_ns: m.cpu_ns, processes: null, wall_ns: null });
		});
	});
	el.appendChild(C.el('h2', {}, 'Programs and modules'));
	var t = C.table(rows, [
		{ key: 'name', label: 'Program', name: 1 },
		{ key: 'module', label: 'Module', name: 1 },
		{ key: 'cpu_ns', label: 'CPU', num: 1, fmt: C.ns },
		{ key: 'share', label: 'Share', num: 1, get: function (x) { return x.cpu_ns / cpu; }, fmt: C.pct },
		{ key: 'processes', label: 'Processes', num: 1, fmt: function (v) { return v == null ? '' : C.count(v); } },
		{ key: 'wall_ns', label: 'Wall', num: 1, fmt: function (v) { return v == null ? '' : C.ns(v); } }
	], { sort: 'cpu_ns' });
	t.el.setAttribute('data-table', 'programs');
	el.appendChild(t.el);
}
