/*
 * lib_flame.js — the flame graph widget (canvas) and the trees it draws:
 * the merged call tree from html_data.c ("tree.nodes": parent, name,
 * total, self, inlined per node) laid out left-heavy (callees heaviest
 * first) or in time order (the CPU lanes' stacks over time), direct
 * recursion collapsed into one frame, and the sandwich of one function
 * (its callers above it, its callees below).  The canvas is as tall as the
 * stacks wide enough to see (at least a pixel at the zoom drawn), never as
 * the deepest one: a thin deep recursion adds no blank rows.  Click zooms,
 * search highlights, hover shows the frame.
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
		link(n);
		return n;
	};
	function link(n) {
		n.forEach(function (x) {
			if (x.parent >= 0 && n[x.parent]) { n[x.parent].kids.push(x); x.depth = n[x.parent].depth + 1; }
		});
		n.forEach(function (x) { x.kids.sort(function (p, q) { return q.total - p.total; }); });
	}

	/* The --json report's "call_tree" (flat objects, parents first) as the
	 * same node objects; [] when the report has none (older reports). */
	C.flameFromCallTree = function (ct) {
		var a = (ct && ct.nodes) || [], n = [];
		a.forEach(function (x, i) {
			var nm = x['function'] || '?';
			n.push({ id: i, parent: x.parent < i ? x.parent : -1, name: nm + (x.inlined ? ' [inlined]' : ''),
				fname: nm, file: x.file, line: x.line, total: x.total_ns || 0,
				self: x.self_ns || 0, kids: [], depth: 0, inlined: !!x.inlined });
		});
		link(n);
		return n;
	};

	/* A new tree built by merging: node(src, parent) copies a frame under
	 * parent, merged with a sibling of the same name. */
	function builder() {
		var out = [];
		out.node = function (src, parent) {
			var key = src.name, c = parent && parent.by[key];
			if (c) return c;
			c = { id: out.length, parent: parent ? parent.id : -1, name: src.name, fname: src.fname,
				file: src.file, line: src.line, total: 0, self: 0, kids: [], by: {},
				depth: parent ? parent.depth + 1 : 0, rec: 0 };
			out.push(c);
			if (parent) { parent.kids.push(c); parent.by[key] = c; }
			return c;
		};
		out.done = function () {
			out.forEach(function (x) { x.kids.sort(function (p, q) { return q.total - p.total; }); });
			return out;
		};
		return out;
	}

	/*
	 * Direct recursion collapsed: a frame calling its own function is folded
	 * into its caller (its callees become the caller's, merged by name, its
	 * self time the caller's), as the Firefox profiler's "collapse recursion".
	 * Returns the new nodes; map[old id] is the node each old one went to,
	 * and node.rec the deepest recursion folded into it.
	 */
	C.collapseRecursion = function (nodes) {
		var out = builder(), map = [];
		function walk(src, dst, level) {
			map[src.id] = dst;
			if (level > dst.rec) dst.rec = level;
			src.kids.forEach(function (k) {
				if (k.name === src.name) {
					dst.self += k.self;
					walk(k, dst, level + 1);
					return;
				}
				var c = out.node(k, dst);
				c.total += k.total;
				c.self += k.self;
				walk(k, c, 0);
			});
		}
		if (!nodes.length) return { nodes: [], map: map };
		var root = out.node(nodes[0], null);
		root.total = nodes[0].total;
		root.self = nodes[0].self;
		walk(nodes[0], root, 0);
		return { nodes: out.done(), map: map };
	};

	/* The outermost frames of function fname (not inside another of it). */
	function outermost(nodes, fname) {
		var r = [];
		(function walk(x, inside) {
			var hit = x.fname === fname && x.parent >= 0;
			if (hit && !inside) r.push(x);
			x.kids.forEach(function (k) { walk(k, inside || hit); });
		})(nodes[0], false);
		return r;
	}
	/*
	 * The sandwich of function fname: callees, the subtrees under its
	 * outermost frames merged (rooted at fname), and callers, the paths up
	 * from them merged (rooted at fname, its callers as its children).
	 */
	C.sandwich = function (nodes, fname) {
		var tops = outermost(nodes, fname), callees = builder(), callers = builder();
		if (!tops.length) return null;
		var r1 = callees.node(tops[0], null), r2 = callers.node(tops[0], null);
		tops.forEach(function (x) {
			r1.total += x.total; r1.self += x.self;
			r2.total += x.total;
			(function merge(dst, src) {
				src.kids.forEach(function (k) {
					var c = callees.node(k, dst);
					c.total += k.total; c.self += k.self;
					merge(c, k);
				});
			})(r1, x);
			var cur = r2, p = nodes[x.parent];
			while (p && p.parent >= 0) {
				cur = callers.node(p, cur);
				cur.total += x.total;
				p = nodes[p.parent];
			}
			cur.self += x.total;
		});
		return { callees: callees.done(), callers: callers.done() };
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

	/* Left-heavy boxes of a tree: [x, w] as fractions of the root, callees
	 * from the left, heaviest first. */
	C.leftHeavy = function (nodes) {
		var boxes = [];
		if (!nodes.length || !nodes[0].total) return boxes;
		var tot = nodes[0].total;
		(function walk(x, x0) {
			boxes.push({ x: x0, w: x.total / tot, d: x.depth, node: x });
			var off = x0;
			x.kids.forEach(function (k) { walk(k, off); off += k.total / tot; });
		})(nodes[0], 0);
		return boxes;
	};
	/*
	 * Time-order boxes of one CPU lane (timeline slices with "nodes": the
	 * stack each bin was in): each slice's stack drawn over its time, a
	 * frame joined with the one before it when the same frame goes on
	 * without a gap.  nodes: the tree drawn; map: the lane's node (of the
	 * page's tree) -> node drawn, when that is another (recursion folded).
	 */
	C.timeOrder = function (lane, nodes, map, span) {
		var s = lane.slices, nd = lane.nodes || [], open = [], boxes = [], j, k;
		function path(x) {
			var p = [];
			for (; x; x = x.parent >= 0 ? nodes[x.parent] : null) p.push(x);
			return p.reverse();
		}
		for (j = 0, k = 0; j + 2 < s.length; j += 3, k++) {
			var x = map ? map[nd[k]] : nodes[nd[k]], p = x ? path(x) : [], t = s[j], e = s[j] + s[j + 1];
			for (var d = 0; d < p.length; d++) {
				var b = open[d];
				if (b && b.node === p[d] && b.end === t) { b.end = e; continue; }
				open[d] = { node: p[d], start: t, end: e, d: d };
				boxes.push(open[d]);
			}
			open.length = p.length;
		}
		boxes.forEach(function (b) { b.x = b.start / span; b.w = (b.end - b.start) / span; });
		return boxes;
	};

	/*
	 * The widget: el gets the tools (search, reset, flame/icicle, opts.tools
	 * before them), the canvas in a box that scrolls past opts.maxHeight, and
	 * the line that describes the frame under the pointer.
	 * opts: {boxes (default: left-heavy of nodes), icicle, onselect(node),
	 * diff: {name: -1..1} or function (node) -> -1..1 (null: no data) for
	 * red/blue colouring, describe(node): more text, tools: [nodes],
	 * noTools, total (ns of 100 %)}.
	 */
	C.flame = function (el, nodes, opts) {
		opts = opts || {};
		var canvas = C.el('canvas'), info = C.el('div', { cls: 'flame-info' }, '\u00a0');
		var scroller = C.el('div', { cls: 'flame-box' }, canvas);
		var search = C.el('input', { type: 'search', placeholder: 'search functions (regexp)\u2026' });
		var icicle = !!opts.icicle, match = null, rects = [], self = {}, drawnW = 0;
		var boxes = opts.boxes || C.leftHeavy(nodes), v0 = 0, v1 = 1, zoomNode = nodes[0];
		var btnReset = C.el('button', { onclick: function () { self.zoomTo(nodes[0]); } }, 'Reset zoom');
		var btnFlip = C.el('button', { onclick: function () { icicle = !icicle; draw(); },
			title: 'root at the bottom (flame) or at the top (icicle)' }, 'Flame / icicle');
		var found = C.el('span', { cls: 'muted' });
		if (!opts.noTools) {
			var bar = C.el('div', { cls: 'tools' });
			(opts.tools || []).concat([search, btnReset, btnFlip, found]).forEach(function (x) {
				bar.appendChild(x); });
			el.appendChild(bar);
		}
		el.appendChild(scroller);
		el.appendChild(info);
		if (opts.maxHeight) scroller.style.maxHeight = opts.maxHeight;

		function width() { return Math.max(300, el.clientWidth || 1200); }
		function total() { return opts.total || (nodes[0] && nodes[0].total) || 1; }
		function draw() {
			var w = drawnW = width(), dpr = window.devicePixelRatio || 1, ctx, span = v1 - v0, rows = 1;
			var vis = [];
			boxes.forEach(function (b) {
				var x0 = (b.x - v0) / span * w, bw = b.w / span * w;
				if (x0 + bw <= 0 || x0 >= w || bw < 0.3) return;
				vis.push(b);
				/* the stacks that matter: frames a few pixels wide (thinner
				 * towers above them are cut, not given blank rows) */
				if (bw >= 3 && b.d + 1 > rows) rows = b.d + 1;
			});
			var h = rows * ROW;
			canvas.width = w * dpr; canvas.height = h * dpr;
			canvas.style.height = h + 'px';
			ctx = canvas.getContext('2d');
			ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
			ctx.clearRect(0, 0, w, h);
			ctx.font = '11px ui-monospace, monospace';
			ctx.textBaseline = 'middle';
			rects = [];
			self.rows = rows;
			vis.forEach(function (b) {
				if (b.d >= rows) return;
				var x0 = (b.x - v0) / span * w, bw = b.w / span * w;
				if (x0 < 0) { bw += x0; x0 = 0; }
				if (x0 + bw > w) bw = w - x0;
				box(ctx, b, x0, bw, h);
			});
			var matched = 0;
			if (match) {
				/* matched share: outermost matches only, so nesting is not counted twice */
				(function m(x, inside) {
					var hit = !inside && match.test(x.name);
					if (hit) matched += x.total;
					x.kids.forEach(function (k) { m(k, inside || hit); });
				})(nodes[0], false);
				found.textContent = 'matched ' + C.pct(matched / total()) + ' of the total';
				self.matched = matched / total();
			} else found.textContent = '';
			/* a flame graph's root is at the bottom: show it */
			if (!icicle) scroller.scrollTop = scroller.scrollHeight;
		}
		function colorOf(x) {
			return x.name === '(other)' ? '#ccc' : typeof opts.diff === 'function'
				? diffColor(opts.diff(x)) : opts.diff ? diffColor(opts.diff[x.fname]) : C.color(x.fname);
		}
		function box(ctx, b, x0, wd, h) {
			var x = b.node, y = icicle ? b.d * ROW : h - (b.d + 1) * ROW;
			ctx.fillStyle = match && match.test(x.name) ? '#e64980' : colorOf(x);
			ctx.fillRect(x0, y, Math.max(wd - 0.5, 0.5), ROW - 1);
			if (wd > 30) {
				var t = x.name + (x.rec ? ' (\u00d7' + (x.rec + 1) + ' recursion)' : ''), cw = 6.7;
				var fit = Math.floor((wd - 6) / cw);
				ctx.fillStyle = '#000';
				ctx.fillText(t.length > fit ? t.slice(0, Math.max(1, fit - 1)) + '\u2026' : t, x0 + 3, y + ROW / 2);
			}
			rects.push({ x: x0, y: y, w: wd, node: x, box: b });
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
				if (x >= b.x && x < b.x + b.w && y >= b.y && y < b.y + ROW) return b;
			}
			return null;
		}
		function describe(x) {
			return x.name + (x.fname && x.name.indexOf(x.fname) !== 0 ? '  [' + x.fname + ']' : '') +
				(x.rec ? '  (recursion of ' + (x.rec + 1) + ' levels folded)' : '') +
				'  total ' + C.ns(x.total) + ' (' + C.pct(x.total / total()) +
				')  self ' + C.ns(x.self) + (x.file ? '  ' + x.file.split('/').pop() + ':' + x.line : '') +
				(opts.describe ? '  ' + opts.describe(x) : '');
		}
		canvas.addEventListener('mousemove', function (ev) {
			var b = at(ev);
			info.textContent = b ? describe(b.node) : '\u00a0';
			canvas.title = b ? describe(b.node) : '';
			canvas.style.cursor = b ? 'pointer' : '';
		});
		canvas.addEventListener('click', function (ev) {
			var r = at(ev);
			if (!r) return;
			zoomBox(r.box, r.node);
			if (opts.onselect) opts.onselect(r.node);
		});
		function zoomBox(b, node) {
			if (!b) return;
			v0 = b.x; v1 = b.x + b.w;
			if (!(v1 > v0)) { v0 = 0; v1 = 1; }
			zoomNode = node;
			draw();
			info.textContent = describe(node);
		}
		search.addEventListener('input', function () { self.search(search.value); });

		self.zoomTo = function (x) {
			if (x === nodes[0]) { v0 = 0; v1 = 1; zoomNode = x; draw(); info.textContent = describe(x); return; }
			zoomBox(boxes.filter(function (b) { return b.node === x; })[0], x);
		};
		self.search = function (q) {
			try { match = q ? new RegExp(q, 'i') : null; } catch (e) { match = null; }
			self.matched = 0;
			draw();
		};
		/* other boxes (another layout of the same nodes), zoom reset */
		self.setBoxes = function (b, ic) {
			boxes = b;
			if (ic != null) icicle = ic;
			v0 = 0; v1 = 1; zoomNode = nodes[0];
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
		self.zoomed = function () { return zoomNode; };
		self.describe = describe;
		self.colorOf = colorOf;
		self.searchBox = search;
		self.boxes = function () { return boxes; };
		draw();
		/* a vertical scrollbar appearing narrows the box without resizing the
		 * window: redraw at the new width, or the canvas is stretched */
		if (typeof ResizeObserver !== 'undefined')
			new ResizeObserver(function () { if (width() !== drawnW) draw(); }).observe(el);
		else window.addEventListener('resize', draw);
		return self;
	};
})(CBN);
