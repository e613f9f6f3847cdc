/*
 * lib_flame.js — the flame graph widget (canvas): the merged call tree from
 * html_data.c ("tree.nodes": parent, name, total, self, inlined per node),
 * root at the bottom (flame) or top (icicle), click zooms, search highlights,
 * hover shows the frame.  CBN.flameTree() also gives callers and callees.
 */
'use strict';
(function (C) {
	var ROW = 17;

	/* The flat node array as objects with children, heaviest first. */
	C.flameTree = function (tree, names) {
		var a = (tree && tree.nodes) || [], n = [], i;
		for (i = 0; i + 4 < a.length; i += 5) {
			/* nm[3]: what the box shows when it is not the whole name (the
			 * operator a frame enters, a function without its parameters) */
			var nm = names[a[i + 1]] || ['?', '', 0];
			n.push({ id: n.length, parent: a[i], name: (nm[3] || nm[0]) + (a[i + 4] ? ' [inlined]' : ''),
				fname: nm[0], file: nm[1], line: nm[2], total: a[i + 2], self: a[i + 3],
				kids: [], depth: 0 });
		}
		n.forEach(function (x) {
			if (x.parent >= 0 && n[x.parent]) { n[x.parent].kids.push(x); x.depth = n[x.parent].depth + 1; }
		});
		n.forEach(function (x) { x.kids.sort(function (p, q) { return q.total - p.total; }); });
		return n;
	};

	/* The --json report's "call_tree" (flat objects, parents first) as the
	 * same node objects; [] when the report has none (older reports). */
	C.flameFromCallTree = function (ct) {
		var a = (ct && ct.nodes) || [], n = [];
		a.forEach(function (x, i) {
			var nm = x['function'] || '?';
			n.push({ id: i, parent: x.parent, name: nm + (x.inlined ? ' [inlined]' : ''),
				fname: nm, file: x.file, line: x.line, total: x.total_ns || 0,
				self: x.self_ns || 0, kids: [], depth: 0, inlined: !!x.inlined });
		});
		n.forEach(function (x) {
			if (x.parent >= 0 && x.parent < x.id) {
				n[x.parent].kids.push(x);
				x.depth = n[x.parent].depth + 1;
			}
		});
		n.forEach(function (x) { x.kids.sort(function (p, q) { return q.total - p.total; }); });
		return n;
	};

	/*
	 * Two trees matched by path (the names from the root down): every node
	 * of cur gets base (the matching base node's total, 0 when the path is
	 * new) and delta; returns the base nodes whose path cur lacks (their
	 * time vanished or moved), heaviest first, outermost only.
	 */
	C.diffTrees = function (base, cur) {
		var key = {}, seen = {}, gone = [];
		function path(nodes, x) {
			return x.path || (x.path = (x.parent >= 0 && nodes[x.parent]
				? path(nodes, nodes[x.parent]) + '\u0001' : '') + x.name);
		}
		base.forEach(function (x) { key[path(base, x)] = x; });
		cur.forEach(function (x) {
			var b = key[path(cur, x)];
			x.base = b ? b.total : 0;
			x.delta = x.total - x.base;
			if (b) seen[b.path] = 1;
		});
		base.forEach(function (x) {
			var p = x.parent >= 0 ? base[x.parent] : null;
			if (!seen[x.path] && (!p || seen[p.path])) gone.push(x);
		});
		return gone.sort(function (x, y) { return y.total - x.total; });
	};

	/* Callers and callees of function name: from every node of that name,
	 * its parent and its children, summed by name (a recursive function's
	 * nodes inside each other count more than once; the text says so). */
	C.callersCallees = function (nodes, fname) {
		var up = {}, down = {};
		nodes.forEach(function (x) {
			if (x.fname !== fname) return;
			var p = nodes[x.parent];
			if (p && p.parent >= 0) up[p.fname] = (up[p.fname] || 0) + x.total;
			x.kids.forEach(function (k) { down[k.fname] = (down[k.fname] || 0) + k.total; });
		});
		function list(o) {
			return Object.keys(o).map(function (k) { return { name: k, ns: o[k] }; })
				.sort(function (a, b) { return b.ns - a.ns; });
		}
		return { callers: list(up), callees: list(down) };
	};

	/* opts: {onselect(node), diff: {name: -1..1} or function (node) -> -1..1
	 * (null: no data) for red/blue colouring, describe(node): more text for
	 * the frame under the pointer} */
	C.flame = function (el, nodes, opts) {
		opts = opts || {};
		var canvas = C.el('canvas'), info = C.el('div', { cls: 'flame-info' }, '\u00a0');
		var search = C.el('input', { type: 'search', placeholder: 'search functions (regexp)\u2026' });
		var icicle = false, zoom = nodes[0], match = null, rects = [], maxd = 0, self = {}, drawnW = 0;
		var btnReset = C.el('button', { onclick: function () { self.zoomTo(nodes[0]); } }, 'Reset zoom');
		var btnFlip = C.el('button', { onclick: function () { icicle = !icicle; draw(); } }, 'Flame / icicle');
		var found = C.el('span', { cls: 'muted' });
		nodes.forEach(function (x) { if (x.depth > maxd) maxd = x.depth; });
		el.appendChild(C.el('div', { cls: 'tools' }, search, btnReset, btnFlip, found));
		el.appendChild(canvas);
		el.appendChild(info);

		function width() { return Math.max(300, el.clientWidth || 1200); }
		function draw() {
			var w = drawnW = width(), h = (maxd + 1) * ROW, dpr = window.devicePixelRatio || 1, ctx;
			canvas.width = w * dpr; canvas.height = h * dpr;
			canvas.style.height = h + 'px';
			ctx = canvas.getContext('2d');
			ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
			ctx.clearRect(0, 0, w, h);
			ctx.font = '11px ui-monospace, monospace';
			ctx.textBaseline = 'middle';
			rects = [];
			if (!nodes.length || !zoom.total) return;
			var scale = w / zoom.total, matched = 0;
			/* the zoomed node's ancestors, full width */
			for (var a = zoom; a; a = a.parent >= 0 ? nodes[a.parent] : null)
				box(ctx, a, 0, w, h);
			(function walk(x, x0) {
				var off = x0;
				x.kids.forEach(function (k) {
					var kw = k.total * scale;
					if (kw >= 0.4) { box(ctx, k, off, kw, h); walk(k, off); }
					off += kw;
				});
			})(zoom, 0);
			if (match) {
				/* matched share: outermost matches only, so nesting is not counted twice */
				(function m(x, inside) {
					var hit = !inside && match.test(x.name);
					if (hit) matched += x.total;
					x.kids.forEach(function (k) { m(k, inside || hit); });
				})(nodes[0], false);
				found.textContent = 'matched ' + C.pct(matched / nodes[0].total) + ' of the total';
				self.matched = matched / nodes[0].total;
			} else found.textContent = '';
		}
		function box(ctx, x, x0, wd, h) {
			var y = icicle ? x.depth * ROW : h - (x.depth + 1) * ROW;
			var col = x.name === '(other)' ? '#ccc' : typeof opts.diff === 'function'
				? diffColor(opts.diff(x)) : opts.diff ? diffColor(opts.diff[x.fname])
				: C.color(x.fname);
			if (match && match.test(x.name)) col = '#e64980';
			ctx.fillStyle = col;
			ctx.fillRect(x0, y, Math.max(wd - 0.5, 0.5), ROW - 1);
			if (wd > 30) {
				ctx.fillStyle = '#000';
				ctx.save(); ctx.beginPath(); ctx.rect(x0, y, wd - 2, ROW); ctx.clip();
				ctx.fillText(x.name, x0 + 3, y + ROW / 2);
				ctx.restore();
			}
			rects.push({ x: x0, y: y, w: wd, node: x });
		}
		function diffColor(d) {
			if (d == null) return '#ddd';
			var v = Math.min(1, Math.abs(d)), l = 92 - 40 * v;
			return d > 0 ? 'hsl(0,75%,' + l + '%)' : 'hsl(220,75%,' + l + '%)';
		}
		function at(ev) {
			/* the CSS may stretch the canvas until the redraw: back to drawn pixels */
			var r = canvas.getBoundingClientRect(), i, y = ev.clientY - r.top,
				x = (ev.clientX - r.left) * (r.width ? drawnW / r.width : 1);
			for (i = rects.length - 1; i >= 0; i--) {
				var b = rects[i];
				if (x >= b.x && x < b.x + b.w && y >= b.y && y < b.y + ROW) return b.node;
			}
			return null;
		}
		function describe(x) {
			return x.name + (x.fname && x.name.indexOf(x.fname) !== 0 ? '  [' + x.fname + ']' : '') +
				'  total ' + C.ns(x.total) + ' (' + C.pct(x.total / nodes[0].total) +
				')  self ' + C.ns(x.self) + (x.file ? '  ' + x.file.split('/').pop() + ':' + x.line : '') +
				(opts.describe ? '  ' + opts.describe(x) : '');
		}
		canvas.addEventListener('mousemove', function (ev) {
			var x = at(ev);
			info.textContent = x ? describe(x) : '\u00a0';
			canvas.title = x ? describe(x) : '';
			canvas.style.cursor = x ? 'pointer' : '';
		});
		canvas.addEventListener('click', function (ev) {
			var x = at(ev);
			if (!x) return;
			self.zoomTo(x);
			if (opts.onselect) opts.onselect(x);
		});
		search.addEventListener('input', function () { self.search(search.value); });

		self.zoomTo = function (x) { zoom = x; draw(); info.textContent = describe(x); };
		self.search = function (q) {
			try { match = q ? new RegExp(q, 'i') : null; } catch (e) { match = null; }
			self.matched = 0;
			draw();
		};
		/* where node x is drawn now (for the self-tests), or null */
		self.rectOf = function (x) {
			for (var i = 0; i < rects.length; i++) if (rects[i].node === x) return rects[i];
			return null;
		};
		self.canvas = canvas;
		/* the width the frames were last drawn at: the page's width may
		 * change at any time (a scrollbar shows up when a click fills the
		 * callers/callees below), the redraw follows */
		self.width = function () { return drawnW; };
		self.zoomed = function () { return zoom; };
		self.describe = describe;
		self.colorOf = function (x) { return opts.diff ? (typeof opts.diff === 'function'
			? diffColor(opts.diff(x)) : diffColor(opts.diff[x.fname])) : C.color(x.fname); };
		self.searchBox = search;
		draw();
		/* a vertical scrollbar appearing narrows the box without resizing the
		 * window: redraw at the new width, or the canvas is stretched */
		if (typeof ResizeObserver !== 'undefined')
			new ResizeObserver(function () { if (width() !== drawnW) draw(); }).observe(el);
		else window.addEventListener('resize', draw);
		return self;
	};
})(CBN);
